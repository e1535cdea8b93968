/*
 * acpidump text in, the kernel's view of the machine out (see acpidump.h).
 *
 * Where the parser finds tables: acpi_map() is pointed at the dump, so a
 * physical range maps when it lies inside one table's bytes. The root:
 *  - the dump's RSDP when it has one and the tables it leads to are there;
 *  - else an RSDP made for the dump's XSDT or RSDT;
 *  - else (common: acpidump -b and hand-made sets) an XSDT made here that
 *    lists every table of the dump but the root ones, the DSDT and the
 *    FACS (the FADT leads to those; the kernel does not read them).
 * Tables without a usable address of their own (0, or overlapping another)
 * are given one above every real one; a line says so.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arch/acpi.h>
#include "acpidump.h"

#define SYNTH_ALIGN	0x1000ull

static struct acpidump *cur;	/* the dump acpi_map() reads */

static void emitf(void (*emit)(const char *), const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void emitf(void (*emit)(const char *), const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	emit(line);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Skip a kernel log's "[ seconds ] " prefix and leading blanks. */
static const char *skip_prefix(const char *p, const char *end)
{
	if (p < end && *p == '[') {
		const char *q = memchr(p, ']', (size_t)(end - p));
		if (q && q - p < 24)
			p = q + 1;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* "SIG @ 0xHEX": a block's first line. */
static bool table_line(const char *p, const char *end, char sig[5], uint64_t *addr)
{
	uint64_t a = 0;
	int digits = 0;

	if (end - p < 9 || memcmp(p + 4, " @ 0x", 5))
		return false;
	for (int i = 0; i < 4; i++) {
		if (p[i] < '!' || p[i] > '~')
			return false;
		sig[i] = p[i];
	}
	sig[4] = 0;
	for (p += 9; p < end && hexval(*p) >= 0 && digits < 17; p++, digits++)
		a = a << 4 | (uint64_t)hexval(*p);
	if (!digits || digits > 16)
		return false;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	if (p != end)
		return false;
	*addr = a;
	return true;
}

/* "OFFSET: XX XX ...": a data line; returns the byte count or -1. */
static int data_line(const char *p, const char *end, uint32_t *off, uint8_t bytes[16])
{
	uint64_t o = 0;
	int digits = 0, n = 0;

	for (; p < end && hexval(*p) >= 0 && digits < 9; p++, digits++)
		o = o << 4 | (uint64_t)hexval(*p);
	if (!digits || digits > 8 || p >= end || *p != ':')
		return -1;
	p++;
	while (n < 16 && end - p >= 3 && p[0] == ' ' && hexval(p[1]) >= 0 &&
	       hexval(p[2]) >= 0 && (end - p == 3 || p[3] == ' ' || p[3] == '\r')) {
		bytes[n++] = (uint8_t)(hexval(p[1]) << 4 | hexval(p[2]));
		p += 3;
	}
	if (!n)
		return -1;
	*off = (uint32_t)o;
	return n;
}

int acpidump_read(const char *text, size_t len, struct acpidump *d,
		  void (*emit)(const char *), char *err, size_t errlen)
{
	const char *p = text, *end = text + len;
	struct acpidump_table *t = NULL;	/* the block being read */
	bool broken = false;			/* its data stopped making sense */
	uint32_t cap = 0;
	unsigned lineno = 0;

	memset(d, 0, sizeof(*d));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q;
		uint8_t bytes[16];
		uint32_t off;
		char sig[5];
		uint64_t addr;
		int n;

		lineno++;
		q = skip_prefix(p, le);
		while (le > q && (le[-1] == '\r' || le[-1] == ' '))
			le--;
		if (table_line(q, le, sig, &addr)) {
			t = NULL;
			broken = false;
			if (d->n == ACPIDUMP_MAX_TABLES) {
				d->dropped++;
			} else {
				t = &d->t[d->n++];
				memcpy(t->sig, sig, 5);
				t->addr = addr;
				cap = 0;
			}
		} else if (t && !broken && (n = data_line(q, le, &off, bytes)) > 0) {
			if (off != t->len) {
				emitf(emit, "dump: line %u: %s @ 0x%llx: offset 0x%x where 0x%x was "
				      "expected; the rest of the block ignored", lineno, t->sig,
				      (unsigned long long)t->addr, off, t->len);
				broken = true;
			} else if (t->len + (uint32_t)n > (16u << 20)) {
				emitf(emit, "dump: %s @ 0x%llx is longer than 16 MiB; cut there",
				      t->sig, (unsigned long long)t->addr);
				broken = true;
			} else {
				if (t->len + (uint32_t)n > cap) {
					uint8_t *b;
					cap = cap ? cap * 2 : 256;
					b = realloc(t->data, cap);
					if (!b) {
						snprintf(err, errlen, "out of memory");
						return 3;
					}
					t->data = b;
				}
				memcpy(t->data + t->len, bytes, (size_t)n);
				t->len += (uint32_t)n;
			}
		} else if (q == le) {
			t = NULL;	/* a blank line ends a block */
		}
		p = nl ? nl + 1 : end;
	}
	if (d->dropped)
		emitf(emit, "dump: %u tables beyond the first %u ignored", d->dropped,
		      ACPIDUMP_MAX_TABLES);
	if (!d->n) {
		snprintf(err, errlen, "no \"SIG @ 0xADDRESS\" line followed by hex lines: "
			 "not the text acpidump writes");
		return 2;
	}
	return 0;
}

void acpidump_free(struct acpidump *d)
{
	for (unsigned i = 0; i < d->n; i++)
		free(d->t[i].data);
	memset(d, 0, sizeof(*d));
}

/* ---- the parser's view --------------------------------------------------------- */

static const void *map_dump(uint64_t phys, uint64_t len)
{
	for (unsigned i = 0; i < cur->n; i++) {
		const struct acpidump_table *t = &cur->t[i];

		if (t->len && phys >= t->addr && phys - t->addr <= t->len &&
		    len <= t->len - (phys - t->addr))
			return t->data + (phys - t->addr);
	}
	return NULL;
}

static bool is(const struct acpidump_table *t, const char *sig)
{
	return !memcmp(t->sig, sig, 4);
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static void checksum(uint8_t *p, uint32_t len, unsigned at)
{
	uint8_t sum = 0;

	p[at] = 0;
	for (uint32_t i = 0; i < len; i++)
		sum += p[i];
	p[at] = (uint8_t)-sum;
}

/* Give tables at 0, or overlapping an earlier one, an address above all. */
static uint64_t place_tables(struct acpidump *d, void (*emit)(const char *))
{
	uint64_t top = 0;

	for (unsigned i = 0; i < d->n; i++)
		if (d->t[i].addr + d->t[i].len > top && d->t[i].addr + d->t[i].len >= d->t[i].addr)
			top = d->t[i].addr + d->t[i].len;
	top = (top + SYNTH_ALIGN) & ~(SYNTH_ALIGN - 1);
	for (unsigned i = 0; i < d->n; i++) {
		struct acpidump_table *t = &d->t[i];
		bool clash = !t->addr || t->addr + t->len < t->addr;

		for (unsigned j = 0; j < i && !clash; j++)
			clash = t->addr < d->t[j].addr + d->t[j].len &&
				d->t[j].addr < t->addr + t->len;
		if (!clash)
			continue;
		if (t->addr)
			emitf(emit, "dump: %s @ 0x%llx overlaps another table; read at 0x%llx",
			      t->sig, (unsigned long long)t->addr, (unsigned long long)top);
		t->addr = top;
		top = (top + t->len + SYNTH_ALIGN) & ~(SYNTH_ALIGN - 1);
	}
	return top;
}

/* An XSDT listing every table but the root ones, the DSDT and the FACS. */
static uint8_t *make_xsdt(struct acpidump *d, uint64_t at)
{
	uint32_t len = 36;
	uint8_t *x;

	for (unsigned i = 0; i < d->n; i++)
		len += 8;
	x = calloc(1, len);
	if (!x)
		return NULL;
	memcpy(x, "XSDT", 4);
	x[8] = 1;
	memcpy(x + 10, "BTDUMP", 6);
	memcpy(x + 16, "ACPIDUMP", 8);
	len = 36;
	for (unsigned i = 0; i < d->n; i++) {
		const struct acpidump_table *t = &d->t[i];
		if (is(t, "RSDP") || is(t, "RSDT") || is(t, "XSDT") || is(t, "FACS") ||
		    is(t, "DSDT"))
			continue;
		put64(x + len, t->addr);
		len += 8;
	}
	put32(x + 4, len);
	checksum(x, len, 9);
	(void)at;
	return x;
}

static void make_rsdp(uint8_t r[36], uint64_t rsdt, uint64_t xsdt)
{
	memset(r, 0, 36);
	memcpy(r, "RSD PTR ", 8);
	memcpy(r + 9, "BTDUMP", 6);
	r[15] = xsdt ? 2 : 0;
	put32(r + 16, (uint32_t)rsdt);
	checksum(r, 20, 8);
	put32(r + 20, 36);
	put64(r + 24, xsdt);
	checksum(r, 36, 32);
}

/* The root the dump itself gives: its RSDP, else its XSDT/RSDT. */
static bool dump_root(struct acpidump *d, uint8_t rsdp[36])
{
	uint64_t rsdt = 0, xsdt = 0;

	for (unsigned i = 0; i < d->n; i++) {
		const struct acpidump_table *t = &d->t[i];
		if (is(t, "RSDP") && t->len >= 20 && !memcmp(t->data, "RSD PTR ", 8)) {
			memset(rsdp, 0, 36);
			memcpy(rsdp, t->data, t->len < 36 ? t->len : 36);
			return true;
		}
		if (is(t, "XSDT") && !xsdt)
			xsdt = t->addr;
		if (is(t, "RSDT") && !rsdt && t->addr < 0x100000000ull)
			rsdt = t->addr;
	}
	if (!rsdt && !xsdt)
		return false;
	make_rsdp(rsdp, rsdt, xsdt);
	return true;
}

static struct acpi_info info;

static void (*out)(const char *);
static void report(const char *msg)
{
	out(msg);
}

/* The kernel prints through printk in acpi_init(); the tool never calls it. */
int printk(const char *fmt, ...)
{
	(void)fmt;
	return 0;
}

/* ---- the summary -------------------------------------------------------------- */

struct machine {
	unsigned enabled;	/* enabled CPUs listed (kept ones and those over the limit) */
	unsigned cpus;		/* what baretrace starts */
	uint32_t max_apic_id;	/* over enabled CPUs kept */
	bool x2apic;		/* ids need x2APIC mode, or only x2APIC entries */
	unsigned capable;	/* online-capable, not enabled: not started */
};

static void summarise(struct machine *m)
{
	unsigned xapic_entries = 0;

	memset(m, 0, sizeof(*m));
	for (unsigned i = 0; i < info.cpu_count; i++) {
		const struct acpi_cpu *c = &info.cpus[i];
		if (!c->enabled) {
			m->capable += c->online_capable;
			continue;
		}
		m->enabled++;
		xapic_entries += !c->x2apic;
		if (c->apic_id > m->max_apic_id)
			m->max_apic_id = c->apic_id;
	}
	m->x2apic = m->max_apic_id > 0xFE || (m->enabled && !xapic_entries);
	m->cpus = info.has_madt && m->enabled ? m->enabled : 1;
	m->enabled += info.cpu_over_enabled;
}

int acpidump_machine(struct acpidump *d, void (*emit)(const char *))
{
	uint8_t rsdp[36], *xsdt = NULL;
	struct acpidump_table *synth = NULL;
	struct machine m;
	char refs[64] = "", serial[64] = "none", pm[32] = "none", lack[200] = "";
	bool parsed, pit;
	uint64_t top;

	cur = d;
	out = emit;
	acpi_map = map_dump;
	top = place_tables(d, emit);
	parsed = dump_root(d, rsdp) && acpi_parse_root(rsdp, &info, report);
	if (!parsed && d->n < ACPIDUMP_MAX_TABLES) {
		emit("dump: no usable RSDP, RSDT or XSDT in the dump; every table in it taken "
		     "as listed by the root");
		xsdt = make_xsdt(d, top);
		if (xsdt) {
			synth = &d->t[d->n++];
			memcpy(synth->sig, "XSDT", 5);
			synth->addr = top;
			synth->data = xsdt;
			memcpy(&synth->len, xsdt + 4, 4);
			make_rsdp(rsdp, 0, top);
			parsed = acpi_parse_root(rsdp, &info, report);
		}
	}

	for (unsigned i = 0; i < info.table_count; i++)
		if (!info.tables[i].valid)
			emitf(emit, "warning: table %s at 0x%llx failed its checks (line above); "
			      "the kernel skips it", info.tables[i].signature,
			      (unsigned long long)info.tables[i].phys);
	summarise(&m);
	if (!info.has_madt)
		emit("warning: no usable MADT: only the boot CPU runs");
	if (m.enabled > ACPI_MAX_CPUS)
		emitf(emit, "warning: %u enabled CPUs, baretrace starts at most %u",
		      m.enabled, ACPI_MAX_CPUS);
	if (m.capable)
		emitf(emit, "warning: %u CPUs are online-capable but not enabled; not started",
		      m.capable);
	if (info.cpu_skipped > info.cpu_over)
		emitf(emit, "warning: %u MADT processor entries repeat an APIC id or use the "
		      "broadcast id; not CPUs of their own", info.cpu_skipped - info.cpu_over);
	if (info.madt_short)
		emitf(emit, "warning: %u MADT entries are shorter than their type's fields (lines "
		      "above); the kernel skips them, and a CPU one describes is not started",
		      info.madt_short);
	if (m.max_apic_id > 0xFE)
		emitf(emit, "warning: APIC ids up to %u: CPUs above 254 start only in x2APIC mode, "
		      "which the firmware enables on such machines", m.max_apic_id);
	if (!info.has_fadt)
		emit("warning: no usable FADT: no PM timer and no ACPI reset register "
		     "(exit resets through the keyboard controller)");
	if (info.hw_reduced)
		emit("warning: hardware-reduced ACPI: no PM timer, and the legacy PIT may be "
		     "absent (the calibration probes it and says)");
	else if (info.has_fadt && !info.pm_timer_port)
		emit("warning: the FADT names no PM timer: the calibration votes without it");
	if (!info.has_hpet)
		emit("warning: no usable HPET table: the calibration votes without the HPET");
	if (info.has_fadt && !info.has_reset_reg)
		emit("warning: no ACPI reset register: exit resets through the keyboard controller");

	pit = !info.hw_reduced;
	snprintf(refs, sizeof(refs), "%s%s%s", pit ? "PIT, " : "",
		 info.has_hpet ? "HPET, " : "", info.pm_timer_port ? "PM timer, " : "");
	if (refs[0])
		refs[strlen(refs) - 2] = 0;
	if (info.pm_timer_port)
		snprintf(pm, sizeof(pm), "io:0x%x/%u", info.pm_timer_port,
			 info.pm_timer_32bit ? 32 : 24);
	if (info.has_spcr)
		snprintf(serial, sizeof(serial), "spcr:%s:0x%llx/%u",
			 info.spcr_addr.space_id == ACPI_GAS_IO ? "io" : "mem",
			 (unsigned long long)info.spcr_addr.address, info.spcr_baud);
	emitf(emit, "machine: cpus=%u apic=%s max_apic_id=%u hpet=%s pm_timer=%s hw_reduced=%s "
	      "serial=%s ecam=%u", m.cpus > ACPI_MAX_CPUS ? ACPI_MAX_CPUS : m.cpus,
	      m.x2apic ? "x2apic" : "xapic", m.max_apic_id, info.has_hpet ? "yes" : "no", pm,
	      info.hw_reduced ? "yes" : "no", serial, info.mcfg_count);

	free(xsdt);
	if (synth) {
		synth->data = NULL;
		d->n--;
	}
	if (!parsed) {
		emit("verdict: no: no valid RSDT or XSDT and no table to stand in for them: the "
		     "kernel would run one CPU with no HPET or PM timer");
		return 1;
	}
	if (!refs[0]) {
		emit("verdict: no: no timer to calibrate the TSC against in these tables "
		     "(hardware-reduced: no PM timer and perhaps no PIT; no HPET): only CPUID "
		     "leaf 0x15, if the CPU has it, could give its rate; else trace stamps stay raw");
		return 1;
	}
	/* What will not work, and why: each reference missing, the reset. */
	snprintf(lack, sizeof(lack), "%s%s%s%s", info.hw_reduced ?
		 ", the PIT if this machine has none (hardware-reduced ACPI)" : "",
		 !info.has_hpet ? ", the HPET (no usable HPET table)" : "",
		 info.hw_reduced ? ", the PM timer (hardware-reduced ACPI)" :
		 !info.pm_timer_port ? ", the PM timer (none in the FADT)" : "",
		 !info.has_reset_reg ? ", the ACPI reset (exit resets through the keyboard "
		 "controller)" : "");
	emitf(emit, "verdict: boots: the calibration can vote with %s; %u CPU%s start%s%s%s%s",
	      refs, m.cpus, m.cpus == 1 ? "" : "s", m.cpus == 1 ? "s" : "",
	      m.enabled > ACPI_MAX_CPUS ? " (not all: over the limit)" :
	      !info.has_madt ? " (no MADT)" : "", lack[0] ? "; without" : "",
	      lack + (lack[0] ? 1 : 0));
	return 0;
}
