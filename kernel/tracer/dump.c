/*
 * Dumps. A dump first takes a snapshot: every CPU's tail page is ended
 * (flush, on each CPU), then every complete page is taken from every
 * buffer and copied, with the loss the reader was told of, the CPU's
 * counters and its clock. The snapshot is then printed as text (through
 * trace/text.c, the same code the host decoder prints with) and/or as
 * binary frames (trace/dump_write.c) written raw to the serial console(s).
 *
 * Taking pages consumes them, as ftrace's trace_pipe does. So that text and
 * binary show the same events, a dump that finds nothing new prints the
 * previous snapshot again: `dump text` then `dump bin` describe one trace.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/tsc.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/dump.h"
#include "kernel/ksyms.h"
#include "kernel/kstring.h"
#include "kernel/pmm.h"
#include "kernel/trace_printk.h"
#include "kernel/trace_ctl.h"
#include "kernel/tracing.h"
#include "trace/dump_rb.h"
#include "trace/dump_write.h"
#include "trace/text.h"

static char dump_sel[32] = "text";
static const char *const dump_choices[] = { "text", "bin", "none", NULL };
static uint64_t dump_last = 200;
CMDLINE_OPTION(dump, .name = "dump", .type = OPT_LIST, .var = dump_sel,
	       .size = sizeof(dump_sel), .choices = dump_choices,
	       .help = "what run=demo prints at its end: text, bin (comma list) or none");
CMDLINE_OPTION(dump_last, .name = "dump.last", .type = OPT_UINT, .var = &dump_last,
	       .min = 0, .max = 100000000, .help = "events in the text dump, the most recent; 0 = all");

struct snap_cpu {
	uint32_t npages;		/* pages copied */
	void **pages;			/* their copies, in the order taken */
	uint64_t *lost;			/* overrun + dropped before each */
	uint64_t *lost_overrun;		/* ... the overrun part */
	uint64_t *lost_dropped;		/* ... the dropped part */
	struct dump_stats stats;	/* counters at the snapshot */
	struct dump_clock clock;	/* conversion and trust */
};

static struct snap_cpu snap[MAX_CPUS];
static uint8_t *pool;			/* page copies */
static uint64_t pool_pages;		/* its size in pages */
static uint64_t *meta;			/* lost arrays, 3 per page slot */
static uint64_t meta_pages;
static void **ptrs;			/* page pointer array */
static uint64_t ptr_pages;
static void *scratch;			/* trace_text_write's */
static size_t scratch_size;
static uint16_t dump_id;
static bool have_snapshot;
static bool no_cpu_calls;		/* a panic: the other CPUs are stopped */

static void *alloc(uint64_t pages)
{
	uint64_t p = no_cpu_calls ? pmm_alloc_nowait(pages, 1) : pmm_alloc(pages, 1);

	return p ? (void *)(uintptr_t)p : NULL;
}

/* Room for every page every buffer can hold (ring + reader page). */
static bool ensure_pool(void)
{
	uint64_t need = (uint64_t)(trace_pages + 1) * cpu_count;
	size_t ss = trace_text_scratch_size(cpu_count);

	if (pool && pool_pages >= need)
		return true;
	if (pool) {
		pmm_free((uintptr_t)pool, pool_pages);
		pmm_free((uintptr_t)meta, meta_pages);
		pmm_free((uintptr_t)ptrs, ptr_pages);
	}
	pool_pages = need;
	meta_pages = (need * 3 * sizeof(uint64_t) + PAGE_SIZE - 1) / PAGE_SIZE;
	ptr_pages = (need * sizeof(void *) + PAGE_SIZE - 1) / PAGE_SIZE;
	pool = alloc(pool_pages);
	meta = alloc(meta_pages);
	ptrs = alloc(ptr_pages);
	if (!scratch || scratch_size < ss) {
		scratch_size = ALIGN_UP(ss, PAGE_SIZE);
		scratch = alloc(scratch_size / PAGE_SIZE);
	}
	if (!pool || !meta || !ptrs || !scratch) {
		cprintf("dump: no memory for a snapshot of %llu pages\n", (unsigned long long)need);
		pool = NULL;
		return false;
	}
	return true;
}

static bool take_snapshot(void)
{
	static uint64_t first[MAX_CPUS], count[MAX_CPUS];
	uint64_t slot = 0;
	struct rb_read rd;

	if (!ensure_pool())
		return false;
	if (!no_cpu_calls)
		tracing_flush_all();	/* at a panic each CPU flushed in its NMI */
	/* Copy every complete page; the pool holds as much as the rings can. */
	for (unsigned c = 0; c < cpu_count; c++) {
		struct rb_cpu_buffer *cb = ring_buffer_cpu(&trace_rb, c);
		first[c] = slot;
		while (slot < pool_pages && ring_buffer_read_page(cb, &rd) == 1) {
			uint8_t *copy = pool + slot * PAGE_SIZE;
			memcpy(copy, rd.page, rd.page_size);
			ptrs[slot] = copy;
			meta[slot] = rd.lost_overrun + rd.lost_dropped;
			meta[pool_pages + slot] = rd.lost_overrun;
			meta[2 * pool_pages + slot] = rd.lost_dropped;
			slot++;
		}
		count[c] = slot - first[c];
	}
	if (slot == 0 && have_snapshot)
		return true;	/* nothing new: the last snapshot stands (pool untouched) */
	for (unsigned c = 0; c < cpu_count; c++) {
		struct snap_cpu *s = &snap[c];
		struct percpu *pc = cpus[c];
		struct rb_stats st;

		s->npages = (uint32_t)count[c];
		s->pages = ptrs + first[c];
		s->lost = meta + first[c];
		s->lost_overrun = meta + pool_pages + first[c];
		s->lost_dropped = meta + 2 * pool_pages + first[c];
		ring_buffer_stats(ring_buffer_cpu(&trace_rb, c), &st);
		dump_stats_from_rb(&s->stats, c, &st);
		memset(&s->clock, 0, sizeof(s->clock));
		s->clock.cpu = c;
		if (pc && tsc.hz && clock_latch_read(&pc->clock, &s->clock.conv))
			memset(&s->clock.conv, 0, sizeof(s->clock.conv)); /* torn: say "none" */
		else if (pc && tsc.hz) {
			s->clock.skew_cycles = pc->tsc_skew;
			s->clock.skew_uncert_cycles = pc->tsc_skew_uncert;
			if (pc->tsc_trusted)
				s->clock.flags |= DUMP_CLOCK_TRUSTED;
		}
	}
	have_snapshot = true;
	dump_id++;
	return true;
}

/* The kernel's symbols, for code addresses in events: in text, and sent in dumps. */
static const char *sym_lookup(const void *ctx, uint64_t addr, uint64_t *offset)
{
	(void)ctx;
	return ksym_lookup(addr, offset);
}

static const char *printk_format(const void *ctx, uint64_t addr)
{
	(void)ctx;
	return trace_printk_format(addr);
}

static const struct trace_symbols kernel_syms = { sym_lookup, NULL, printk_format };

static const char *sym_at(const void *ctx, uint32_t i, uint64_t *addr)
{
	(void)ctx;
	return ksym_at(i, addr);
}

static const char *fmt_at(const void *ctx, uint32_t i, uint64_t *addr)
{
	(void)ctx;
	*addr = (uint64_t)(uintptr_t)__start_trace_printk_fmts[i];
	return __start_trace_printk_fmts[i];
}

static void sink_text(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	console_write(buf, len);
}

static void sink_raw(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	console_write_raw_held(buf, len);	/* dump_bin holds the console */
}

bool dump_text(uint32_t cpu, uint64_t last)
{
	/* Static: MAX_CPUS entries are 14 KiB, most of the 16 KiB boot stack;
	 * dumps run one at a time, as the snapshot they read is shared too. */
	static struct trace_text_cpu tc[MAX_CPUS];
	struct trace_text_opts opts = { .last = last, .cpu = cpu == DUMP_ALL_CPUS ?
					TRACE_TEXT_ALL_CPUS : cpu, .syms = &kernel_syms,
					.enabled = trace_events_enabled() };
	struct trace_sink sink = { sink_text, NULL };
	struct trace_text_summary sum;

	if (!take_snapshot())
		return false;
	for (unsigned c = 0; c < cpu_count; c++) {
		struct snap_cpu *s = &snap[c];
		tc[c] = (struct trace_text_cpu){
			.cpu = c,
			.clock_state = trace_clock_state(&s->clock),
			.clock = &s->clock.conv,
			.stats = &s->stats,
			.page_size = RB_PAGE_SIZE_DEFAULT,
			.nr_pages = s->npages,
			.pages = (const void *const *)s->pages,
			.lost = s->lost,
		};
	}
	if (trace_text_write(tc, cpu_count, &opts, scratch, scratch_size, &sink, &sum)) {
		cprintf("dump: the text formatter refused the snapshot\n");
		return false;
	}
	return true;
}

bool dump_bin(uint32_t cpu)
{
	struct trace_sink sink = { sink_raw, NULL };
	struct dump_writer w;
	struct dump_begin begin = {
		.nr_cpus = cpu_count, .page_size = RB_PAGE_SIZE_DEFAULT, .tsc_hz = tsc.hz,
		.tsc_err_ppb = tsc.err_ppb, .start_cycles = rdtsc(),
	};

	uint64_t flags;

	if (!take_snapshot())
		return false;
	flags = console_hold();
	dump_write_begin(&w, &sink, dump_id, &begin);
	dump_write_events(&w, &trace_builtin_catalog, trace_events_enabled());
	{
		struct dump_syms_src src = { ksym_count(), ksym_end(), sym_at, NULL };
		struct dump_syms_src fmts = {
			(uint32_t)(__stop_trace_printk_fmts - __start_trace_printk_fmts), 0, fmt_at, NULL };
		dump_write_symbols(&w, &src);
		dump_write_printk_formats(&w, &fmts);
	}
	for (unsigned c = 0; c < cpu_count; c++)
		dump_write_clock(&w, &snap[c].clock);
	for (unsigned c = 0; c < cpu_count; c++) {
		if (cpu != DUMP_ALL_CPUS && c != cpu)
			continue;
		for (uint32_t i = 0; i < snap[c].npages; i++)
			dump_write_page(&w, c, snap[c].pages[i], RB_PAGE_SIZE_DEFAULT,
					snap[c].lost_overrun[i], snap[c].lost_dropped[i]);
	}
	for (unsigned c = 0; c < cpu_count; c++)
		dump_write_stats(&w, &snap[c].stats);
	dump_write_end(&w);
	console_release(flags);
	cprintf("\ndump: bin id=%u frames=%u pages=%u events=%llu\n", dump_id, w.seq, w.pages,
		(unsigned long long)w.events);
	return true;
}

bool dump_default(void)
{
	bool ok = true;

	if (cmdline_list_has(dump_sel, "text"))
		ok = dump_text(DUMP_ALL_CPUS, dump_last) && ok;
	if (cmdline_list_has(dump_sel, "bin"))
		ok = dump_bin(DUMP_ALL_CPUS) && ok;
	return ok;
}

bool dump_panic(bool bin, uint64_t last)
{
	no_cpu_calls = true;
	return bin ? dump_bin(DUMP_ALL_CPUS) : dump_text(DUMP_ALL_CPUS, last);
}
