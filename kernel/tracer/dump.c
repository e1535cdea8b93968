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
 *
 * A walked snapshot takes nothing (<trace/ring_walk.h>): the pages are
 * copied as a reader would have taken them, the tail page up to its write
 * offset, and the buffers are left as they were. A panic dumps this way,
 * so that the next boot still finds every event in the persistent range
 * (docs/persist.md), and the previous boot's trace is read this way from
 * the range (dump_walk_*, called by kernel/tracer/persist.c).
 */
#include <stddef.h>
#include <arch/clockwd.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/dump.h"
#include "kernel/ksyms.h"
#include "kernel/kstring.h"
#include "kernel/pmm.h"
#include "kernel/record.h"
#include "kernel/trace_printk.h"
#include "kernel/trace_ctl.h"
#include "kernel/tracing.h"
#include "trace/dump_rb.h"
#include "trace/dump_write.h"
#include "lib/format.h"
#include "trace/ring_walk.h"
#include "trace/text.h"
#include <usb/stick.h>

static char dump_sel[32] = "text";
/* dump=, panic.dump= and persist.dump= all choose among these. */
const char *const dump_choices[] = { "text", "bin", "usb", "none", NULL };
static uint64_t dump_last = 200;
CMDLINE_OPTION(dump, .name = "dump", .type = OPT_LIST, .var = dump_sel,
	       .size = sizeof(dump_sel), .choices = dump_choices,
	       .help = "what run=demo dumps at its end: text, bin, usb (comma list) or none");
CMDLINE_OPTION(dump_last, .name = "dump.last", .type = OPT_UINT, .var = &dump_last,
	       .min = 0, .max = 100000000, .help = "events in the text dump, the most recent; 0 = all");

/*
 * The binary encoding: PACK frames (<trace/dump_pack.h>, about a third of
 * the bytes) or the plain frames of kernels before them, which the
 * decoder reads alike.  dump=bin writes one dump per encoding listed, in
 * this order, of the same snapshot (a test compares them); the stick and
 * trace.record= use PACK frames when listed.  dump.measure=1 first says
 * what each encoding costs (docs/benchmarks.md).
 */
static const char *const encoding_names[] = { "pack", "plain", NULL };
static char dump_enc_sel[16] = "pack";
CMDLINE_OPTION(dump_encoding, .name = "dump.encoding", .type = OPT_LIST, .var = dump_enc_sel,
	       .size = sizeof(dump_enc_sel), .choices = encoding_names,
	       .help = "binary dumps in PACK frames, plain ones, or both (dump=bin: one each)");
static uint64_t dump_measure;
CMDLINE_OPTION(dump_measure, .name = "dump.measure", .type = OPT_UINT, .var = &dump_measure,
	       .min = 0, .max = 1,
	       .help = "1: before dump=bin, count each encoding's bytes and TSC cycles");

/* The snapshot dumps' packer (one dump at a time: the console or the stick is held). */
static struct dump_pack dump_pack_mem;

struct dump_pack *dump_packer(struct dump_pack *mem)
{
	return cmdline_list_has(dump_enc_sel, "pack") ? mem : NULL;
}

struct snap_cpu {
	uint32_t npages;		/* pages copied */
	uint64_t first;			/* walked snapshots: its first slot in the pool */
	void **pages;			/* their copies, in the order taken */
	uint64_t *lost;			/* overrun + dropped before each */
	uint64_t *lost_overrun;		/* ... the overrun part */
	uint64_t *lost_dropped;		/* ... the dropped part */
	struct dump_stats stats;	/* counters at the snapshot */
	struct dump_clock clock;	/* conversion and trust */
	bool has_trust;			/* trusted until trust.from_ns (clock untrusted) */
	struct dump_trust trust;	/* when and why the clock watchdog ended it */
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
static uint32_t snap_ncpus;		/* CPUs the snapshot describes */
static uint64_t snap_tsc_hz, snap_tsc_err_ppb;	/* the clock of the boot that wrote it */
static bool snap_has_calib;		/* this boot's calibration vote was disputed */
static struct dump_calib snap_calib;	/* ... its figures */
static uint64_t walk_slot;		/* walked snapshots: the next free pool slot */

static void *alloc(uint64_t pages)
{
	uint64_t p = no_cpu_calls ? pmm_alloc_nowait(pages, 1) : pmm_alloc(pages, 1);

	return p ? (void *)(uintptr_t)p : NULL;
}

/* Room for need pages of nr_cpus CPUs (a reader's snapshot: ring + reader page each). */
static bool ensure_pool(uint64_t need, uint32_t nr_cpus)
{
	size_t ss = trace_text_scratch_size(nr_cpus);

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

/*
 * A TSC that went backwards in a CPU's buffer (clamped by a writer, or
 * found by the reader) is one whose stamps cannot be trusted, whatever
 * the bring-up measured: the U legend says so.
 */
static void distrust_backwards(const struct dump_stats *ds, struct dump_clock *clk)
{
	if (ds->clock_backwards)
		clk->flags &= ~DUMP_CLOCK_TRUSTED;
}

_Static_assert((int)CLOCK_UNTRUST_DRIFT == DUMP_TRUST_DRIFT &&
	       (int)CLOCK_UNTRUST_SKEW == DUMP_TRUST_SKEW &&
	       (int)CLOCK_UNTRUST_MOVED == DUMP_TRUST_MOVED,
	       "the watchdog's reasons are the dump's");

/*
 * When the clock watchdog took an untrusted CPU's trust away: its events
 * before that instant are as good as any.  Not for a clock that went
 * backwards in the buffer: when is unknown, so every event is suspect.
 */
static bool cpu_trust(uint32_t c, const struct dump_clock *clk, const struct dump_stats *st,
		      struct dump_trust *out)
{
	*out = (struct dump_trust){ .cpu = c };
	return !(clk->flags & DUMP_CLOCK_TRUSTED) && !st->clock_backwards &&
	       clock_watchdog_untrusted(c, &out->from_ns, &out->found_ns, &out->why);
}

/* A disputed calibration vote, as dumps carry it (false: not disputed). */
static bool calib_now(struct dump_calib *k)
{
	if (!tsc.disputed)
		return false;
	*k = (struct dump_calib){
		.flags = DUMP_CALIB_DISPUTED, .hz = tsc.hz, .err_ppb = tsc.err_ppb,
		.vote_err_ppb = tsc.vote_err_ppb, .tol_ppb = tsc.tol_ppb,
		.spread_ppb = tsc.spread_ppb,
	};
	ksnprintf(k->ref, sizeof(k->ref), "%s", tsc.ref);
	ksnprintf(k->used, sizeof(k->used), "%s", tsc.used);
	ksnprintf(k->left_out, sizeof(k->left_out), "%s", tsc.left_out);
	return true;
}

static bool take_snapshot(void)
{
	static uint64_t first[MAX_CPUS], count[MAX_CPUS];
	uint64_t slot = 0;
	struct rb_read rd;

	if (!ensure_pool((uint64_t)(trace_pages + 1) * cpu_count, cpu_count))
		return false;
	tracing_flush_all();
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
	snap_ncpus = cpu_count;
	snap_tsc_hz = tsc.hz;
	snap_tsc_err_ppb = tsc.err_ppb;
	snap_has_calib = calib_now(&snap_calib);
	for (unsigned c = 0; c < cpu_count; c++) {
		struct snap_cpu *s = &snap[c];
		struct rb_stats st;

		s->npages = (uint32_t)count[c];
		s->pages = ptrs + first[c];
		s->lost = meta + first[c];
		s->lost_overrun = meta + pool_pages + first[c];
		s->lost_dropped = meta + 2 * pool_pages + first[c];
		ring_buffer_stats(ring_buffer_cpu(&trace_rb, c), &st);
		dump_stats_from_rb(&s->stats, c, &st);
		dump_cpu_clock(c, &s->clock);
		distrust_backwards(&s->stats, &s->clock);
		s->has_trust = cpu_trust(c, &s->clock, &s->stats, &s->trust);
	}
	have_snapshot = true;
	dump_id++;
	return true;
}

void dump_cpu_clock(uint32_t c, struct dump_clock *out)
{
	struct percpu *pc = c < cpu_count ? cpus[c] : NULL;

	memset(out, 0, sizeof(*out));
	out->cpu = c;
	if (pc && tsc.hz && clock_latch_read(per_cpu_ptr(tsc_clock, c), &out->conv))
		memset(&out->conv, 0, sizeof(out->conv));	/* torn: say "none" */
	else if (pc && tsc.hz) {
		const struct tsc_skew *sk = percpu_area_ptr(pc, tsc_skew);

		out->skew_cycles = sk->skew;
		out->skew_uncert_cycles = sk->uncert;
		if (sk->trusted)
			out->flags |= DUMP_CLOCK_TRUSTED;
	}
}

/* ---- walked snapshots: nothing taken ---- */

bool dump_walk_begin(uint32_t nr_cpus, uint64_t max_pages, uint64_t tsc_hz, uint64_t err_ppb)
{
	if (nr_cpus == 0 || nr_cpus > MAX_CPUS || !ensure_pool(max_pages ? max_pages : 1, nr_cpus))
		return false;
	memset(snap, 0, sizeof(snap[0]) * nr_cpus);
	for (uint32_t c = 0; c < nr_cpus; c++)
		snap[c].stats.cpu = snap[c].clock.cpu = c;
	snap_ncpus = nr_cpus;
	snap_tsc_hz = tsc_hz;
	snap_tsc_err_ppb = err_ppb;
	snap_has_calib = false;		/* known for this boot only: walk_live() */
	walk_slot = 0;
	have_snapshot = false;	/* the pool's old contents are gone */
	return true;
}

/*
 * One walked page of cpu into the snapshot. A CPU's pages come together,
 * oldest first. The copy's header gets the commit and count the walk read
 * (the tail page's header says 0 until its page ends), so the text and
 * binary formats read it as a page a reader took. Nonzero: no more room.
 */
int dump_walk_page(void *ctx, uint32_t cpu, const struct rb_walk_page *pg)
{
	struct rb_page_header *h;
	struct snap_cpu *s;
	uint64_t i = walk_slot;
	uint8_t *copy;

	(void)ctx;
	if (cpu >= snap_ncpus || i >= pool_pages)
		return 1;
	s = &snap[cpu];
	if (s->npages == 0)
		s->first = i;
	else if (s->first + s->npages != i)
		return 1;	/* not this CPU's run of slots: refuse rather than mix */
	copy = pool + i * PAGE_SIZE;
	memcpy(copy, pg->page, PAGE_SIZE);
	h = (struct rb_page_header *)copy;
	h->commit = pg->commit;
	h->entries = pg->entries;
	ptrs[i] = copy;
	meta[i] = pg->lost_overrun + pg->lost_dropped;
	meta[pool_pages + i] = pg->lost_overrun;
	meta[2 * pool_pages + i] = pg->lost_dropped;
	s->npages++;
	walk_slot++;
	return 0;
}

void dump_walk_cpu(uint32_t cpu, const struct dump_stats *st, const struct dump_clock *clk)
{
	struct snap_cpu *s;

	if (cpu >= snap_ncpus)
		return;
	s = &snap[cpu];
	s->stats = *st;
	s->stats.cpu = cpu;
	s->clock = *clk;
	s->clock.cpu = cpu;
}

void dump_walk_end(void)
{
	for (uint32_t c = 0; c < snap_ncpus; c++) {
		struct snap_cpu *s = &snap[c];

		s->pages = ptrs + s->first;
		s->lost = meta + s->first;
		s->lost_overrun = meta + pool_pages + s->first;
		s->lost_dropped = meta + 2 * pool_pages + s->first;
	}
	have_snapshot = true;
	dump_id++;
}

static int live_emit(void *ctx, const struct rb_walk_page *pg)
{
	const struct rb_cpu_buffer *cb = ctx;

	return dump_walk_page(NULL, cb->cpu, pg);
}

static const uint8_t *live_page(void *ctx, uint32_t id)
{
	const struct rb_cpu_buffer *cb = ctx;

	return id <= cb->nr_slots ? cb->pages[id] : NULL;
}

/* Every CPU's live buffer, walked: what a reader would take, nothing taken. */
static bool walk_live(void)
{
	uint64_t need = (uint64_t)(trace_pages + 1) * cpu_count;

	if (!dump_walk_begin(cpu_count, need, tsc.hz, tsc.err_ppb))
		return false;
	for (unsigned c = 0; c < cpu_count; c++) {
		struct rb_cpu_buffer *cb = ring_buffer_cpu(&trace_rb, c);
		struct rb_walk_state ws;
		struct rb_walk w = { .st = &ws, .cpu = c, .page = live_page, .ctx = cb };
		struct rb_walk_result res;
		struct dump_stats ds;
		struct dump_clock clk;
		struct rb_stats st;

		ring_buffer_stats(cb, &st);
		dump_stats_from_rb(&ds, c, &st);
		dump_cpu_clock(c, &clk);
		distrust_backwards(&ds, &clk);
		if (cb->nr_slots) {	/* the placeholder has no ring */
			ring_walk_state(cb, &ws);
			w.slots = cb->slots;
			if (ring_walk(&w, live_emit, cb, &res))
				cprintf("dump: cpu=%u buffer not walked: %s\n", c, res.why);
			else if (res.refused)
				cprintf("dump: cpu=%u %u page(s) not shown (%llu events): %s\n", c,
					res.refused, (unsigned long long)res.lost, res.why);
		}
		dump_walk_cpu(c, &ds, &clk);
		snap[c].has_trust = cpu_trust(c, &clk, &ds, &snap[c].trust);
	}
	snap_has_calib = calib_now(&snap_calib);
	dump_walk_end();
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

/*
 * A dump of a full buffer over a serial line takes seconds with interrupts
 * off: each piece written is progress for the watchdog (as Linux's serial
 * console touches the NMI watchdog while it waits for the line).
 */
static void sink_text(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	watchdog_touch();
	console_write(buf, len);
}

/* ctx: a byte count to add to, or NULL. */
static void sink_raw(void *ctx, const void *buf, size_t len)
{
	if (ctx)
		*(uint64_t *)ctx += len;
	watchdog_touch();
	console_write_raw_held(buf, len);	/* dump_bin holds the console */
}

/* A dump's text and pages stop at a Ctrl-C (kernel/console_input.c). */
static bool stop_on_ctrl_c(void *ctx)
{
	(void)ctx;
	return console_cancelled();
}

static bool print_text(uint32_t cpu, uint64_t last, const uint8_t *enabled)
{
	/* Static: MAX_CPUS entries are 14 KiB, most of the 16 KiB boot stack;
	 * dumps run one at a time, as the snapshot they read is shared too. */
	static struct trace_text_cpu tc[MAX_CPUS];
	struct trace_text_opts opts = { .last = last, .cpu = cpu == DUMP_ALL_CPUS ?
					TRACE_TEXT_ALL_CPUS : cpu, .syms = &kernel_syms,
					.enabled = enabled,
					.calib = snap_has_calib ? &snap_calib : NULL };
	struct trace_sink sink = { sink_text, NULL };
	struct trace_text_summary sum;

	opts.stop = stop_on_ctrl_c;

	for (unsigned c = 0; c < snap_ncpus; c++) {
		struct snap_cpu *s = &snap[c];
		tc[c] = (struct trace_text_cpu){
			.cpu = c,
			.clock_state = trace_clock_state(&s->clock),
			.clock = &s->clock.conv,
			.trust = s->has_trust ? &s->trust : NULL,
			.clock_frame = &s->clock,
			.stats = &s->stats,
			.page_size = RB_PAGE_SIZE_DEFAULT,
			.nr_pages = s->npages,
			.pages = (const void *const *)s->pages,
			.lost = s->lost,
		};
	}
	if (trace_text_write(tc, snap_ncpus, &opts, scratch, scratch_size, &sink, &sum)) {
		cprintf("dump: the text formatter refused the snapshot\n");
		return false;
	}
	if (sum.cut)
		cprintf("dump: cut by Ctrl-C after %llu of %llu events\n",
			(unsigned long long)sum.shown, (unsigned long long)sum.events);
	else if (sum.shown < sum.events)
		cprintf("dump: showed the last %llu of %llu events; %llu left out "
			"(last=0 shows all)\n", (unsigned long long)sum.shown,
			(unsigned long long)sum.events,
			(unsigned long long)(sum.events - sum.shown));
	return true;
}

bool dump_text(uint32_t cpu, uint64_t last)
{
	return take_snapshot() && print_text(cpu, last, trace_events_enabled());
}

void dump_write_head(struct dump_writer *w, const struct trace_sink *sink, uint16_t id,
		     uint32_t nr_cpus, uint64_t tsc_hz, uint64_t tsc_err_ppb,
		     const uint8_t *enabled, struct dump_pack *pack)
{
	struct dump_begin begin = {
		.nr_cpus = nr_cpus, .page_size = RB_PAGE_SIZE_DEFAULT, .tsc_hz = tsc_hz,
		.tsc_err_ppb = tsc_err_ppb, .start_cycles = rdtsc(),
	};
	struct dump_syms_src src = { ksym_count(), ksym_end(), sym_at, NULL };
	struct dump_syms_src fmts = {
		(uint32_t)(__stop_trace_printk_fmts - __start_trace_printk_fmts), 0, fmt_at, NULL };

	dump_write_begin(w, sink, id, &begin);
	w->pack = pack;
	dump_write_events(w, &trace_builtin_catalog, enabled);
	dump_write_symbols(w, &src);
	dump_write_printk_formats(w, &fmts);
}

uint16_t dump_new_id(void)
{
	return ++dump_id;
}

/*
 * The binary dump's frames into sink; w says what was written. Ctrl-C cuts
 * it only where cuttable: a save to the stick is counted, then written,
 * and both passes must write the same frames.
 */
static void write_bin(uint32_t cpu, const uint8_t *enabled, struct trace_sink *sink,
		      struct dump_writer *w, bool cuttable, struct dump_pack *pack)
{
	dump_write_head(w, sink, dump_id, snap_ncpus, snap_tsc_hz, snap_tsc_err_ppb, enabled,
			pack);
	if (snap_has_calib)
		dump_write_calib(w, &snap_calib);
	for (unsigned c = 0; c < snap_ncpus; c++)
		dump_write_clock(w, &snap[c].clock);
	for (unsigned c = 0; c < snap_ncpus; c++)
		if (snap[c].has_trust)
			dump_write_trust(w, &snap[c].trust);
	for (unsigned c = 0; c < snap_ncpus; c++) {
		if (cpu != DUMP_ALL_CPUS && c != cpu)
			continue;
		/* A cut still ends the stream with STATS and END, END saying so. */
		for (uint32_t i = 0; i < snap[c].npages && !w->cut; i++) {
			if (cuttable && stop_on_ctrl_c(NULL))
				w->cut = true;
			else
				dump_write_page(w, c, snap[c].pages[i], RB_PAGE_SIZE_DEFAULT,
						snap[c].lost_overrun[i], snap[c].lost_dropped[i]);
		}
	}
	for (unsigned c = 0; c < snap_ncpus; c++)
		dump_write_stats(w, &snap[c].stats);
	dump_write_end(w);
}

/* Pages the snapshot holds for cpu (or every CPU). */
static uint32_t snap_pages(uint32_t cpu)
{
	uint32_t pages = 0;

	for (unsigned c = 0; c < snap_ncpus; c++)
		if (cpu == DUMP_ALL_CPUS || c == cpu)
			pages += snap[c].npages;
	return pages;
}

static void sink_count(void *ctx, const void *buf, size_t len)
{
	(void)buf;
	*(uint64_t *)ctx += len;
}

/* dump.measure=1: each encoding's bytes and the cycles to make them (no output). */
static void measure_bin(uint32_t cpu, const uint8_t *enabled)
{
	for (uint32_t e = 0; encoding_names[e]; e++) {
		uint64_t bytes = 0, t0, t1;
		struct trace_sink count = { sink_count, &bytes };
		struct dump_writer w;

		t0 = rdtsc();
		write_bin(cpu, enabled, &count, &w, false, e == 0 ? &dump_pack_mem : NULL);
		t1 = rdtsc();
		cprintf("dump: measure encoding=%s bytes=%llu events=%llu cycles=%llu "
			"bytes_per_event_x100=%llu cycles_per_event=%llu\n", encoding_names[e],
			(unsigned long long)bytes, (unsigned long long)w.events,
			(unsigned long long)(t1 - t0),
			(unsigned long long)(w.events ? bytes * 100 / w.events : 0),
			(unsigned long long)(w.events ? (t1 - t0) / w.events : 0));
	}
}

static bool print_bin(uint32_t cpu, const uint8_t *enabled)
{
	uint32_t pages = snap_pages(cpu);

	if (dump_measure)
		measure_bin(cpu, enabled);
	for (uint32_t e = 0; encoding_names[e]; e++) {
		uint64_t flags, bytes = 0;
		struct trace_sink sink = { sink_raw, &bytes };
		struct dump_writer w;

		if (!cmdline_list_has(dump_enc_sel, encoding_names[e]))
			continue;
		flags = console_hold();
		write_bin(cpu, enabled, &sink, &w, true, e == 0 ? &dump_pack_mem : NULL);
		console_release(flags);
		cprintf("\ndump: bin id=%u frames=%u pages=%u events=%llu bytes=%llu encoding=%s\n",
			dump_id, w.seq, w.pages, (unsigned long long)w.events,
			(unsigned long long)bytes, encoding_names[e]);
		if (w.cut) {
			cprintf("dump: cut by Ctrl-C after %u of %u pages\n", w.pages, pages);
			break;
		}
	}
	return true;
}

static void sink_save(void *ctx, const void *buf, size_t len)
{
	watchdog_touch();
	tracesave_put(ctx, buf, len);
}

/*
 * The same frames into TRACE.BIN on the stick: counted first (the save
 * is refused whole if it does not fit), then written.  Polled: fine with
 * interrupts off and the other CPUs stopped (a panic).
 */
static bool save_usb(uint32_t cpu, const uint8_t *enabled)
{
	uint64_t bytes = 0;
	struct trace_sink count = { sink_count, &bytes }, save;
	struct dump_writer w;
	struct tracesave *s;

	write_bin(cpu, enabled, &count, &w, false, dump_packer(&dump_pack_mem));
	if (!(s = usb_save_begin(bytes)))
		return false;
	save = (struct trace_sink){ sink_save, s };
	write_bin(cpu, enabled, &save, &w, false, dump_packer(&dump_pack_mem));
	if (!usb_save_end(s, dump_id))
		return false;
	cprintf("dump: usb id=%u frames=%u pages=%u events=%llu\n", dump_id, w.seq, w.pages,
		(unsigned long long)w.events);
	return true;
}

bool dump_usb(uint32_t cpu)
{
	return take_snapshot() && save_usb(cpu, trace_events_enabled());
}

bool dump_bin(uint32_t cpu)
{
	return take_snapshot() && print_bin(cpu, trace_events_enabled());
}

bool dump_walked(bool text, bool bin, bool usb, uint64_t last, const uint8_t *enabled)
{
	bool ok = true;

	if (!have_snapshot)
		return false;
	if (text)
		ok = print_text(DUMP_ALL_CPUS, last, enabled) && ok;
	if (bin)
		ok = print_bin(DUMP_ALL_CPUS, enabled) && ok;
	if (usb)
		ok = save_usb(DUMP_ALL_CPUS, enabled) && ok;
	/* Printed once: a later `dump` must not show it again as "the last snapshot". */
	have_snapshot = false;
	return ok;
}

void dump_prepare(void)
{
	if (cmdline_list_has(dump_sel, "usb") || panic_dump_has("usb") || record_to_usb())
		usb_trace_file();
}

uint64_t dump_default_last(void)
{
	return dump_last;
}

bool dump_default(void)
{
	bool ok = true;

	if (cmdline_list_has(dump_sel, "text"))
		ok = dump_text(DUMP_ALL_CPUS, dump_last) && ok;
	if (cmdline_list_has(dump_sel, "bin"))
		ok = dump_bin(DUMP_ALL_CPUS) && ok;
	if (cmdline_list_has(dump_sel, "usb"))
		ok = dump_usb(DUMP_ALL_CPUS) && ok;
	return ok;
}

bool dump_panic(bool text, bool bin, bool usb, uint64_t last)
{
	no_cpu_calls = true;
	return walk_live() && dump_walked(text, bin, usb, last, trace_events_enabled());
}
