/*
 * The persistent trace range, kernel side (<kernel/persist.h>; the layout
 * and its validator are <trace/persist.h>, the reasons docs/persist.md).
 *
 *   trace.persist=off         (default) buffers from the page allocator
 *   trace.persist=auto        the range at 32 MiB, as large as the buffers
 *                             need; refused if that passes half of RAM
 *   trace.persist=ADDR,SIZE   exactly [ADDR, ADDR + SIZE): page aligned,
 *                             inside one available map entry (K, M, G
 *                             suffixes)
 *
 * TRUST: nothing read from the range is believed before persist_check()
 * has checked it; the only value used unchecked is the previous boot id,
 * and only to number this boot.  The window is out of the page allocator
 * from memory_init() on, so this boot writes nothing in it before the
 * check has read it; once checked (and dumped), it is reused, unless
 * another image wrote it (below).
 *
 * A range another image wrote (a rebuilt kernel after a crash: its build
 * id differs) is evidence this image did not make: persist.foreign= says
 * what becomes of it.  keep (default): named in one line and left alone,
 * the bytes its header claims kept out of the allocator, this boot's
 * buffers from the allocator; decode: the same, and printed first as the
 * previous boot's trace would be (the layout is this format version's);
 * reuse: printed, then recorded over.  It is never overwritten unasked.
 *
 * The header is kept here (hdr, a working copy) and written to the range
 * whenever its contents change (a buffer built, the clocks, the end
 * record, the seal) by persist_header_commit(): into the slot the previous
 * rewrite did not use, magic last, so a reset at any instant of a rewrite
 * leaves the previous version or the new one for the next boot, never a
 * half-written one (<trace/persist.h>, P1).  The seal is two rewrites: the
 * end record first (cheap), then the page CRCs (outside the header: only
 * believed once a valid header says sealed) and the sealed header.
 *
 * The shell's reboot stops the other CPUs for good before the seal
 * (persist_quiesce()): each is parked from its idle loop, interrupts off,
 * so no writer of its is between its guard compare and its commit; a CPU
 * that cannot be parked (busy with a job) is reported, and a record it
 * stores after the seal costs the next boot only the pages it changed.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/tsc.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/dump.h"
#include "kernel/kstring.h"
#include "kernel/persist.h"
#include "kernel/pmm.h"
#include "kernel/tracing.h"
#include "trace/persist.h"

#define AUTO_BASE		(32ull << 20)	/* FACTS.md: kept by SeaBIOS and OVMF */
#define QUIESCE_WAIT_NS		100000000ll	/* for writers to leave their buffers */
#define PARK_WAIT_NS		1000000000ll	/* for each CPU to park (icount: slices of ~100 ms) */
#define SEAL_STALL_NS		60000000000ll	/* inject.seal_stall=: how long the seal waits */

static char opt_persist[48] = "off";
static char persist_dump_sel[32] = "text";
static uint64_t persist_dump_last = 100;

CMDLINE_OPTION(trace_persist, .name = "trace.persist", .type = OPT_STRING, .var = opt_persist,
	       .size = sizeof(opt_persist),
	       .help = "keep the ring buffers across a reset: off, auto (at 32 MiB) or ADDR,SIZE");
CMDLINE_OPTION(persist_dump, .name = "persist.dump", .type = OPT_LIST, .var = persist_dump_sel,
	       .size = sizeof(persist_dump_sel), .choices = dump_choices,
	       .help = "how the previous boot's trace is printed at boot: text, bin or none");
CMDLINE_OPTION(persist_dump_last, .name = "persist.dump.last", .type = OPT_UINT,
	       .var = &persist_dump_last, .min = 0, .max = 100000000,
	       .help = "events in the previous boot's text dump, the most recent; 0 = all");

/* What a range another image wrote becomes (above); index into foreign_choices. */
enum { FOREIGN_KEEP, FOREIGN_DECODE, FOREIGN_REUSE };
static const char *const foreign_choices[] = { "keep", "decode", "reuse", NULL };
static int foreign_sel = FOREIGN_KEEP;

CMDLINE_OPTION(persist_foreign, .name = "persist.foreign", .type = OPT_ENUM,
	       .var = &foreign_sel, .choices = foreign_choices,
	       .help = "a range another image wrote: keep it untouched, decode it (and keep it) "
		       "or reuse it (decoded first)");

static uint64_t seal_stall;

CMDLINE_OPTION(inject_seal_stall, .name = "inject.seal_stall", .type = OPT_UINT,
	       .var = &seal_stall, .min = 0, .max = PERSIST_MAX_CPUS + 1,
	       .help = "test facility: the seal prints a line and waits 60 s before sealing the "
		       "k-th CPU (k = CPUs + 1: before its sealed header); 0 = off");

extern const char __build_id_note[], __build_id_note_end[];

static struct phys_range window;	/* kept from the allocator; empty: off */
static bool window_auto;
static bool active;			/* this boot's buffers are in the range */
static bool kept;			/* another image's range, kept in window */
static struct persist_layout layout;
/* The header's working copy, written to the range by header_commit(). */
static uint8_t hdr_buf[PERSIST_SLOT_BYTES] __attribute__((aligned(64)));
static struct persist_header *const hdr = (struct persist_header *)hdr_buf;
static uint64_t boot_id;
static uint32_t parked[MAX_CPUS];	/* 1 once that CPU parked for the reboot */

/* ---- trace.persist= ---- */

static void refuse(const char *why)
{
	printk("persist: trace.persist=%s refused: %s; buffers are not kept across a reset\n",
	       opt_persist, why);
}

/* The available map entry holding [s, e), or NULL. */
static const struct mem_region *region_of(const struct boot_info *bi, uint64_t s, uint64_t e)
{
	for (unsigned i = 0; i < bi->mmap_count; i++) {
		const struct mem_region *m = &bi->mmap[i];

		if (m->type == MEM_AVAILABLE && m->base <= s && e <= m->base + m->len)
			return m;
	}
	return NULL;
}

bool persist_reserve(const struct boot_info *bi, const struct phys_range *reserved,
		     unsigned nres, struct phys_range *out)
{
	uint64_t base, size, end, max_phys = 0;
	const struct mem_region *m;

	*out = (struct phys_range){ 0, 0 };
	if (!strcmp(opt_persist, "off"))
		return false;
	for (unsigned i = 0; i < bi->mmap_count; i++)
		if (bi->mmap[i].type == MEM_AVAILABLE && bi->mmap[i].base + bi->mmap[i].len > max_phys)
			max_phys = bi->mmap[i].base + bi->mmap[i].len;
	if (max_phys > PMM_MAX_PHYS)
		max_phys = PMM_MAX_PHYS;

	if (!strcmp(opt_persist, "auto")) {
		window_auto = true;
		base = AUTO_BASE;
		end = ALIGN_DOWN(max_phys / 2, PAGE_SIZE);
		m = region_of(bi, base, base + PAGE_SIZE);
		if (end <= base || !m) {
			refuse("no available RAM at 32 MiB below half of RAM (auto needs more than 64 MiB)");
			return false;
		}
		if (m->base + m->len < end)
			end = ALIGN_DOWN(m->base + m->len, PAGE_SIZE);
		for (unsigned i = 0; i < nres; i++) {
			if (reserved[i].start >= end || reserved[i].end <= base)
				continue;
			if (reserved[i].start <= base) {
				refuse("the kernel, its boot information or a module lies at 32 MiB");
				return false;
			}
			end = ALIGN_DOWN(reserved[i].start, PAGE_SIZE);
		}
	} else {
		const char *comma = strchr(opt_persist, ',');

		if (!comma || !cmdline_parse_size(opt_persist, (size_t)(comma - opt_persist), &base) ||
		    !cmdline_parse_size(comma + 1, strlen(comma + 1), &size) || size == 0)
			return refuse("expected off, auto or ADDR,SIZE (e.g. 0x4000000,16M)"), false;
		if (base % PAGE_SIZE || size % PAGE_SIZE)
			return refuse("ADDR and SIZE must be multiples of 4 KiB"), false;
		if (base < PMM_LOW_LIMIT || base + size < base || base + size > max_phys)
			return refuse("the range is not within RAM above 1 MiB"), false;
		if (!region_of(bi, base, base + size))
			return refuse("the range is not inside one available memory map entry"), false;
		for (unsigned i = 0; i < nres; i++)
			if (reserved[i].start < base + size && base < reserved[i].end)
				return refuse("the range overlaps the kernel, its boot information "
					      "or a module"), false;
		end = base + size;
	}
	window = (struct phys_range){ base, end };
	*out = window;
	return true;
}

/* ---- the previous boot ---- */

static const uint8_t *build_id(uint32_t *len)
{
	/* ELF note: namesz, descsz, type, name (padded to 4), desc. */
	const uint32_t *n = (const uint32_t *)__build_id_note;
	uint32_t name = (n[0] + 3) & ~3u;

	if (__build_id_note_end - __build_id_note < 12 ||
	    12 + name + n[1] > (uint64_t)(__build_id_note_end - __build_id_note)) {
		*len = 0;
		return NULL;
	}
	*len = n[1] > PERSIST_BUILD_ID_MAX ? PERSIST_BUILD_ID_MAX : n[1];
	return (const uint8_t *)__build_id_note + 12 + name;
}

struct prev {
	uint64_t pages;			/* pass 1: pages the walk hands out */
	bool dump;			/* pass 2: into the dump's snapshot */
};

static int count_page(void *ctx, uint32_t cpu, const struct rb_walk_page *pg)
{
	struct prev *p = ctx;

	(void)cpu;
	(void)pg;
	p->pages++;
	return 0;
}

static void report_cpu(void *ctx, const struct persist_cpu_result *cr)
{
	(void)ctx;
	if (cr->walked && cr->state_changed)
		printk("persist: cpu=%u previous buffer changed after its seal; each page checked "
		       "against its own seal\n", cr->cpu);
	if (!cr->walked)
		printk("persist: cpu=%u previous buffer refused: %s\n", cr->cpu, cr->why);
	else if (cr->walk.refused)
		printk("persist: cpu=%u previous buffer: %u page(s) refused (%llu events lost): %s\n",
		       cr->cpu, cr->walk.refused, (unsigned long long)cr->walk.lost, cr->why);
}

/* Pass 2: each walked CPU's counters and clock, as the previous boot left them. */
static void dump_cpu(void *ctx, const struct persist_cpu_result *cr)
{
	struct dump_stats ds;
	struct dump_clock clk = cr->rec->clock;

	(void)ctx;
	memset(&ds, 0, sizeof(ds));
	ds.cpu = cr->cpu;
	ds.state = DUMP_STATE_NONE;	/* refused: no buffer to show */
	if (cr->walked) {
		ds.state = cr->st->state;
		ds.entries = cr->walk.events;
		ds.in_buffer = cr->walk.events;
		ds.overrun = cr->st->overrun;
		ds.dropped = cr->st->dropped;
		ds.lost = cr->walk.lost;
		ds.written = cr->walk.events + cr->walk.lost;
	}
	dump_walk_cpu(cr->cpu, &ds, &clk);
}

static bool dump_text_sel(void) { return cmdline_list_has(persist_dump_sel, "text"); }
static bool dump_bin_sel(void) { return cmdline_list_has(persist_dump_sel, "bin"); }
static bool dump_usb_sel(void) { return cmdline_list_has(persist_dump_sel, "usb"); }

static void dump_previous(const uint8_t *mem, const struct persist_expect *ex, uint64_t pages)
{
	const struct persist_header *h = (const struct persist_header *)mem;
	struct persist_result res;
	struct prev p = { 0, true };

	if (cmdline_list_has(persist_dump_sel, "none") || (!dump_text_sel() && !dump_bin_sel() &&
							  !dump_usb_sel()))
		return;
	if (!dump_walk_begin(h->nr_cpus, pages, h->tsc_hz, h->tsc_err_ppb)) {
		printk("persist: previous boot's trace not printed: no memory for %llu pages "
		       "of %u CPUs\n", (unsigned long long)pages, h->nr_cpus);
		return;
	}
	persist_check(mem, ex, dump_walk_page, dump_cpu, &p, &res);
	dump_walk_end();
	printk("persist: previous boot's trace follows (persist.dump=%s persist.dump.last=%llu)\n",
	       persist_dump_sel, (unsigned long long)persist_dump_last);
	dump_walked(dump_text_sel(), dump_bin_sel(), dump_usb_sel(), persist_dump_last, NULL);
	printk("persist: end of previous boot's trace\n");
}

/* A valid range's two summary lines (res: its VALID verdict; h: its header). */
static void report_valid(const struct persist_header *h, const struct persist_result *res)
{
	printk("persist: previous_boot=%llu cpus=%u events=%llu lost=%llu end=%s\n",
	       (unsigned long long)res->boot_id, res->nr_cpus, (unsigned long long)res->events,
	       (unsigned long long)res->lost, persist_end_names[res->end]);
	printk("persist: previous boot: end_cpu=%u sealed=%s cpus_read=%u/%u pages_refused=%u\n",
	       h->end_cpu, res->sealed ? "yes" : "no", res->cpus_ok, res->nr_cpus,
	       res->pages_refused);
}

/* Hex of a build id into buf (2 * PERSIST_BUILD_ID_MAX + 1 bytes); "none" if empty. */
static const char *hex_id(char *buf, const uint8_t *id, uint32_t len)
{
	static const char digits[] = "0123456789abcdef";
	uint32_t i;

	if (!id || !len)
		return "none";
	for (i = 0; i < len && i < PERSIST_BUILD_ID_MAX; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 15];
	}
	buf[2 * i] = 0;
	return buf;
}

/*
 * Another image's range (res: its FOREIGN verdict): named, then decoded or
 * not as persist.foreign= says.  True if it is to be kept: this boot does
 * not record into it.
 */
static bool foreign_previous(const uint8_t *mem, struct persist_expect *ex,
			     const struct persist_result *res)
{
	char theirs[2 * PERSIST_BUILD_ID_MAX + 1], ours[2 * PERSIST_BUILD_ID_MAX + 1];
	struct persist_result again;
	struct prev p = { 0, false };

	printk("persist: previous boot's buffer written by another kernel image: build_id=%s "
	       "boot=%llu end=%s (this image: build_id=%s)\n",
	       hex_id(theirs, res->build_id, res->build_id_len), (unsigned long long)res->boot_id,
	       persist_end_names[res->end], hex_id(ours, ex->build_id, ex->build_id_len));
	if (foreign_sel == FOREIGN_KEEP) {
		printk("persist: another image's range kept, not read (persist.foreign=keep; "
		       "decode to print it, reuse to record over it)\n");
		return true;
	}
	ex->any_image = true;	/* the same checks, P1 to P3, this image's own get */
	persist_check(mem, ex, count_page, report_cpu, &p, &again);
	if (again.verdict != PERSIST_VALID)
		printk("persist: another image's range not decoded: %s\n", again.why);
	else {
		report_valid((const struct persist_header *)mem, &again);
		dump_previous(mem, ex, p.pages);
	}
	if (foreign_sel == FOREIGN_DECODE) {
		printk("persist: another image's range kept (persist.foreign=decode; reuse to "
		       "record over it)\n");
		return true;
	}
	printk("persist: another image's range reused (persist.foreign=reuse)\n");
	return false;
}

/*
 * Reads the window as the previous boot left it; returns its boot id or 0.
 * *keep: the range is another image's, to be left alone (*size: its bytes
 * from window.start, as its header says).
 */
static uint64_t check_previous(bool *keep, uint64_t *size)
{
	const uint8_t *mem = (const uint8_t *)(uintptr_t)window.start;
	const struct persist_header *h = (const struct persist_header *)mem;
	struct persist_expect ex = { .base = window.start, .size = window.end - window.start };
	struct persist_result res;
	struct prev p = { 0, false };

	*keep = false;
	ex.build_id = build_id(&ex.build_id_len);
	persist_check(mem, &ex, count_page, report_cpu, &p, &res);
	switch (res.verdict) {
	case PERSIST_NONE:
		printk("persist: no previous boot's buffer at 0x%llx\n",
		       (unsigned long long)window.start);
		return 0;
	case PERSIST_REJECTED:
		printk("persist: previous boot's buffer rejected: %s\n", res.why);
		return h->boot_id;	/* unchecked: only to number this boot */
	case PERSIST_FOREIGN:
		*keep = foreign_previous(mem, &ex, &res);
		*size = res.size;
		return res.boot_id;
	}
	report_valid(h, &res);
	dump_previous(mem, &ex, p.pages);
	return res.boot_id;
}

/* ---- this boot ---- */

/* hdr into the range: atomic for the next boot (P1 in <trace/persist.h>). */
static void header_commit(void)
{
	persist_header_commit((uint8_t *)(uintptr_t)layout.base, hdr,
			      sizeof(*hdr) + (uint64_t)hdr->nr_cpus * sizeof(struct persist_cpu));
}

/* A fresh header for nr_cpus CPUs of n pages over [window.start, + size). */
static bool lay_out(uint64_t size, uint32_t nr_cpus, uint32_t n)
{
	uint32_t len;
	const uint8_t *id = build_id(&len);

	if (!persist_layout(&layout, window.start, size, nr_cpus, n))
		return false;
	/* Both slots cleared: the previous boot's range has been read. */
	memset((void *)(uintptr_t)window.start, 0, layout.header_bytes);
	memset(hdr_buf, 0, sizeof(hdr_buf));
	hdr->magic = PERSIST_MAGIC;
	hdr->version = PERSIST_VERSION;
	if (id)
		memcpy(hdr->build_id, id, len);
	hdr->build_id_len = len;
	hdr->nr_cpus = nr_cpus;
	hdr->boot_id = boot_id;
	hdr->base = layout.base;
	hdr->size = layout.size;
	hdr->nr_pages = n;
	hdr->cpu_area_pages = (uint32_t)(layout.area_bytes / PERSIST_PAGE);
	hdr->tsc_hz = tsc.hz;
	hdr->tsc_err_ppb = tsc.err_ppb;
	header_commit();
	return true;
}

static void give_back(uint64_t from)
{
	if (from < window.end)
		pmm_free(from, (window.end - from) / PAGE_SIZE);
	window.end = from;
}

uint32_t persist_boot(uint32_t nr_cpus, uint32_t want)
{
	uint64_t prev, wsize = window.end - window.start;
	uint32_t n;

	uint64_t keep_size = 0;
	bool keep;

	if (window.end <= window.start)
		return 0;
	prev = check_previous(&keep, &keep_size);
	boot_id = prev + 1;
	if (keep) {
		/*
		 * Another image's range, not to be overwritten: what its header
		 * (CRC checked) says it spans stays out of the allocator, the
		 * rest of the window goes back.  Never less than the header
		 * slots, never more than the window.
		 */
		keep_size = ALIGN_UP(keep_size, PAGE_SIZE);
		if (keep_size < (uint64_t)PERSIST_SLOTS * PERSIST_SLOT_BYTES || keep_size > wsize)
			keep_size = wsize;
		give_back(window.start + keep_size);
		kept = true;
		printk("persist: this boot's buffers are not kept across a reset (another image's "
		       "range at 0x%llx-0x%llx kept)\n", (unsigned long long)window.start,
		       (unsigned long long)window.end);
		return 0;
	}
	n = persist_fit_pages(wsize, nr_cpus, want);
	if (n < 2) {
		printk("persist: %llu KiB at 0x%llx hold no ring for %u CPUs; buffers are not kept "
		       "across a reset\n", (unsigned long long)(wsize >> 10),
		       (unsigned long long)window.start, nr_cpus);
		give_back(window.start);
		return 0;
	}
	if (n < want)
		printk("persist: trace.pages=%u does not fit %llu KiB for %u CPUs; using %u\n",
		       want, (unsigned long long)(wsize >> 10), nr_cpus, n);
	persist_layout(&layout, window.start, wsize, nr_cpus, n);
	if (window_auto)	/* auto: keep what the layout takes, give the rest back */
		give_back(window.start + layout.used);
	lay_out(window.end - window.start, nr_cpus, n);
	active = true;
	printk("persist: this_boot=%llu range=0x%llx-0x%llx cpus=%u pages_per_cpu=%u\n",
	       (unsigned long long)boot_id, (unsigned long long)window.start,
	       (unsigned long long)window.end, nr_cpus, n);
	return n;
}

uint32_t persist_relayout(uint32_t want)
{
	uint64_t size = window.end - window.start;
	uint32_t n;

	if (!active)
		return 0;
	n = persist_fit_pages(size, layout.nr_cpus, want);
	if (n < want)
		printk("persist: trace.pages=%u does not fit the range (%llu KiB) for %u CPUs; "
		       "using %u\n", want, (unsigned long long)(size >> 10), layout.nr_cpus, n);
	lay_out(size, layout.nr_cpus, n);
	return n;
}

bool persist_active(void)
{
	return active;
}

bool persist_cpu_area(uint32_t c, uint32_t n, struct rb_cpu_buffer **cb, size_t *cb_size,
		      void ***pages)
{
	uint8_t *area;
	void **tab;

	if (!active || c >= layout.nr_cpus || n != layout.nr_pages)
		return false;
	area = (uint8_t *)(uintptr_t)(layout.base + persist_cpu_off(&layout, c));
	tab = (void **)(area + layout.table_off);
	for (uint32_t i = 0; i <= n; i++)
		tab[i] = area + layout.data_off + (uint64_t)i * PERSIST_PAGE;
	*cb = (struct rb_cpu_buffer *)(area + layout.cb_off);
	*cb_size = layout.table_off - layout.cb_off;
	*pages = tab;
	return true;
}

void persist_cpu_present(uint32_t c, bool present)
{
	if (!active || c >= layout.nr_cpus)
		return;
	hdr->cpu[c].present = present;
	if (present)
		dump_cpu_clock(c, &hdr->cpu[c].clock);
	header_commit();
}

/* The clocks as the kernel sees them now (trust included) into hdr. */
static void pull_clocks(void)
{
	hdr->tsc_hz = tsc.hz;
	hdr->tsc_err_ppb = tsc.err_ppb;
	for (uint32_t c = 0; c < layout.nr_cpus; c++)
		if (hdr->cpu[c].present)
			dump_cpu_clock(c, &hdr->cpu[c].clock);
}

void persist_update(void)
{
	if (!active)
		return;
	pull_clocks();
	header_commit();
}

/*
 * Run on each other CPU from its idle loop (smp_call_async()): not nested
 * in any writer of its.  Interrupts off for good: recording is already off
 * (tracing_stop() before the call), so no writer of this CPU runs again,
 * NMIs included (they see recording off).
 */
static void park_cpu(void *arg)
{
	(void)arg;
	irq_disable();
	__atomic_store_n(&parked[this_cpu()->cpu], 1, __ATOMIC_RELEASE);
	for (;;)
		cpu_halt();
}

void persist_quiesce(void)
{
	uint32_t me = this_cpu()->cpu;
	long long t0;

	if (!active)
		return;
	irq_disable();	/* this CPU: no interrupt handler writes from here on */
	for (uint32_t c = 0; c < cpu_count; c++) {
		long long p0 = tsc_now_ns();
		long i = 0;

		if (c == me || !cpus[c] || !cpus[c]->online)
			continue;
		if (!smp_call_async(c, park_cpu, NULL)) {
			printk("persist: cpu=%u busy, not stopped; a record it stores after the seal "
			       "costs the pages it changes\n", c);
			continue;
		}
		while (!__atomic_load_n(&parked[c], __ATOMIC_ACQUIRE)) {
			if (p0 < 0 ? ++i > 100000000 : tsc_now_ns() - p0 > PARK_WAIT_NS) {
				printk("persist: cpu=%u did not stop within %lld ms; a record it stores "
				       "after the seal costs the pages it changes\n", c,
				       PARK_WAIT_NS / 1000000);
				break;
			}
			cpu_relax();
		}
	}
	t0 = tsc_now_ns();
	for (uint32_t c = 0; c < cpu_count; c++) {
		struct rb_cpu_buffer *cb = ring_buffer_cpu(&trace_rb, c);

		if (c != me && parked[c])
			continue;	/* stopped between events: nothing can be mid-way */
		while (__atomic_load_n(&cb->nest, __ATOMIC_ACQUIRE) & RB_NEST_WRITERS) {
			if (t0 < 0 || tsc_now_ns() - t0 > QUIESCE_WAIT_NS) {
				printk("persist: cpu=%u still has a writer inside its buffer; "
				       "its tail page will be dropped\n", c);
				break;
			}
			cpu_relax();
		}
	}
}

/* inject.seal_stall=: the k-th point of the seal says so and waits (bounded). */
static void seal_point(uint32_t k, uint32_t cpu)
{
	long long t0;

	if (seal_stall != k)
		return;
	if (cpu < layout.nr_cpus)
		printk("persist: seal stalled before cpu=%u (inject.seal_stall=%u)\n", cpu, k);
	else
		printk("persist: seal stalled before its header (inject.seal_stall=%u)\n", k);
	t0 = tsc_now_ns();
	for (long i = 0; t0 >= 0 ? tsc_now_ns() - t0 < SEAL_STALL_NS : i < 2000000000l; i++)
		cpu_relax();
	printk("persist: seal stall expired after %lld s; sealing goes on\n",
	       SEAL_STALL_NS / 1000000000);
}

void persist_mark_end(uint32_t end)
{
	uint32_t k = 0;

	if (!active || end >= PERSIST_END_COUNT)
		return;
	/* The end record and the clocks as they are now (a CPU the clock
	 * watchdog untrusted stays so), unsealed: a reset during the seal
	 * leaves this version. */
	hdr->end = end;
	hdr->end_cpu = this_cpu()->cpu;
	pull_clocks();
	header_commit();
	for (uint32_t c = 0; c < layout.nr_cpus; c++) {
		if (!hdr->cpu[c].present)
			continue;
		seal_point(++k, c);
		persist_seal_cpu(&layout, (uint8_t *)(uintptr_t)(layout.base +
				 persist_cpu_off(&layout, c)), &hdr->cpu[c]);
	}
	seal_point(++k, layout.nr_cpus);
	hdr->sealed = 1;
	header_commit();
	printk("persist: end=%s sealed this_boot=%llu\n", persist_end_names[end],
	       (unsigned long long)boot_id);
}

void persist_status(void)
{
	if (kept) {
		cprintf("persist: kept another image's range=0x%llx-0x%llx (trace.persist=%s "
			"persist.foreign=%s)\n", (unsigned long long)window.start,
			(unsigned long long)window.end, opt_persist, foreign_choices[foreign_sel]);
		return;
	}
	if (!active) {
		cprintf("persist: off (trace.persist=%s)\n", opt_persist);
		return;
	}
	cprintf("persist: this_boot=%llu range=0x%llx-0x%llx cpus=%u pages_per_cpu=%u\n",
		(unsigned long long)boot_id, (unsigned long long)window.start,
		(unsigned long long)window.end, layout.nr_cpus, layout.nr_pages);
}
