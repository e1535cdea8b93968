/*
 * inject.acpi= (a test facility): the kernel reads QEMU's ACPI tables
 * rewritten the way real firmware writes them, so that paths QEMU's own
 * tables never take run in the kernel, not only in host tests. Items:
 *
 *   hw_reduced  the FADT's HW_REDUCED_ACPI flag set: no fixed PM timer
 *               (7 of 650 published machines' tables, issue 33);
 *   x2apic      each processor local APIC entry (MADT type 0) written as a
 *               processor local x2APIC entry (type 9), each local APIC NMI
 *               (4) as a local x2APIC NMI (10): an x2APIC-only MADT (7 of 650);
 *   oem         two entries of types 127 (reserved) and 255 (OEM) put first,
 *               whose bytes would read as enabled CPUs if misparsed (4 of 650);
 *   lapic_addr  a local APIC address override (type 5) for the address the
 *               MADT's header gives, as some firmware adds;
 *   bad_hpet    the HPET table's checksum broken: the kernel refuses it.
 *
 * How: acpi_map (arch/acpi.h) is wrapped. When the RSDT or XSDT is first
 * mapped, it is copied into pool[], and so is each table it lists that is
 * to be rewritten; the copy of the root points at the tables' copies (in
 * identity-mapped kernel memory, below 4 GiB) and every copy gets a good
 * checksum (bad_hpet: a bad one). From then on the root's address maps to
 * its copy. A rewritten MADT may be longer than the firmware's, so it
 * cannot take the firmware's address (the next table may start there).
 * The firmware's bytes stay as they were. acpi.dump reads through the same
 * acpi_map, so it prints the tables as the kernel read them and
 * baretrace-acpi sees what the kernel saw.
 */
#include <stdbool.h>
#include <stdint.h>
#include <arch/acpi.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/kstring.h"

#define HDR_LEN			36
#define MADT_ENTRIES		(HDR_LEN + 8)	/* local APIC address, flags */
#define MADT_X2APIC_LEN		16
#define MADT_X2APIC_NMI_LEN	12
#define MADT_LAPIC_ADDR_LEN	12
#define POOL_LEN		16384u
#define MAX_COPIES		8	/* XSDT, RSDT, MADT, FADT, HPET */

static const char *const item_choices[] = {
	"hw_reduced", "x2apic", "oem", "lapic_addr", "bad_hpet", NULL
};
static char items[64];		/* inject.acpi=, comma list of item_choices */
CMDLINE_OPTION(inject_acpi, .name = "inject.acpi", .type = OPT_LIST, .var = items,
	       .size = sizeof(items), .choices = item_choices,
	       .help = "test facility: read the ACPI tables rewritten: hw_reduced, x2apic (an "
		       "x2APIC-only MADT), oem (reserved/OEM MADT entries), lapic_addr, bad_hpet");

struct copy {
	uint64_t phys;		/* the firmware table's address */
	uint32_t len;		/* the copy's length */
	uint8_t *data;		/* in pool[]; its address is its physical address */
	bool root;		/* an RSDT or XSDT: its firmware address maps here */
};

static uint8_t pool[POOL_LEN] __aligned(16);	/* the copies, one after another */
static uint32_t pool_used;			/* bytes of pool[] taken */
static struct copy copies[MAX_COPIES];
static unsigned ncopies;
static const void *(*firmware_map)(uint64_t phys, uint64_t len);	/* the kernel's own */

static bool want(const char *item)
{
	return cmdline_list_has(items, item);
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static void fix_checksum(uint8_t *t, uint32_t len)
{
	uint8_t sum = 0;

	t[9] = 0;
	for (uint32_t i = 0; i < len; i++)
		sum += t[i];
	t[9] = (uint8_t)-sum;
}

/* The MADT t[0..len) rewritten into out[0..cap); its length, or 0 (no room). */
static uint32_t rewrite_madt(const uint8_t *t, uint32_t len, uint8_t *out, uint32_t cap)
{
	uint32_t o = MADT_ENTRIES, off = MADT_ENTRIES;
	unsigned lapics = 0, nmis = 0;

#define ROOM(n)	do { if (o + (n) > cap) return 0; } while (0)
	if (cap < MADT_ENTRIES)
		return 0;
	memcpy(out, t, MADT_ENTRIES);
	if (want("oem")) {
		/* Read as type 0, either would be an enabled CPU, apic_id 0x77. */
		static const uint8_t reserved[8] = { 127, 8, 0x77, 0x77, 1, 0, 0, 0 };
		static const uint8_t oem[16] = { 255, 16, 0x77, 0x77, 1, 0, 0, 0,
						 0x77, 0, 0, 0, 1, 0, 0, 0 };
		ROOM(sizeof(reserved) + sizeof(oem));
		memcpy(out + o, reserved, sizeof(reserved));
		o += sizeof(reserved);
		memcpy(out + o, oem, sizeof(oem));
		o += sizeof(oem);
	}
	if (want("lapic_addr")) {
		ROOM(MADT_LAPIC_ADDR_LEN);
		memset(out + o, 0, MADT_LAPIC_ADDR_LEN);
		out[o] = ACPI_MADT_LAPIC_ADDR;
		out[o + 1] = MADT_LAPIC_ADDR_LEN;
		put64(out + o + 4, get32(t + HDR_LEN));
		o += MADT_LAPIC_ADDR_LEN;
	}
	while (off + 2 <= len) {
		const uint8_t *e = t + off;
		uint8_t type = e[0], elen = e[1];

		if (elen < 2 || off + elen > len)
			break;		/* the parser says so on the firmware's own */
		if (want("x2apic") && type == ACPI_MADT_LAPIC && elen >= 8) {
			ROOM(MADT_X2APIC_LEN);
			memset(out + o, 0, MADT_X2APIC_LEN);
			out[o] = ACPI_MADT_X2APIC;
			out[o + 1] = MADT_X2APIC_LEN;
			put32(out + o + 4, e[3]);		/* x2APIC id */
			put32(out + o + 8, get32(e + 4));	/* flags */
			put32(out + o + 12, e[2]);		/* ACPI processor UID */
			o += MADT_X2APIC_LEN;
			lapics++;
		} else if (want("x2apic") && type == ACPI_MADT_LAPIC_NMI && elen >= 6) {
			ROOM(MADT_X2APIC_NMI_LEN);
			memset(out + o, 0, MADT_X2APIC_NMI_LEN);
			out[o] = ACPI_MADT_X2APIC_NMI;
			out[o + 1] = MADT_X2APIC_NMI_LEN;
			memcpy(out + o + 2, e + 3, 2);		/* flags */
			put32(out + o + 4, e[2] == 0xFF ? 0xFFFFFFFFu : e[2]);
			out[o + 8] = e[5];			/* LINT# */
			o += MADT_X2APIC_NMI_LEN;
			nmis++;
		} else {
			ROOM(elen);
			memcpy(out + o, e, elen);
			o += elen;
		}
		off += elen;
	}
#undef ROOM
	if (want("x2apic"))
		printk("acpi: inject.acpi=x2apic: %u local APIC and %u local APIC NMI entries "
		       "written as x2APIC ones\n", lapics, nmis);
	return o;
}

/* Room for len bytes in pool[], or NULL. */
static uint8_t *take(uint32_t len)
{
	uint8_t *p = pool + pool_used;

	if (ncopies == MAX_COPIES || len > POOL_LEN - pool_used)
		return NULL;
	pool_used += (len + 15) & ~15u;
	return p;
}

/* The copy of the table at phys, made now if it is one to rewrite; or NULL. */
static const struct copy *table_copy(uint64_t phys)
{
	const struct acpi_sdt_header *h = firmware_map(phys, HDR_LEN);
	const uint8_t *t;
	struct copy *c;
	uint32_t len;
	bool madt, fadt, hpet;

	for (unsigned i = 0; i < ncopies; i++)
		if (copies[i].phys == phys && !copies[i].root)
			return &copies[i];
	if (!h || ncopies == MAX_COPIES)
		return NULL;
	madt = !memcmp(h->signature, "APIC", 4) &&
	       (want("x2apic") || want("oem") || want("lapic_addr"));
	fadt = !memcmp(h->signature, "FACP", 4) && want("hw_reduced");
	hpet = !memcmp(h->signature, "HPET", 4) && want("bad_hpet");
	len = h->length;
	if ((!madt && !fadt && !hpet) || len < (madt ? MADT_ENTRIES : HDR_LEN) ||
	    !(t = firmware_map(phys, len)) || !acpi_checksum_ok(t, len) ||
	    (fadt && len < ACPI_FADT_FLAGS + 4))
		return NULL;	/* not to rewrite, or the parser refuses it and says why */
	c = &copies[ncopies];
	c->data = pool + pool_used;
	if (madt)
		len = rewrite_madt(t, len, c->data, POOL_LEN - pool_used);
	else if (len <= POOL_LEN - pool_used)
		memcpy(c->data, t, len);
	else
		len = 0;
	if (!len || !take(len)) {
		printk("acpi: inject.acpi=%s: no room to rewrite %.4s at 0x%llx; read as it is\n",
		       items, h->signature, (unsigned long long)phys);
		return NULL;
	}
	if (fadt) {
		put32(c->data + ACPI_FADT_FLAGS,
		      get32(c->data + ACPI_FADT_FLAGS) | ACPI_FADT_FLAG_HW_REDUCED);
		printk("acpi: inject.acpi=hw_reduced: the FADT at 0x%llx read with HW_REDUCED_ACPI "
		       "set\n", (unsigned long long)phys);
	}
	put32(c->data + 4, len);
	fix_checksum(c->data, len);
	if (hpet) {
		c->data[9] ^= 0x5A;
		printk("acpi: inject.acpi=bad_hpet: the HPET table at 0x%llx read with a bad "
		       "checksum\n", (unsigned long long)phys);
	}
	c->phys = phys;
	c->len = len;
	c->root = false;
	ncopies++;
	return c;
}

/* The root at phys copied, pointing at the tables' copies; or NULL. */
static const struct copy *root_copy(uint64_t phys, const struct acpi_sdt_header *h)
{
	unsigned esize = h->signature[0] == 'X' ? 8 : 4;
	uint32_t len = h->length;
	const uint8_t *t = firmware_map(phys, len);
	struct copy *c;

	if (len < HDR_LEN || !t || !acpi_checksum_ok(t, len) || ncopies == MAX_COPIES)
		return NULL;	/* the parser says why, or there is no room: as it is */
	c = &copies[ncopies];
	if (!(c->data = take(len)))
		return NULL;
	memcpy(c->data, t, len);
	c->phys = phys;
	c->len = len;
	c->root = true;
	ncopies++;
	for (uint32_t off = HDR_LEN; off + esize <= len; off += esize) {
		uint64_t e = esize == 8 ? get64(c->data + off) : get32(c->data + off);
		const struct copy *tc = table_copy(e);

		if (tc && esize == 8)
			put64(c->data + off, (uint64_t)(uintptr_t)tc->data);
		else if (tc)
			put32(c->data + off, (uint32_t)(uintptr_t)tc->data);
	}
	fix_checksum(c->data, len);
	return c;
}

/* acpi_map, injecting: only table starts are mapped (check_table, acpi.dump). */
static const void *map_injected(uint64_t phys, uint64_t len)
{
	const struct acpi_sdt_header *h;
	const struct copy *c = NULL;

	for (unsigned i = 0; i < ncopies && !c; i++)
		if (copies[i].root && copies[i].phys == phys)
			c = &copies[i];
	h = c ? NULL : firmware_map(phys, HDR_LEN);
	if (h && (!memcmp(h->signature, "RSDT", 4) || !memcmp(h->signature, "XSDT", 4)))
		c = root_copy(phys, h);
	if (c)
		return len <= c->len ? c->data : NULL;
	return firmware_map(phys, len);
}

void acpi_inject_init(void)
{
	if (!items[0])
		return;
	firmware_map = acpi_map;
	acpi_map = map_injected;
}
