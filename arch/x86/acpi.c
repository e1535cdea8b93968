/*
 * ACPI table discovery (ACPI 6.x, chapter 5.2).
 *
 *   RSDP --(rev 0)--> RSDT: 32-bit pointers to tables
 *        --(rev 2+)-> XSDT: 64-bit pointers to tables
 *
 * Firmware tables are input like any other: every table's length is
 * bounds-checked and its checksum verified before a single field is used.
 * A table that fails is printed as bad and skipped; the rest still count.
 * Physical memory is identity-mapped, so a physical address is a pointer,
 * but only below acpi_mapped_limit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <arch/acpi.h>
#include "kernel/console.h"
#include "lib/format.h"
#include "kernel/kstring.h"

#define RSDP_SIG		"RSD PTR "
#define RSDP_V1_LEN		20
#define RSDP_V2_LEN		36
#define TABLE_MAX_LEN		(16u << 20)

#define MADT_CPU_ENABLED	(1u << 0)
#define MADT_CPU_ONLINE_CAPABLE	(1u << 1)

/* FADT field offsets (ACPI 6.4 table 5.9). */
#define FADT_PM_TMR_BLK		76
#define FADT_PM_TMR_LEN		91
#define FADT_RESET_REG		116
#define FADT_RESET_VALUE	128
#define FADT_X_PM_TMR_BLK	208
#define FADT_FLAG_TMR_VAL_EXT	(1u << 8)
#define FADT_FLAG_RESET_REG_SUP	(1u << 10)

/* HPET table field offsets (IA-PC HPET specification 1.0a, table 3). */
#define HPET_TBL_ADDRESS	40	/* GAS */
#define HPET_TBL_NUMBER		52
#define HPET_TBL_MIN_TICK	53
#define HPET_MMIO_ALIGN		0x3FFu	/* its 1 KiB register block is aligned */

/* SPCR field offsets (Microsoft "Serial Port Console Redirection Table", rev 2-4). */
#define SPCR_INTERFACE		36
#define SPCR_BASE		40	/* GAS */
#define SPCR_BAUD		58
#define SPCR_CLOCK		76	/* rev 3+ */
#define SPCR_PRECISE_BAUD	80	/* rev 4+ */
#define SPCR_TYPE_16550		0x00	/* full 16550 */
#define SPCR_TYPE_16450		0x01	/* 16550 subset */
#define SPCR_TYPE_16550_GAS	0x12	/* 16550-compatible, GAS gives the access width */

/* MCFG (PCI Firmware specification 3.0, 4.1.2): 8 reserved bytes, then entries. */
#define MCFG_ENTRIES		44
#define MCFG_ENTRY_LEN		16

struct acpi_info acpi;
uint64_t acpi_mapped_limit = 0x100000000ull;	/* raised once paging maps more */

static uint8_t rd8(const uint8_t *p) { return *p; }
static uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static void reportf(void (*report)(const char *), const char *fmt, ...) __printf(2, 3);
static void reportf(void (*report)(const char *), const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	kvsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	report(msg);
}

bool acpi_checksum_ok(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	for (uint32_t i = 0; i < len; i++)
		sum += b[i];
	return sum == 0;
}

static bool mapped(uint64_t phys, uint64_t len)
{
	return phys && phys + len >= phys && phys + len <= acpi_mapped_limit;
}

/* The kernel's view: identity-mapped physical memory below acpi_mapped_limit. */
static const void *map_identity(uint64_t phys, uint64_t len)
{
	return mapped(phys, len) ? (const void *)(uintptr_t)phys : NULL;
}

const void *(*acpi_map)(uint64_t phys, uint64_t len) = map_identity;

/* Validate the table at phys; returns it or NULL (and says why). */
static const struct acpi_sdt_header *check_table(uint64_t phys, struct acpi_table_ref *ref,
						 void (*report)(const char *))
{
	const struct acpi_sdt_header *h;
	const char *why = NULL;

	memset(ref, 0, sizeof(*ref));
	ref->phys = phys;
	h = acpi_map(phys, sizeof(*h));
	if (!h) {
		memcpy(ref->signature, "????", 4);
		reportf(report, "acpi: table at 0x%llx is outside mapped memory; skipped",
			(unsigned long long)phys);
		return NULL;
	}
	for (int i = 0; i < 4; i++) {
		char c = h->signature[i];
		ref->signature[i] = (c >= ' ' && c <= '~') ? c : '?';
	}
	ref->length = h->length;
	if (h->length < sizeof(*h) || h->length > TABLE_MAX_LEN)
		why = "implausible length";
	else if (acpi_map(phys, h->length) != h)
		why = "runs outside mapped memory";
	else if (!acpi_checksum_ok(h, h->length))
		why = "bad checksum";
	if (why) {
		reportf(report, "acpi: table=%s addr=0x%llx len=%u %s; skipped",
			ref->signature, (unsigned long long)phys, h->length, why);
		return NULL;
	}
	ref->valid = true;
	reportf(report, "acpi: table=%s addr=0x%llx len=%u rev=%u oem=%.6s ok",
		ref->signature, (unsigned long long)phys, h->length, h->revision,
		h->oem_id);
	return h;
}

static bool add_cpu(struct acpi_info *info, uint32_t apic_id, uint32_t uid,
		    uint32_t flags, bool x2, void (*report)(const char *))
{
	if ((!x2 && apic_id == 0xFF) || apic_id == 0xFFFFFFFFu) {
		reportf(report, "acpi: madt cpu uid=%u has broadcast apic_id=0x%x; skipped",
			uid, apic_id);
		info->cpu_skipped++;
		return false;
	}
	struct acpi_cpu *c = NULL;

	for (unsigned i = 0; i < info->cpu_count && !c; i++) {
		if (info->cpus[i].apic_id != apic_id)
			continue;
		info->cpu_skipped++;
		/*
		 * Firmware that lists a CPU twice (an xAPIC and an x2APIC entry)
		 * may mark only one of them enabled: that one describes the CPU.
		 */
		if (info->cpus[i].enabled || !(flags & MADT_CPU_ENABLED)) {
			reportf(report, "acpi: madt cpu uid=%u repeats apic_id=%u; skipped",
				uid, apic_id);
			return false;
		}
		reportf(report, "acpi: madt cpu uid=%u repeats apic_id=%u, enabled where "
			"uid=%u was not; this entry kept", uid, apic_id, info->cpus[i].uid);
		c = &info->cpus[i];
	}
	/*
	 * Full: an enabled CPU takes the place of a disabled one kept before it
	 * (firmware lists hot-plug placeholders, and may list them first: QEMU
	 * with maxcpus=258 lists 258); that one is then the entry over the limit.
	 */
	if (!c && info->cpu_count == ACPI_MAX_CPUS) {
		for (unsigned i = 0; i < info->cpu_count && !c && (flags & MADT_CPU_ENABLED); i++)
			if (!info->cpus[i].enabled)
				c = &info->cpus[i];
		info->cpu_skipped++;
		info->cpu_over++;
		if (!c) {
			info->cpu_over_enabled += (flags & MADT_CPU_ENABLED) != 0;
			return false;
		}
	}
	if (!c)
		c = &info->cpus[info->cpu_count++];
	c->apic_id = apic_id;
	c->uid = uid;
	c->enabled = flags & MADT_CPU_ENABLED;
	c->online_capable = flags & MADT_CPU_ONLINE_CAPABLE;
	c->x2apic = x2;
	return true;
}

/* The length a known MADT entry type needs for the fields read; 0 for types not read. */
static uint8_t madt_min_len(uint8_t type)
{
	switch (type) {
	case ACPI_MADT_LAPIC:		return 8;
	case ACPI_MADT_IOAPIC:		return 12;
	case ACPI_MADT_OVERRIDE:	return 10;
	case ACPI_MADT_LAPIC_NMI:	return 6;
	case ACPI_MADT_LAPIC_ADDR:	return 12;
	case ACPI_MADT_X2APIC:		return 16;
	case ACPI_MADT_X2APIC_NMI:	return 12;
	default:			return 0;
	}
}

static void parse_madt(const struct acpi_sdt_header *h, struct acpi_info *info,
		       void (*report)(const char *))
{
	const uint8_t *p = (const uint8_t *)h;
	uint32_t off = sizeof(*h) + 8;
	unsigned enabled = 0;

	if (h->length < off) {
		reportf(report, "acpi: madt too short; ignored");
		return;
	}
	info->has_madt = true;
	info->lapic_addr = rd32(p + sizeof(*h));
	info->madt_flags = rd32(p + sizeof(*h) + 4);
	while (off + 2 <= h->length) {
		uint8_t type = rd8(p + off), len = rd8(p + off + 1);
		const uint8_t *e = p + off;

		if (len < 2 || off + len > h->length) {
			reportf(report, "acpi: madt entry at offset %u has bad length %u; "
				"rest of the MADT ignored", off, len);
			break;
		}
		if (len < madt_min_len(type)) {
			/* Its length still says where the next entry starts. */
			reportf(report, "acpi: madt entry type %u at offset %u is %u bytes, "
				"shorter than its fields' %u; skipped", type, off, len,
				madt_min_len(type));
			info->madt_short++;
			off += len;
			continue;
		}
		switch (type) {
		case ACPI_MADT_LAPIC:
			add_cpu(info, rd8(e + 3), rd8(e + 2), rd32(e + 4), false, report);
			break;
		case ACPI_MADT_X2APIC:
			add_cpu(info, rd32(e + 4), rd32(e + 12), rd32(e + 8), true, report);
			break;
		case ACPI_MADT_IOAPIC:
			if (info->ioapic_count < ACPI_MAX_IOAPICS) {
				struct acpi_ioapic *io = &info->ioapics[info->ioapic_count++];
				io->id = rd8(e + 2);
				io->addr = rd32(e + 4);
				io->gsi_base = rd32(e + 8);
			}
			break;
		case ACPI_MADT_OVERRIDE:
			if (info->override_count < ACPI_MAX_OVERRIDES) {
				struct acpi_override *o = &info->overrides[info->override_count++];
				o->bus = rd8(e + 2);
				o->source = rd8(e + 3);
				o->gsi = rd32(e + 4);
				o->flags = rd16(e + 8);
			}
			break;
		case ACPI_MADT_LAPIC_NMI:
			if (info->nmi_count < ACPI_MAX_NMIS) {
				struct acpi_nmi *n = &info->nmis[info->nmi_count++];
				n->uid = rd8(e + 2) == 0xFF ? 0xFFFFFFFFu : rd8(e + 2);
				n->flags = rd16(e + 3);
				n->lint = rd8(e + 5);
			}
			break;
		case ACPI_MADT_X2APIC_NMI:
			if (info->nmi_count < ACPI_MAX_NMIS) {
				struct acpi_nmi *n = &info->nmis[info->nmi_count++];
				n->flags = rd16(e + 2);
				n->uid = rd32(e + 4);
				n->lint = rd8(e + 8);
			}
			break;
		case ACPI_MADT_LAPIC_ADDR:
			info->lapic_addr = rd64(e + 4);
			break;
		case ACPI_MADT_NMI_SOURCE:
			break;	/* not needed */
		default:
			/*
			 * Types this parser does not read (IOSAPIC, GIC, the
			 * reserved and OEM ranges): their length says where the
			 * next entry starts, nothing else is assumed.
			 */
			info->madt_other++;
			break;
		}
		off += len;
	}
	for (unsigned i = 0; i < info->cpu_count; i++)
		enabled += info->cpus[i].enabled;
	if (info->cpu_over)
		reportf(report, "acpi: madt lists %u CPUs beyond the %u kept (%u of them enabled); "
			"those are not started", info->cpu_over, ACPI_MAX_CPUS,
			info->cpu_over_enabled);
	reportf(report, "acpi: madt lapic=0x%llx cpus=%u enabled=%u skipped=%u "
		"ioapics=%u overrides=%u nmis=%u other=%u",
		(unsigned long long)info->lapic_addr, info->cpu_count, enabled,
		info->cpu_skipped, info->ioapic_count, info->override_count,
		info->nmi_count, info->madt_other);
}

static void parse_hpet(const struct acpi_sdt_header *h, struct acpi_info *info,
		       void (*report)(const char *))
{
	const uint8_t *p = (const uint8_t *)h;

	if (h->length < HPET_TBL_MIN_TICK + 2) {
		reportf(report, "acpi: hpet table too short; ignored");
		return;
	}
	if (rd8(p + HPET_TBL_ADDRESS) != ACPI_GAS_MEMORY) {
		reportf(report, "acpi: hpet is not memory-mapped; ignored");
		return;
	}
	if (!rd64(p + HPET_TBL_ADDRESS + 4) || (rd64(p + HPET_TBL_ADDRESS + 4) & HPET_MMIO_ALIGN)) {
		/* Firmware whose setup turned the HPET off may leave its table, at 0. */
		reportf(report, "acpi: hpet base=0x%llx is missing or misaligned; ignored",
			(unsigned long long)rd64(p + HPET_TBL_ADDRESS + 4));
		return;
	}
	info->has_hpet = true;
	info->hpet_addr = rd64(p + HPET_TBL_ADDRESS + 4);
	info->hpet_number = rd8(p + HPET_TBL_NUMBER);
	info->hpet_min_tick = rd16(p + HPET_TBL_MIN_TICK);
	reportf(report, "acpi: hpet base=0x%llx number=%u min_tick=%u",
		(unsigned long long)info->hpet_addr, info->hpet_number,
		info->hpet_min_tick);
}

static void parse_fadt(const struct acpi_sdt_header *h, struct acpi_info *info,
		       void (*report)(const char *))
{
	const uint8_t *p = (const uint8_t *)h;
	uint32_t flags = 0;

	if (h->length < FADT_PM_TMR_LEN + 1) {
		reportf(report, "acpi: fadt too short; ignored");
		return;
	}
	info->has_fadt = true;
	if (h->length >= ACPI_FADT_FLAGS + 4)
		flags = rd32(p + ACPI_FADT_FLAGS);
	if (rd8(p + FADT_PM_TMR_LEN) == 4)
		info->pm_timer_port = rd32(p + FADT_PM_TMR_BLK);
	if (h->length >= FADT_X_PM_TMR_BLK + 12 &&
	    rd8(p + FADT_X_PM_TMR_BLK) == ACPI_GAS_IO &&
	    rd64(p + FADT_X_PM_TMR_BLK + 4) && rd64(p + FADT_X_PM_TMR_BLK + 4) < 0x10000)
		info->pm_timer_port = (uint32_t)rd64(p + FADT_X_PM_TMR_BLK + 4);
	info->pm_timer_32bit = flags & FADT_FLAG_TMR_VAL_EXT;
	if (flags & ACPI_FADT_FLAG_HW_REDUCED) {
		/* ACPI 6.4 5.2.9: OSPM ignores the fixed-hardware fields, timer included. */
		info->hw_reduced = true;
		info->pm_timer_port = 0;
		reportf(report, "acpi: fadt hardware-reduced ACPI: no PM timer, no fixed hardware");
	}
	if ((flags & FADT_FLAG_RESET_REG_SUP) && h->length >= FADT_RESET_VALUE + 1) {
		memcpy(&info->reset_reg, p + FADT_RESET_REG, sizeof(info->reset_reg));
		info->reset_value = rd8(p + FADT_RESET_VALUE);
		info->has_reset_reg = info->reset_reg.address != 0;
	}
	reportf(report, "acpi: fadt pm_timer=0x%x pm_timer_bits=%u reset=%s:0x%llx value=0x%x",
		info->pm_timer_port, info->pm_timer_32bit ? 32 : 24,
		!info->has_reset_reg ? "none" :
		info->reset_reg.space_id == ACPI_GAS_IO ? "io" : "mem",
		(unsigned long long)info->reset_reg.address, info->reset_value);
}

/* SPCR's configured-baud-rate codes. */
static uint32_t spcr_baud(uint8_t code)
{
	switch (code) {
	case 3: return 9600;
	case 4: return 19200;
	case 6: return 57600;
	case 7: return 115200;
	default: return 0;	/* 0 = "as is"; others are reserved */
	}
}

static void parse_spcr(const struct acpi_sdt_header *h, struct acpi_info *info,
		       void (*report)(const char *))
{
	const uint8_t *p = (const uint8_t *)h;
	uint8_t type;

	if (h->length < SPCR_BAUD + 1) {
		reportf(report, "acpi: spcr table too short; ignored");
		return;
	}
	type = rd8(p + SPCR_INTERFACE);
	memcpy(&info->spcr_addr, p + SPCR_BASE, sizeof(info->spcr_addr));
	if (type != SPCR_TYPE_16550 && type != SPCR_TYPE_16450 && type != SPCR_TYPE_16550_GAS) {
		reportf(report, "acpi: spcr interface type 0x%x is not a 16550; ignored", type);
		return;
	}
	if ((info->spcr_addr.space_id != ACPI_GAS_IO && info->spcr_addr.space_id != ACPI_GAS_MEMORY) ||
	    !info->spcr_addr.address) {
		reportf(report, "acpi: spcr address space %u addr=0x%llx is not usable; ignored",
			info->spcr_addr.space_id, (unsigned long long)info->spcr_addr.address);
		return;
	}
	info->has_spcr = true;
	info->spcr_interface = type;
	info->spcr_baud = spcr_baud(rd8(p + SPCR_BAUD));
	if (h->revision >= 3 && h->length >= SPCR_CLOCK + 4)
		info->spcr_clock_hz = rd32(p + SPCR_CLOCK);
	if (h->revision >= 4 && h->length >= SPCR_PRECISE_BAUD + 4 && rd32(p + SPCR_PRECISE_BAUD))
		info->spcr_baud = rd32(p + SPCR_PRECISE_BAUD);
	reportf(report, "acpi: spcr type=0x%x addr=%s:0x%llx width=%u baud=%u clock_hz=%u",
		type, info->spcr_addr.space_id == ACPI_GAS_IO ? "io" : "mem",
		(unsigned long long)info->spcr_addr.address,
		info->spcr_addr.bit_width, info->spcr_baud, info->spcr_clock_hz);
}

static void parse_mcfg(const struct acpi_sdt_header *h, struct acpi_info *info,
		       void (*report)(const char *))
{
	const uint8_t *p = (const uint8_t *)h;

	for (uint32_t off = MCFG_ENTRIES; off + MCFG_ENTRY_LEN <= h->length; off += MCFG_ENTRY_LEN) {
		struct acpi_mcfg m = {
			.base = rd64(p + off),
			.segment = rd16(p + off + 8),
			.bus_start = rd8(p + off + 10),
			.bus_end = rd8(p + off + 11),
		};
		if (!m.base || m.bus_end < m.bus_start) {
			reportf(report, "acpi: mcfg entry base=0x%llx buses %u-%u is implausible; skipped",
				(unsigned long long)m.base, m.bus_start, m.bus_end);
			continue;
		}
		if (info->mcfg_count == ACPI_MAX_MCFG)
			break;
		info->mcfg[info->mcfg_count++] = m;
		reportf(report, "acpi: mcfg base=0x%llx segment=%u buses=%u-%u",
			(unsigned long long)m.base, m.segment, m.bus_start, m.bus_end);
	}
}

bool acpi_parse_root(const void *rsdp_ptr, struct acpi_info *info, void (*report)(const char *))
{
	const uint8_t *rsdp = rsdp_ptr;
	struct acpi_table_ref root_ref;
	const struct acpi_sdt_header *root = NULL;
	uint64_t rsdt_phys, xsdt_phys = 0;
	unsigned entry_size, n;

	memset(info, 0, sizeof(*info));
	if (memcmp(rsdp, RSDP_SIG, 8)) {
		reportf(report, "acpi: RSDP signature is wrong; no ACPI");
		return false;
	}
	if (!acpi_checksum_ok(rsdp, RSDP_V1_LEN)) {
		reportf(report, "acpi: RSDP checksum is bad; no ACPI");
		return false;
	}
	info->rsdp_revision = rsdp[15];
	memcpy(info->rsdp, rsdp, rsdp[15] >= 2 ? RSDP_V2_LEN : RSDP_V1_LEN);
	memcpy(info->oem_id, rsdp + 9, 6);
	rsdt_phys = rd32(rsdp + 16);
	if (info->rsdp_revision >= 2) {
		uint32_t len = rd32(rsdp + 20);
		if (len >= RSDP_V2_LEN && acpi_checksum_ok(rsdp, RSDP_V2_LEN))
			xsdt_phys = rd64(rsdp + 24);
		else
			reportf(report, "acpi: RSDP extended checksum is bad; using the RSDT");
	}
	reportf(report, "acpi: rsdp rev=%u oem=%.6s rsdt=0x%llx xsdt=0x%llx",
		info->rsdp_revision, info->oem_id, (unsigned long long)rsdt_phys,
		(unsigned long long)xsdt_phys);

	if (xsdt_phys) {
		root = check_table(xsdt_phys, &root_ref, report);
		if (root && memcmp(root->signature, "XSDT", 4)) {
			reportf(report, "acpi: XSDT pointer leads to '%s'; using the RSDT",
				root_ref.signature);
			root = NULL;
		}
		info->use_xsdt = root != NULL;
	}
	if (!root && rsdt_phys) {
		root = check_table(rsdt_phys, &root_ref, report);
		if (root && memcmp(root->signature, "RSDT", 4)) {
			reportf(report, "acpi: RSDT pointer leads to '%s'; no ACPI",
				root_ref.signature);
			root = NULL;
		}
	}
	if (!root) {
		reportf(report, "acpi: no valid RSDT or XSDT; no ACPI tables used");
		return false;
	}
	info->found = true;
	info->root_phys = root_ref.phys;
	entry_size = info->use_xsdt ? 8 : 4;
	n = (root->length - sizeof(*root)) / entry_size;
	for (unsigned i = 0; i < n && info->table_count < ACPI_MAX_TABLES; i++) {
		const uint8_t *e = (const uint8_t *)root + sizeof(*root) + i * entry_size;
		uint64_t phys = entry_size == 8 ? rd64(e) : rd32(e);
		struct acpi_table_ref *ref = &info->tables[info->table_count++];
		const struct acpi_sdt_header *h = check_table(phys, ref, report);

		if (!h) {
			info->bad_tables++;
			continue;
		}
		if (!memcmp(h->signature, "APIC", 4) && !info->has_madt)
			parse_madt(h, info, report);
		else if (!memcmp(h->signature, "HPET", 4) && !info->has_hpet)
			parse_hpet(h, info, report);
		else if (!memcmp(h->signature, "FACP", 4) && !info->has_fadt)
			parse_fadt(h, info, report);
		else if (!memcmp(h->signature, "SPCR", 4) && !info->has_spcr)
			parse_spcr(h, info, report);
		else if (!memcmp(h->signature, "MCFG", 4) && !info->mcfg_count)
			parse_mcfg(h, info, report);
	}
	return true;
}

static void report_printk(const char *msg)
{
	printk("%s\n", msg);
}

/* The BIOS keeps the RSDP on a 16-byte boundary in the EBDA's first KiB or
 * in 0xE0000..0xFFFFF. */
static const void *scan_bios_area(void)
{
	uint64_t ebda = (uint64_t)(*(volatile uint16_t *)0x40E) << 4;
	const struct { uint64_t start, end; } areas[] = {
		{ ebda, ebda + 1024 }, { 0xE0000, 0x100000 },
	};

	for (unsigned a = 0; a < 2; a++) {
		if (areas[a].start < 0x80000 || areas[a].start >= 0x100000)
			continue;
		for (uint64_t p = areas[a].start; p + RSDP_V1_LEN <= areas[a].end; p += 16)
			if (!memcmp((const void *)p, RSDP_SIG, 8) &&
			    acpi_checksum_ok((const void *)p, RSDP_V1_LEN))
				return (const void *)p;
	}
	return NULL;
}

bool acpi_init(const void *rsdp, unsigned rsdp_len, bool scan_bios)
{
	if (!rsdp || rsdp_len < RSDP_V1_LEN) {
		rsdp = scan_bios ? scan_bios_area() : NULL;
		if (!rsdp) {
			printk("acpi: no RSDP from the boot loader%s; no ACPI\n",
			       scan_bios ? " or in the BIOS area" : "");
			memset(&acpi, 0, sizeof(acpi));
			return false;
		}
		printk("acpi: RSDP found in the BIOS area at 0x%llx\n",
		       (unsigned long long)(uintptr_t)rsdp);
	}
	return acpi_parse_root(rsdp, &acpi, report_printk);
}
