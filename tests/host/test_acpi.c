/*
 * Host tests of ACPI table discovery (arch/x86/acpi.c), built from the
 * kernel's own source under ASan and UBSan.
 *
 * The tables are built in host memory with correct checksums: RSDP, XSDT
 * or RSDT, MADT, HPET, FADT, plus one the kernel does not use. The kernel
 * reads physical addresses as pointers; here a host pointer is the
 * "physical" address, so acpi_mapped_limit (4 GiB in the kernel until
 * paging maps more) is raised to UINT64_MAX.
 *
 * Where tables live:
 *  - by default each table is its own malloc() block of exactly its
 *    length, so any read past a table is an ASan report; these addresses
 *    are above 4 GiB, which only an XSDT can point to;
 *  - RSDT cases need 32-bit addresses: tables are then carved out of a
 *    MAP_32BIT mapping that is poisoned for ASan except for the bytes of
 *    each table, which keeps the same exact bounds checks. If the host
 *    cannot give memory below 4 GiB those cases are skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sanitizer/asan_interface.h>

#include <cmocka.h>

#include <arch/acpi.h>
#include "lib/format.h"

extern uint64_t acpi_mapped_limit;

/* ---- report and printk capture -------------------------------------------- */

#define LOG_MAX		512
#define LOG_LEN		256

static char logbuf[LOG_MAX][LOG_LEN];
static unsigned nlog;

static void report(const char *msg)
{
	assert_true(strlen(msg) < LOG_LEN);
	if (nlog < LOG_MAX)
		snprintf(logbuf[nlog], LOG_LEN, "%s", msg);
	nlog++;
}

/* acpi_init prints through printk; here it lands in the same log. */
int printk(const char *fmt, ...)
{
	char msg[LOG_LEN];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	report(msg);
	return n;
}

/* How many log lines contain all of the given fragments. */
static unsigned log_count(const char *a, const char *b)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nlog && i < LOG_MAX; i++)
		if (strstr(logbuf[i], a) && (!b || strstr(logbuf[i], b)))
			n++;
	return n;
}

static void dump_log(void)
{
	for (unsigned i = 0; i < nlog && i < LOG_MAX; i++)
		print_message("  log: %s\n", logbuf[i]);
}

#define expect_log(a, b)						\
	do {								\
		if (!log_count((a), (b))) {				\
			dump_log();					\
			fail_msg("no report line with \"%s\"%s%s", (a),	\
				 (b) ? " and " : "", (b) ? (b) : "");	\
		}							\
	} while (0)

/* ---- table memory ----------------------------------------------------------- */

#define ARENA_SIZE	(1u << 20)
#define MAX_BLOCKS	512

/*
 * A bump arena: poisoned for ASan except for the bytes handed out, with a
 * poisoned gap after each, so tables sit in address order with exact bounds.
 */
struct arena {
	uint8_t *base;		/* mmap()ed, or NULL if unavailable */
	size_t used;		/* bytes handed out, gaps included */
};

static enum { PLACE_MALLOC, PLACE_LOW, PLACE_ORDERED } place;
static struct arena low;	/* below 4 GiB (MAP_32BIT), for RSDT cases */
static struct arena ordered;	/* anywhere, for address-order cases */
static void *blocks[MAX_BLOCKS];	/* malloc'd tables, freed per test */
static unsigned nblocks;

static void *arena_alloc(struct arena *a, size_t n)
{
	void *p;

	assert_non_null(a->base);
	assert_true(a->used + n + 16 <= ARENA_SIZE);
	p = a->base + a->used;
	ASAN_UNPOISON_MEMORY_REGION(p, n);
	a->used = (a->used + n + 16 + 15) & ~(size_t)15;	/* 16-byte redzone */
	return p;
}

static void *tmem(size_t n)
{
	void *p;

	if (place == PLACE_LOW)
		return arena_alloc(&low, n);
	if (place == PLACE_ORDERED)
		return arena_alloc(&ordered, n);
	p = malloc(n);
	assert_non_null(p);
	assert_true(nblocks < MAX_BLOCKS);
	blocks[nblocks++] = p;
	return p;
}

static uint64_t phys(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static void arena_map(struct arena *a, int extra_flags)
{
	a->base = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | extra_flags, -1, 0);
	if (a->base == MAP_FAILED)
		a->base = NULL;
}

static void arena_reset(struct arena *a)
{
	if (a->base) {
		a->used = 0;
		ASAN_POISON_MEMORY_REGION(a->base, ARENA_SIZE);
	}
}

static void arena_unmap(struct arena *a)
{
	if (a->base) {
		ASAN_UNPOISON_MEMORY_REGION(a->base, ARENA_SIZE);
		munmap(a->base, ARENA_SIZE);
	}
}

static int setup_group(void **state)
{
	(void)state;
	arena_map(&low, MAP_32BIT);
	if (low.base && phys(low.base) + ARENA_SIZE > 0x100000000ull) {
		munmap(low.base, ARENA_SIZE);
		low.base = NULL;
	}
	arena_map(&ordered, 0);
	assert_non_null(ordered.base);
	return 0;
}

static int teardown_group(void **state)
{
	(void)state;
	arena_unmap(&low);
	arena_unmap(&ordered);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	acpi_mapped_limit = UINT64_MAX;
	nlog = 0;
	place = PLACE_MALLOC;
	arena_reset(&low);
	arena_reset(&ordered);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	while (nblocks)
		free(blocks[--nblocks]);
	return 0;
}

/* RSDT cases: tables below 4 GiB, or skip. */
static void need_low_memory(void)
{
	if (!low.base) {
		print_message("  no memory below 4 GiB on this host; RSDT case skipped\n");
		skip();
	}
	place = PLACE_LOW;
}

/* ---- table builders --------------------------------------------------------- */

#define HDR	36

struct tbl {
	uint8_t b[8192];	/* the table being built */
	uint32_t len;		/* bytes so far */
};

static struct tbl tb;

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static void fix_checksum(uint8_t *p, uint32_t len, unsigned at)
{
	uint8_t sum = 0;

	p[at] = 0;
	for (uint32_t i = 0; i < len; i++)
		sum += p[i];
	p[at] = (uint8_t)-sum;
}

static void tb_begin(const char *sig, uint8_t rev)
{
	memset(&tb, 0, sizeof(tb));
	memcpy(tb.b, sig, 4);
	tb.b[8] = rev;
	memcpy(tb.b + 10, "BTRACE", 6);
	memcpy(tb.b + 16, "TESTTBL ", 8);
	put32(tb.b + 24, 1);
	memcpy(tb.b + 28, "HOST", 4);
	put32(tb.b + 32, 1);
	tb.len = HDR;
}

static uint8_t *tb_grow(uint32_t n)
{
	uint8_t *p = tb.b + tb.len;

	assert_true(tb.len + n <= sizeof(tb.b));
	tb.len += n;
	return p;
}

static void tb_bytes(const uint8_t *p, uint32_t n)
{
	memcpy(tb_grow(n), p, n);
}

/* Length and checksum in, copied to its own exact-size block. */
static uint8_t *tb_place(void)
{
	uint8_t *t = tmem(tb.len);

	put32(tb.b + 4, tb.len);
	fix_checksum(tb.b, tb.len, 9);
	memcpy(t, tb.b, tb.len);
	return t;
}

static void rechecksum(uint8_t *t)
{
	uint32_t len;

	memcpy(&len, t + 4, 4);
	fix_checksum(t, len, 9);
}

static uint8_t *make_xsdt(uint8_t *const *tables, unsigned n)
{
	tb_begin("XSDT", 1);
	for (unsigned i = 0; i < n; i++)
		put64(tb_grow(8), phys(tables[i]));
	return tb_place();
}

static uint8_t *make_rsdt(uint8_t *const *tables, unsigned n)
{
	tb_begin("RSDT", 1);
	for (unsigned i = 0; i < n; i++) {
		assert_true(phys(tables[i]) < 0x100000000ull);
		put32(tb_grow(4), (uint32_t)phys(tables[i]));
	}
	return tb_place();
}

static uint8_t *make_rsdp(uint8_t rev, const void *rsdt, const void *xsdt)
{
	uint8_t *r = tmem(rev >= 2 ? 36 : 20);

	memset(r, 0, rev >= 2 ? 36 : 20);
	memcpy(r, "RSD PTR ", 8);
	memcpy(r + 9, "BOCHS ", 6);
	r[15] = rev;
	assert_true(phys(rsdt) < 0x100000000ull);
	put32(r + 16, (uint32_t)phys(rsdt));
	fix_checksum(r, 20, 8);
	if (rev >= 2) {
		put32(r + 20, 36);
		put64(r + 24, phys(xsdt));
		fix_checksum(r, 36, 32);
	}
	return r;
}

/* MADT entries (ACPI 6.4 section 5.2.12). */
static void m_lapic(uint8_t uid, uint8_t id, uint32_t flags)
{
	uint8_t *e = tb_grow(8);
	e[0] = 0; e[1] = 8; e[2] = uid; e[3] = id;
	put32(e + 4, flags);
}

static void m_x2apic(uint32_t id, uint32_t flags, uint32_t uid)
{
	uint8_t *e = tb_grow(16);
	e[0] = 9; e[1] = 16;
	put32(e + 4, id);
	put32(e + 8, flags);
	put32(e + 12, uid);
}

static void m_ioapic(uint8_t id, uint32_t addr, uint32_t gsi)
{
	uint8_t *e = tb_grow(12);
	e[0] = 1; e[1] = 12; e[2] = id;
	put32(e + 4, addr);
	put32(e + 8, gsi);
}

static void m_override(uint8_t src, uint32_t gsi, uint16_t flags)
{
	uint8_t *e = tb_grow(10);
	e[0] = 2; e[1] = 10; e[2] = 0; e[3] = src;
	put32(e + 4, gsi);
	put16(e + 8, flags);
}

static void m_nmi_source(uint16_t flags, uint32_t gsi)
{
	uint8_t *e = tb_grow(8);
	e[0] = 3; e[1] = 8;
	put16(e + 2, flags);
	put32(e + 4, gsi);
}

static void m_lapic_nmi(uint8_t uid, uint16_t flags, uint8_t lint)
{
	uint8_t *e = tb_grow(6);
	e[0] = 4; e[1] = 6; e[2] = uid;
	put16(e + 3, flags);
	e[5] = lint;
}

static void m_x2apic_nmi(uint16_t flags, uint32_t uid, uint8_t lint)
{
	uint8_t *e = tb_grow(12);
	e[0] = 10; e[1] = 12;
	put16(e + 2, flags);
	put32(e + 4, uid);
	e[8] = lint;
}

static void m_lapic_addr(uint64_t addr)
{
	uint8_t *e = tb_grow(12);
	e[0] = 5; e[1] = 12;
	put64(e + 4, addr);
}

static void madt_begin(uint32_t lapic, uint32_t flags)
{
	tb_begin("APIC", 5);
	put32(tb_grow(4), lapic);
	put32(tb_grow(4), flags);
}

/*
 * The MADT of a 6-CPU QEMU-like machine with every kind of entry and the
 * mistakes firmware makes: a repeated APIC id, the broadcast id 0xFF, an
 * x2APIC entry repeating an xAPIC id, the x2APIC broadcast id.
 */
static uint8_t *make_madt(void)
{
	madt_begin(0xfee00000, 1);
	m_lapic(0, 0, 1);		/* enabled */
	m_lapic(1, 1, 1);		/* enabled */
	m_lapic(2, 2, 0);		/* disabled */
	m_lapic(3, 3, 2);		/* online-capable */
	m_lapic(4, 1, 1);		/* repeats apic id 1: skipped */
	m_lapic(5, 0xff, 1);		/* broadcast: skipped */
	m_x2apic(0x100, 1, 6);		/* x2APIC-only id */
	m_x2apic(0xffffffff, 1, 7);	/* broadcast: skipped */
	m_x2apic(2, 1, 8);		/* repeats apic id 2, enabled: replaces it */
	m_x2apic(0x101, 3, 9);		/* enabled and online-capable bits */
	m_ioapic(0, 0xfec00000, 0);
	m_ioapic(1, 0xfec01000, 24);
	m_override(0, 2, 0);
	m_override(9, 9, 0xd);
	m_nmi_source(0, 5);		/* not used */
	m_lapic_nmi(0xff, 5, 1);
	m_lapic_nmi(3, 0, 0);
	m_x2apic_nmi(0xf, 0xffffffff, 1);
	m_lapic_addr(0x1fee00000ull);
	tb_bytes((const uint8_t[]){ 0x7f, 4, 0, 0 }, 4);	/* unknown type */
	return tb_place();
}

static uint8_t *make_hpet(void)
{
	tb_begin("HPET", 1);
	uint8_t *p = tb_grow(56 - HDR);
	put32(p + 0, 0x8086a201);	/* event timer block id */
	p[4] = 0;			/* GAS: memory */
	p[5] = 64;
	put64(p + 8, 0xfed00000);
	p[16] = 0;			/* number */
	put16(p + 17, 0x80);		/* min tick */
	return tb_place();
}

#define FADT_LEN	276

struct fadt_opts {
	uint32_t len;		/* table length */
	uint32_t pm_tmr_blk;	/* PM_TMR_BLK */
	uint8_t pm_tmr_len;	/* PM_TMR_LEN */
	uint32_t flags;		/* FADT flags */
	uint8_t reset_space;	/* RESET_REG space id */
	uint64_t reset_addr;	/* RESET_REG address */
	uint8_t reset_value;	/* RESET_VALUE */
	uint8_t x_tmr_space;	/* X_PM_TMR_BLK space id */
	uint64_t x_tmr_addr;	/* X_PM_TMR_BLK address */
};

static const struct fadt_opts qemu_fadt = {
	.len = FADT_LEN, .pm_tmr_blk = 0x608, .pm_tmr_len = 4,
	.flags = (1u << 8) | (1u << 10), .reset_space = 1, .reset_addr = 0xcf9,
	.reset_value = 6, .x_tmr_space = 1, .x_tmr_addr = 0x608,
};

static uint8_t *make_fadt(const struct fadt_opts *o)
{
	uint8_t *p;

	tb_begin("FACP", 6);
	p = tb.b;
	tb_grow(o->len - HDR);
	put32(p + 76, o->pm_tmr_blk);
	p[91] = o->pm_tmr_len;
	if (o->len >= 116)
		put32(p + 112, o->flags);
	if (o->len >= 129) {
		p[116] = o->reset_space;
		p[117] = 8;
		p[119] = 1;
		put64(p + 120, o->reset_addr);
		p[128] = o->reset_value;
	}
	if (o->len >= 220) {
		p[208] = o->x_tmr_space;
		p[209] = 32;
		p[211] = 3;
		put64(p + 212, o->x_tmr_addr);
	}
	return tb_place();
}

static uint8_t *make_other(const char *sig, uint32_t len)
{
	tb_begin(sig, 1);
	tb_grow(len - HDR);
	return tb_place();
}

/* ---- the whole set ------------------------------------------------------------ */

enum { T_FADT, T_MADT, T_HPET, T_WAET, T_N };

struct set {
	uint8_t *t[T_N];	/* the tables, in XSDT order */
	uint8_t *xsdt, *rsdt, *rsdp;
};

static struct set set;
static struct acpi_info info;

/* Tables only; the caller adds the root. */
static void build_tables(void)
{
	memset(&set, 0, sizeof(set));
	set.t[T_FADT] = make_fadt(&qemu_fadt);
	set.t[T_MADT] = make_madt();
	set.t[T_HPET] = make_hpet();
	set.t[T_WAET] = make_other("WAET", 40);
}

static void check_madt(void)
{
	static const struct acpi_cpu want[] = {
		{ 0, 0, true, false, false },
		{ 1, 1, true, false, false },
		{ 2, 8, true, false, true },	/* the enabled repeat (uid 8) */
		{ 3, 3, false, true, false },
		{ 0x100, 6, true, false, true },
		{ 0x101, 9, true, true, true },
	};

	assert_true(info.has_madt);
	assert_int_equal(info.lapic_addr, 0x1fee00000ull);	/* the override wins */
	assert_int_equal(info.madt_flags, 1);
	assert_int_equal(info.cpu_count, 6);
	assert_int_equal(info.cpu_skipped, 4);
	for (unsigned i = 0; i < 6; i++) {
		assert_int_equal(info.cpus[i].apic_id, want[i].apic_id);
		assert_int_equal(info.cpus[i].uid, want[i].uid);
		assert_int_equal(info.cpus[i].enabled, want[i].enabled);
		assert_int_equal(info.cpus[i].online_capable, want[i].online_capable);
		assert_int_equal(info.cpus[i].x2apic, want[i].x2apic);
	}
	expect_log("uid=4", "repeats apic_id=1");
	expect_log("uid=5", "broadcast");
	expect_log("uid=7", "broadcast");
	expect_log("uid=8 repeats apic_id=2", "this entry kept");

	assert_int_equal(info.ioapic_count, 2);
	assert_int_equal(info.ioapics[0].id, 0);
	assert_int_equal(info.ioapics[0].addr, 0xfec00000);
	assert_int_equal(info.ioapics[0].gsi_base, 0);
	assert_int_equal(info.ioapics[1].id, 1);
	assert_int_equal(info.ioapics[1].addr, 0xfec01000);
	assert_int_equal(info.ioapics[1].gsi_base, 24);

	assert_int_equal(info.override_count, 2);
	assert_int_equal(info.overrides[0].bus, 0);
	assert_int_equal(info.overrides[0].source, 0);
	assert_int_equal(info.overrides[0].gsi, 2);
	assert_int_equal(info.overrides[0].flags, 0);
	assert_int_equal(info.overrides[1].source, 9);
	assert_int_equal(info.overrides[1].gsi, 9);
	assert_int_equal(info.overrides[1].flags, 0xd);

	assert_int_equal(info.nmi_count, 3);
	assert_int_equal(info.nmis[0].uid, 0xffffffffu);	/* 0xFF widened: all */
	assert_int_equal(info.nmis[0].flags, 5);
	assert_int_equal(info.nmis[0].lint, 1);
	assert_int_equal(info.nmis[1].uid, 3);
	assert_int_equal(info.nmis[1].lint, 0);
	assert_int_equal(info.nmis[2].uid, 0xffffffffu);
	assert_int_equal(info.nmis[2].flags, 0xf);
	assert_int_equal(info.nmis[2].lint, 1);
	expect_log("madt", "cpus=6 enabled=5 skipped=4 ioapics=2 overrides=2 nmis=3 other=1");
}

static void check_hpet_fadt(void)
{
	assert_true(info.has_hpet);
	assert_int_equal(info.hpet_addr, 0xfed00000);
	assert_int_equal(info.hpet_number, 0);
	assert_int_equal(info.hpet_min_tick, 0x80);

	assert_true(info.has_fadt);
	assert_int_equal(info.pm_timer_port, 0x608);
	assert_true(info.pm_timer_32bit);
	assert_true(info.has_reset_reg);
	assert_int_equal(info.reset_reg.space_id, ACPI_GAS_IO);
	assert_int_equal(info.reset_reg.bit_width, 8);
	assert_int_equal(info.reset_reg.access_size, 1);
	assert_int_equal(info.reset_reg.address, 0xcf9);
	assert_int_equal(info.reset_value, 6);
}

static void check_table_list(unsigned skip_bad)
{
	static const char *const sigs[T_N] = { "FACP", "APIC", "HPET", "WAET" };

	assert_int_equal(info.table_count, T_N);
	for (unsigned i = 0; i < T_N; i++) {
		uint32_t len;
		memcpy(&len, set.t[i] + 4, 4);
		assert_string_equal(info.tables[i].signature, sigs[i]);
		assert_int_equal(info.tables[i].phys, phys(set.t[i]));
		assert_int_equal(info.tables[i].length, len);
		assert_int_equal(info.tables[i].valid, i != skip_bad);
	}
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_checksum(void **state)
{
	uint8_t b[40] = { 0 };

	(void)state;
	assert_true(acpi_checksum_ok(b, 0));
	assert_true(acpi_checksum_ok(b, sizeof(b)));
	b[3] = 0x80;
	b[30] = 0x80;
	assert_true(acpi_checksum_ok(b, sizeof(b)));	/* sums wrap mod 256 */
	b[31] = 1;
	assert_false(acpi_checksum_ok(b, sizeof(b)));
	assert_true(acpi_checksum_ok(b, 31));		/* only len bytes count */
}

/* ACPI 2.0+: RSDP rev 2 with an XSDT holding 64-bit pointers. */
static void test_xsdt(void **state)
{
	(void)state;
	build_tables();
	set.xsdt = make_xsdt(set.t, T_N);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));

	assert_true(info.found);
	assert_int_equal(info.rsdp_revision, 2);
	assert_true(info.use_xsdt);
	assert_string_equal(info.oem_id, "BOCHS ");
	assert_int_equal(info.bad_tables, 0);
	check_table_list(T_N);
	check_madt();
	check_hpet_fadt();
	expect_log("table=XSDT", "ok");
	expect_log("table=WAET", "ok");
	assert_int_equal(log_count("skipped;", NULL), 0);
}

/* ACPI 1.0: RSDP rev 0 (20 bytes), RSDT with 32-bit pointers. */
static void test_rsdt(void **state)
{
	(void)state;
	need_low_memory();
	build_tables();
	set.rsdt = make_rsdt(set.t, T_N);
	set.rsdp = make_rsdp(0, set.rsdt, NULL);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_true(info.found);
	assert_int_equal(info.rsdp_revision, 0);
	assert_false(info.use_xsdt);
	check_table_list(T_N);
	check_madt();
	check_hpet_fadt();
}

/* One table with a bad checksum: reported, skipped, the others still parse. */
static void test_bad_table_checksum(void **state)
{
	(void)state;
	build_tables();
	set.t[T_MADT][40] ^= 0x10;	/* MADT flags: checksum now wrong */
	set.xsdt = make_xsdt(set.t, T_N);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));

	assert_true(info.found);
	assert_int_equal(info.bad_tables, 1);
	check_table_list(T_MADT);
	assert_int_equal(log_count("table=APIC", "bad checksum"), 1);
	assert_int_equal(log_count("bad checksum", NULL), 1);
	assert_false(info.has_madt);
	assert_int_equal(info.cpu_count, 0);
	check_hpet_fadt();

	/* The same with the FADT instead. */
	nlog = 0;
	build_tables();
	set.t[T_FADT][100] ^= 1;
	set.xsdt = make_xsdt(set.t, T_N);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_int_equal(log_count("table=FACP", "bad checksum"), 1);
	assert_false(info.has_fadt);
	assert_int_equal(info.pm_timer_port, 0);
	check_madt();
	assert_true(info.has_hpet);
}

/* Table lengths that cannot be right: never trusted. */
static void test_bad_table_length(void **state)
{
	uint8_t *t;

	(void)state;
	build_tables();
	t = set.t[T_HPET];
	put32(t + 4, 35);		/* shorter than a header */
	rechecksum(t);
	put32(set.t[T_WAET] + 4, 0x7fffffff);	/* absurd; not read (over 16 MiB) */
	set.xsdt = make_xsdt(set.t, T_N);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_int_equal(info.bad_tables, 2);
	assert_false(info.has_hpet);
	expect_log("table=HPET", "implausible length");
	expect_log("table=WAET", "implausible length");
	check_madt();
}

/* A table crossing acpi_mapped_limit is refused; so is one above it. */
static void test_mapped_limit(void **state)
{
	(void)state;
	/* The kernel's boot default (4 GiB) with the tables above it. */
	build_tables();
	set.xsdt = make_xsdt(set.t, T_N);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	acpi_mapped_limit = 0x100000000ull;
	assert_true(phys(set.xsdt) >= acpi_mapped_limit);	/* host heap: high */
	assert_false(acpi_parse_root(set.rsdp, &info, report));
	assert_false(info.found);
	expect_log("outside mapped memory", NULL);
	expect_log("no valid RSDT or XSDT", NULL);

	/*
	 * In address order: FADT, MADT, WAET, XSDT, RSDP, then the HPET,
	 * with the limit in the middle of the HPET.
	 */
	nlog = 0;
	acpi_mapped_limit = UINT64_MAX;
	place = PLACE_ORDERED;
	memset(&set, 0, sizeof(set));
	set.t[T_FADT] = make_fadt(&qemu_fadt);
	set.t[T_MADT] = make_madt();
	set.t[T_WAET] = make_other("WAET", 40);
	set.xsdt = make_xsdt(set.t, T_N);	/* HPET slot filled in below */
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	set.t[T_HPET] = make_hpet();
	put64(set.xsdt + HDR + 8 * T_HPET, phys(set.t[T_HPET]));
	rechecksum(set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));	/* all mapped */
	check_table_list(T_N);

	nlog = 0;
	acpi_mapped_limit = phys(set.t[T_HPET]) + 40;
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_false(info.has_hpet);
	assert_int_equal(info.bad_tables, 1);
	expect_log("table=HPET", "runs outside mapped memory");
	check_madt();
	assert_true(info.has_fadt);

	/* The limit just below the HPET: not even its header is read. */
	nlog = 0;
	acpi_mapped_limit = phys(set.t[T_HPET]) + 35;
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_false(info.has_hpet);
	assert_string_equal(info.tables[T_HPET].signature, "????");
	expect_log("is outside mapped memory", NULL);

	/* Exactly at the end of the HPET: all of it is usable. */
	nlog = 0;
	acpi_mapped_limit = phys(set.t[T_HPET]) + 56;
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_true(info.has_hpet);
	acpi_mapped_limit = UINT64_MAX;
}

/* Null and absurd pointers in the XSDT: reported, counted, skipped. */
static void test_bad_pointers(void **state)
{
	uint8_t *tables[T_N + 2];

	(void)state;
	build_tables();
	memcpy(tables, set.t, sizeof(set.t));
	tables[T_N] = NULL;
	tables[T_N + 1] = (uint8_t *)(uintptr_t)0xfffffffffffffff0ull;
	set.xsdt = make_xsdt(tables, T_N + 2);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_int_equal(info.table_count, T_N + 2);
	assert_int_equal(info.bad_tables, 2);
	assert_false(info.tables[T_N].valid);
	assert_false(info.tables[T_N + 1].valid);
	assert_int_equal(log_count("outside mapped memory", NULL), 2);
	check_madt();
	check_hpet_fadt();
}

static void test_bad_rsdp(void **state)
{
	uint8_t *r;

	(void)state;
	build_tables();
	set.xsdt = make_xsdt(set.t, T_N);

	/* Bad checksum over the first 20 bytes: no ACPI at all. */
	r = make_rsdp(2, NULL, set.xsdt);
	r[8] ^= 1;
	fix_checksum(r, 36, 32);	/* the extended one is fine */
	assert_false(acpi_parse_root(r, &info, report));
	assert_false(info.found);
	assert_int_equal(info.table_count, 0);
	assert_false(info.has_madt || info.has_hpet || info.has_fadt);
	expect_log("RSDP checksum is bad", NULL);

	/* Bad signature. */
	nlog = 0;
	r = make_rsdp(2, NULL, set.xsdt);
	r[0] = 'r';
	fix_checksum(r, 20, 8);
	fix_checksum(r, 36, 32);
	assert_false(acpi_parse_root(r, &info, report));
	assert_false(info.found);
	expect_log("signature", NULL);

	/* Neither an RSDT nor an XSDT address. */
	nlog = 0;
	r = make_rsdp(2, NULL, NULL);
	assert_false(acpi_parse_root(r, &info, report));
	assert_false(info.found);
	expect_log("no valid RSDT or XSDT", NULL);
}

/* A bad XSDT, or a bad extended RSDP checksum: the RSDT is used instead. */
static void test_xsdt_falls_back_to_rsdt(void **state)
{
	uint8_t *r;

	(void)state;
	need_low_memory();
	build_tables();
	set.rsdt = make_rsdt(set.t, T_N);

	/* XSDT with a bad checksum. */
	set.xsdt = make_xsdt(set.t, T_N);
	set.xsdt[20] ^= 1;
	r = make_rsdp(2, set.rsdt, set.xsdt);
	assert_true(acpi_parse_root(r, &info, report));
	assert_true(info.found);
	assert_false(info.use_xsdt);
	expect_log("table=XSDT", "bad checksum");
	check_table_list(T_N);
	check_madt();
	check_hpet_fadt();

	/* XSDT pointer leading to some other table. */
	nlog = 0;
	r = make_rsdp(2, set.rsdt, set.t[T_WAET]);
	assert_true(acpi_parse_root(r, &info, report));
	assert_false(info.use_xsdt);
	expect_log("XSDT pointer leads to 'WAET'", NULL);
	check_table_list(T_N);

	/* Good XSDT, but the RSDP's extended checksum is wrong. */
	nlog = 0;
	set.xsdt = make_xsdt(set.t, T_N);
	r = make_rsdp(2, set.rsdt, set.xsdt);
	r[32] ^= 1;
	assert_true(acpi_parse_root(r, &info, report));
	assert_false(info.use_xsdt);
	expect_log("extended checksum is bad", NULL);
	check_table_list(T_N);

	/* A bad RSDT as well: no ACPI. */
	nlog = 0;
	set.rsdt[10] ^= 1;
	r = make_rsdp(2, set.rsdt, set.t[T_WAET]);
	assert_false(acpi_parse_root(r, &info, report));
	assert_false(info.found);
	expect_log("table=RSDT", "bad checksum");

	/* An RSDT pointer leading to some other table. */
	nlog = 0;
	r = make_rsdp(0, set.t[T_HPET], NULL);
	assert_false(acpi_parse_root(r, &info, report));
	expect_log("RSDT pointer leads to 'HPET'", NULL);
}

/* MADT entries with impossible lengths end the walk, keeping what came before. */
static void test_madt_bad_entry_length(void **state)
{
	static const uint8_t bad_len[] = { 0, 1, 200 };

	(void)state;
	for (unsigned k = 0; k < sizeof(bad_len); k++) {
		nlog = 0;
		madt_begin(0xfee00000, 0);
		m_lapic(0, 0, 1);
		m_ioapic(0, 0xfec00000, 0);
		uint8_t *e = tb_grow(8);	/* looks like a LAPIC entry */
		e[0] = 0;
		e[1] = bad_len[k];
		e[3] = 5;
		m_lapic(1, 1, 1);		/* after the damage: not used */
		uint8_t *t[1] = { tb_place() };
		set.xsdt = make_xsdt(t, 1);
		set.rsdp = make_rsdp(2, NULL, set.xsdt);
		assert_true(acpi_parse_root(set.rsdp, &info, report));
		assert_true(info.has_madt);
		assert_int_equal(info.cpu_count, 1);
		assert_int_equal(info.cpus[0].apic_id, 0);
		assert_int_equal(info.ioapic_count, 1);
		expect_log("bad length", NULL);
	}

	/* A last entry cut by the table's end. */
	nlog = 0;
	madt_begin(0xfee00000, 0);
	m_lapic(0, 0, 1);
	m_x2apic(7, 1, 7);
	tb.len -= 4;
	uint8_t *t[1] = { tb_place() };
	set.xsdt = make_xsdt(t, 1);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_int_equal(info.cpu_count, 1);
	expect_log("bad length", NULL);

	/* Short entries of known types are stepped over, not read past. */
	nlog = 0;
	madt_begin(0xfee00000, 0);
	tb_bytes((const uint8_t[]){ 0, 4, 1, 1 }, 4);			/* LAPIC < 8 */
	tb_bytes((const uint8_t[]){ 9, 8, 0, 0, 1, 0, 0, 0 }, 8);	/* x2APIC < 16 */
	tb_bytes((const uint8_t[]){ 1, 4, 0, 0 }, 4);			/* IOAPIC < 12 */
	tb_bytes((const uint8_t[]){ 2, 4, 0, 0 }, 4);			/* override < 10 */
	tb_bytes((const uint8_t[]){ 4, 4, 0, 0 }, 4);			/* NMI < 6 */
	tb_bytes((const uint8_t[]){ 10, 4, 0, 0 }, 4);			/* x2 NMI < 12 */
	tb_bytes((const uint8_t[]){ 5, 4, 0, 0 }, 4);			/* address < 12 */
	m_lapic(0, 3, 1);
	t[0] = tb_place();
	set.xsdt = make_xsdt(t, 1);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_int_equal(info.cpu_count, 1);
	assert_int_equal(info.cpus[0].apic_id, 3);
	assert_int_equal(info.ioapic_count + info.override_count + info.nmi_count, 0);
	assert_int_equal(info.lapic_addr, 0xfee00000);
	/* Each said, and counted apart from the types not read. */
	assert_int_equal(info.madt_short, 7);
	assert_int_equal(info.madt_other, 0);
	expect_log("acpi: madt entry type 0 at offset 44 is 4 bytes, shorter than its fields' 8; "
		   "skipped", NULL);
	expect_log("acpi: madt entry type 9 at offset 48 is 8 bytes, shorter than its fields' 16; "
		   "skipped", NULL);
	expect_log("acpi: madt entry type 5 at offset 72 is 4 bytes, shorter than its fields' 12; "
		   "skipped", NULL);

	/* A MADT too short for its own fixed fields. */
	nlog = 0;
	tb_begin("APIC", 5);
	tb_grow(4);
	t[0] = tb_place();
	set.xsdt = make_xsdt(t, 1);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_false(info.has_madt);
	expect_log("madt too short", NULL);
}

/* Limits: more CPUs, IOAPICs, overrides and NMIs than the arrays hold. */
static void test_madt_limits(void **state)
{
	(void)state;
	madt_begin(0xfee00000, 0);
	for (uint32_t i = 0; i < ACPI_MAX_CPUS + 20; i++)
		m_x2apic(i, 1, i);
	for (uint8_t i = 0; i < ACPI_MAX_IOAPICS + 2; i++)
		m_ioapic(i, 0xfec00000 + i * 0x1000u, i * 24u);
	for (uint8_t i = 0; i < ACPI_MAX_OVERRIDES + 2; i++)
		m_override(i, i, 0);
	for (uint8_t i = 0; i < ACPI_MAX_NMIS + 2; i++)
		m_lapic_nmi(i, 0, 1);
	uint8_t *t[1] = { tb_place() };
	set.xsdt = make_xsdt(t, 1);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_int_equal(info.cpu_count, ACPI_MAX_CPUS);
	assert_int_equal(info.cpu_skipped, 20);
	assert_int_equal(info.cpus[ACPI_MAX_CPUS - 1].apic_id, ACPI_MAX_CPUS - 1);
	assert_int_equal(info.ioapic_count, ACPI_MAX_IOAPICS);
	assert_int_equal(info.override_count, ACPI_MAX_OVERRIDES);
	assert_int_equal(info.nmi_count, ACPI_MAX_NMIS);
}

/* More tables than ACPI_MAX_TABLES, and repeated ones: the first counts. */
static void test_many_tables(void **state)
{
	uint8_t *tables[ACPI_MAX_TABLES + 6];

	(void)state;
	build_tables();
	madt_begin(0xfee00000, 0);
	m_lapic(9, 9, 1);
	uint8_t *madt2 = tb_place();
	tables[0] = set.t[T_MADT];
	tables[1] = madt2;		/* a second MADT: ignored */
	for (unsigned i = 2; i < ACPI_MAX_TABLES + 5; i++)
		tables[i] = make_other("SSDT", 40 + i);
	tables[ACPI_MAX_TABLES + 5] = set.t[T_HPET];	/* past the limit */
	set.xsdt = make_xsdt(tables, ACPI_MAX_TABLES + 6);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_int_equal(info.table_count, ACPI_MAX_TABLES);
	assert_int_equal(info.bad_tables, 0);
	assert_int_equal(info.cpu_count, 6);		/* from the first MADT */
	assert_int_equal(info.cpus[0].apic_id, 0);
	assert_false(info.has_hpet);
}

/* Parse one MADT under an XSDT of its own. */
static void parse_madt_built(void)
{
	uint8_t *t[1] = { tb_place() };

	set.xsdt = make_xsdt(t, 1);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_true(info.has_madt);
}

/*
 * An x2APIC-only MADT (7 of 650 real machines): ids above 254, no xAPIC
 * entry at all, with x2APIC NMI entries; every enabled one is a CPU.
 */
static void test_madt_x2apic_only(void **state)
{
	static const uint32_t ids[] = { 0, 2, 4, 6, 0x100, 0x102, 143 };

	(void)state;
	madt_begin(0xfee00000, 0);
	for (unsigned i = 0; i < 7; i++)
		m_x2apic(ids[i], 1, 100 + i);
	m_x2apic(0x200, 0, 200);		/* present but disabled */
	m_x2apic_nmi(5, 0xffffffff, 1);
	parse_madt_built();
	assert_int_equal(info.cpu_count, 8);
	for (unsigned i = 0; i < 7; i++) {
		assert_int_equal(info.cpus[i].apic_id, ids[i]);
		assert_int_equal(info.cpus[i].uid, 100 + i);
		assert_true(info.cpus[i].x2apic);
		assert_true(info.cpus[i].enabled);
	}
	assert_false(info.cpus[7].enabled);
	assert_int_equal(info.nmi_count, 1);
	expect_log("acpi: madt lapic=0xfee00000 cpus=8 enabled=7 skipped=0", "other=0");
}

/*
 * Entry types the parser does not read, reserved (0x7F, 0x18) and OEM
 * (0x80, 0xFF) ones among them, each with a length of its own: stepped
 * over by that length and counted; the CPUs around them all kept. The
 * OEM entries carry bytes that would read as a LAPIC entry if the walk
 * stepped by anything else.
 */
static void test_madt_unknown_types(void **state)
{
	(void)state;
	madt_begin(0xfee00000, 1);
	m_lapic(0, 0, 1);
	tb_bytes((const uint8_t[]){ 0x7f, 4, 0, 8 }, 4);
	m_lapic(1, 1, 1);
	tb_bytes((const uint8_t[]){ 0xff, 10, 0, 8, 9, 9, 1, 0, 0, 0 }, 10);
	m_x2apic(0x300, 1, 2);
	tb_bytes((const uint8_t[]){ 0x80, 2 }, 2);
	tb_bytes((const uint8_t[]){ 0x18, 3, 0 }, 3);
	m_nmi_source(0, 5);			/* known, not needed: not counted */
	m_lapic(3, 3, 1);
	parse_madt_built();
	assert_int_equal(info.cpu_count, 4);
	assert_int_equal(info.cpus[0].apic_id, 0);
	assert_int_equal(info.cpus[1].apic_id, 1);
	assert_int_equal(info.cpus[2].apic_id, 0x300);
	assert_int_equal(info.cpus[3].apic_id, 3);
	assert_int_equal(info.madt_other, 4);
	assert_int_equal(info.cpu_skipped, 0);
	expect_log("acpi: madt ", "cpus=4 enabled=4 skipped=0 ioapics=0 overrides=0 nmis=0 other=4");
}

/* A CPU listed twice, disabled first and enabled second: the enabled entry describes it. */
static void test_madt_repeat_enabled_wins(void **state)
{
	(void)state;
	madt_begin(0xfee00000, 1);
	m_lapic(0, 0, 1);
	m_lapic(1, 1, 0);			/* disabled xAPIC entry */
	m_x2apic(1, 1, 17);			/* the same CPU, enabled */
	m_x2apic(0, 0, 18);			/* disabled repeat of an enabled one */
	parse_madt_built();
	assert_int_equal(info.cpu_count, 2);
	assert_true(info.cpus[0].enabled);
	assert_int_equal(info.cpus[0].uid, 0);
	assert_true(info.cpus[1].enabled);
	assert_int_equal(info.cpus[1].uid, 17);
	assert_true(info.cpus[1].x2apic);
	assert_int_equal(info.cpu_skipped, 2);
	expect_log("uid=17 repeats apic_id=1", "this entry kept");
	expect_log("uid=18 repeats apic_id=0", "skipped");
}

/* More CPUs than the kernel keeps: one line says how many are left out. */
static void test_madt_more_cpus_than_max(void **state)
{
	unsigned enabled = 0;

	(void)state;
	madt_begin(0xfee00000, 0);
	for (uint32_t i = 0; i < ACPI_MAX_CPUS + 30; i++)
		m_x2apic(i, i % 10 == 0 ? 0 : 1, i);	/* every tenth disabled */
	parse_madt_built();
	assert_int_equal(info.cpu_count, ACPI_MAX_CPUS);
	for (unsigned i = 0; i < info.cpu_count; i++)
		enabled += info.cpus[i].enabled;
	/*
	 * 256..285 hold 27 enabled CPUs (260, 270, 280 disabled): 26 take the
	 * places of the disabled 0, 10, .., 250, the 27th is over the limit.
	 */
	assert_int_equal(enabled, ACPI_MAX_CPUS);
	assert_int_equal(info.cpu_over, 30);
	assert_int_equal(info.cpu_over_enabled, 1);
	expect_log("acpi: madt lists 30 CPUs beyond the 256 kept (1 of them enabled); "
		   "those are not started", NULL);
}

/*
 * Hot-plug placeholders (disabled entries) listed before enabled CPUs, more
 * than the kernel keeps: the enabled CPUs take the placeholders' places, so
 * none of them is lost to the limit, and the line counts what is left out.
 */
static void test_madt_enabled_after_placeholders(void **state)
{
	unsigned enabled = 0;

	(void)state;
	madt_begin(0xfee00000, 0);
	for (uint32_t i = 0; i < ACPI_MAX_CPUS + 10; i++)
		m_x2apic(1000 + i, 0, 1000 + i);	/* disabled */
	for (uint32_t i = 0; i < 5; i++)
		m_x2apic(i, 1, i);
	parse_madt_built();
	assert_int_equal(info.cpu_count, ACPI_MAX_CPUS);
	for (unsigned i = 0; i < info.cpu_count; i++)
		enabled += info.cpus[i].enabled;
	assert_int_equal(enabled, 5);
	assert_int_equal(info.cpus[0].apic_id, 0);
	assert_int_equal(info.cpus[4].apic_id, 4);
	assert_int_equal(info.cpu_over, 15);
	assert_int_equal(info.cpu_over_enabled, 0);
	expect_log("acpi: madt lists 15 CPUs beyond the 256 kept (0 of them enabled); "
		   "those are not started", NULL);
}

/* The local APIC address override (type 5) replaces the 32-bit field, wherever it sits. */
static void test_madt_lapic_override(void **state)
{
	(void)state;
	madt_begin(0xfee00000, 0);
	m_lapic_addr(0xfee10000ull);
	m_lapic(0, 0, 1);
	parse_madt_built();
	assert_int_equal(info.lapic_addr, 0xfee10000ull);
	expect_log("acpi: madt lapic=0xfee10000 ", NULL);
}

static void test_hpet_variants(void **state)
{
	uint8_t *t[1];

	(void)state;
	/* HPET in I/O space: not usable. */
	t[0] = make_hpet();
	t[0][HDR + 4] = ACPI_GAS_IO;
	rechecksum(t[0]);
	set.xsdt = make_xsdt(t, 1);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_false(info.has_hpet);
	expect_log("hpet is not memory-mapped", NULL);

	/* Too short for the minimum tick field. */
	nlog = 0;
	t[0] = make_other("HPET", 54);
	set.xsdt = make_xsdt(t, 1);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_false(info.has_hpet);
	expect_log("hpet table too short", NULL);

	/* Exactly long enough (55 bytes, no page protection byte). */
	nlog = 0;
	tb_begin("HPET", 1);
	uint8_t *p = tb_grow(19);
	put64(p + 8, 0xfed01000);
	p[16] = 2;
	put16(p + 17, 0x1234);
	t[0] = tb_place();
	set.xsdt = make_xsdt(t, 1);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
	assert_true(info.has_hpet);
	assert_int_equal(info.hpet_addr, 0xfed01000);
	assert_int_equal(info.hpet_number, 2);
	assert_int_equal(info.hpet_min_tick, 0x1234);
}

static void parse_fadt_only(const struct fadt_opts *o)
{
	uint8_t *t[1] = { make_fadt(o) };

	nlog = 0;
	set.xsdt = make_xsdt(t, 1);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	assert_true(acpi_parse_root(set.rsdp, &info, report));
}

static void test_fadt_variants(void **state)
{
	struct fadt_opts o;

	(void)state;
	/* Only X_PM_TMR_BLK gives the port. */
	o = qemu_fadt;
	o.pm_tmr_blk = 0;
	o.pm_tmr_len = 0;
	o.x_tmr_addr = 0xb008;
	parse_fadt_only(&o);
	assert_true(info.has_fadt);
	assert_int_equal(info.pm_timer_port, 0xb008);

	/* X_PM_TMR_BLK, when usable, wins over PM_TMR_BLK. */
	o = qemu_fadt;
	o.x_tmr_addr = 0x1808;
	parse_fadt_only(&o);
	assert_int_equal(info.pm_timer_port, 0x1808);

	/* X_PM_TMR_BLK in memory space, or beyond the I/O range: PM_TMR_BLK. */
	o = qemu_fadt;
	o.x_tmr_space = ACPI_GAS_MEMORY;
	o.x_tmr_addr = 0xfed80000;
	parse_fadt_only(&o);
	assert_int_equal(info.pm_timer_port, 0x608);
	o = qemu_fadt;
	o.x_tmr_addr = 0x10000;
	parse_fadt_only(&o);
	assert_int_equal(info.pm_timer_port, 0x608);

	/* PM_TMR_LEN not 4: no timer from PM_TMR_BLK; 24-bit counter flag. */
	o = qemu_fadt;
	o.pm_tmr_len = 0;
	o.x_tmr_addr = 0;
	o.flags = 0;
	parse_fadt_only(&o);
	assert_int_equal(info.pm_timer_port, 0);
	assert_false(info.pm_timer_32bit);
	assert_false(info.has_reset_reg);
	expect_log("pm_timer_bits=24", "reset=none");

	/* Reset register flagged but at address 0: unusable. */
	o = qemu_fadt;
	o.reset_addr = 0;
	parse_fadt_only(&o);
	assert_false(info.has_reset_reg);

	/* Reset register in memory space. */
	o = qemu_fadt;
	o.reset_space = ACPI_GAS_MEMORY;
	o.reset_addr = 0xfed000f0;
	o.reset_value = 0xa;
	parse_fadt_only(&o);
	assert_true(info.has_reset_reg);
	assert_int_equal(info.reset_reg.space_id, ACPI_GAS_MEMORY);
	assert_int_equal(info.reset_reg.address, 0xfed000f0);
	assert_int_equal(info.reset_value, 0xa);
	expect_log("reset=mem:0xfed000f0", "value=0xa");

	/* An ACPI 1.0 FADT (116 bytes): flags, but no reset register, no X_ fields. */
	o = qemu_fadt;
	o.len = 116;
	parse_fadt_only(&o);
	assert_true(info.has_fadt);
	assert_int_equal(info.pm_timer_port, 0x608);
	assert_true(info.pm_timer_32bit);
	assert_false(info.has_reset_reg);

	/* Long enough for PM_TMR_LEN only. */
	o = qemu_fadt;
	o.len = 92;
	parse_fadt_only(&o);
	assert_true(info.has_fadt);
	assert_int_equal(info.pm_timer_port, 0x608);
	assert_false(info.pm_timer_32bit);

	/* Too short for PM_TMR_LEN. */
	o = qemu_fadt;
	o.len = 91;
	parse_fadt_only(&o);
	assert_false(info.has_fadt);
	assert_int_equal(info.pm_timer_port, 0);
	expect_log("fadt too short", NULL);
}

/*
 * Hardware-reduced ACPI (FADT flag 20): the fixed-hardware fields are
 * ignored, so a PM timer block left in them names no timer.
 */
static void test_fadt_hw_reduced(void **state)
{
	struct fadt_opts o = qemu_fadt;

	(void)state;
	o.flags |= 1u << 20;
	parse_fadt_only(&o);
	assert_true(info.has_fadt);
	assert_true(info.hw_reduced);
	assert_int_equal(info.pm_timer_port, 0);
	expect_log("acpi: fadt hardware-reduced ACPI: no PM timer, no fixed hardware", NULL);
	expect_log("acpi: fadt pm_timer=0x0 ", NULL);

	/* The same table without the flag: the timer counts. */
	o = qemu_fadt;
	parse_fadt_only(&o);
	assert_false(info.hw_reduced);
	assert_int_equal(info.pm_timer_port, 0x608);
}

/* Each FADT revision's length: 1 (116), 2 (129), 3/4 (244), 5 (268), 6 (276). */
static void test_fadt_revisions(void **state)
{
	static const uint32_t lens[] = { 116, 129, 244, 268, 276, 300 };

	(void)state;
	for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct fadt_opts o = qemu_fadt;

		o.len = lens[i];
		o.x_tmr_addr = 0xb008;
		nlog = 0;
		parse_fadt_only(&o);
		assert_true(info.has_fadt);
		assert_true(info.pm_timer_32bit);
		/* X_PM_TMR_BLK exists from 244 bytes on; before it, PM_TMR_BLK. */
		assert_int_equal(info.pm_timer_port, lens[i] >= 220 ? 0xb008 : 0x608);
		assert_int_equal(info.has_reset_reg, lens[i] >= 129);
	}
}

/* acpi_init: the kernel's entry, printing through printk into acpi. */
static void test_acpi_init(void **state)
{
	(void)state;
	assert_false(acpi_init(NULL, 0, false));
	assert_false(acpi.found);
	expect_log("no RSDP from the boot loader", NULL);

	build_tables();
	set.xsdt = make_xsdt(set.t, T_N);
	set.rsdp = make_rsdp(2, NULL, set.xsdt);
	nlog = 0;
	assert_false(acpi_init(set.rsdp, 19, false));	/* too short a copy */
	nlog = 0;
	assert_true(acpi_init(set.rsdp, 36, false));
	assert_true(acpi.found);
	assert_true(acpi.has_madt && acpi.has_hpet && acpi.has_fadt);
	assert_int_equal(acpi.cpu_count, 6);
	expect_log("table=APIC", "ok");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_checksum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xsdt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rsdt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_table_checksum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_table_length, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mapped_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_pointers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_rsdp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xsdt_falls_back_to_rsdt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_madt_bad_entry_length, setup, teardown),
		cmocka_unit_test_setup_teardown(test_madt_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hpet_variants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fadt_variants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_madt_x2apic_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_madt_unknown_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_madt_repeat_enabled_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_madt_more_cpus_than_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_madt_lapic_override, setup, teardown),
		cmocka_unit_test_setup_teardown(test_madt_enabled_after_placeholders, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fadt_hw_reduced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fadt_revisions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_acpi_init, setup, teardown),
	};

	return cmocka_run_group_tests(tests, setup_group, teardown_group);
}
