/*
 * Tracing set-up: one ring buffer per CPU, its pages from the page
 * allocator (never sharing a page with code: the allocator hands out RAM
 * outside the kernel image), wired to the CPU's per-CPU variable
 * tracing_rb so a writer finds its buffer with one %gs load. Before this
 * runs, and for a CPU without a buffer, tracing_rb points at the ring
 * buffer's placeholder, which refuses and counts every call.
 *
 * RECONFIGURATION (tracing_reconfigure) frees every buffer and builds new
 * ones while the other CPUs may be writing. A writer loads tracing_rb once
 * (cb) and uses that pointer until its commit returns, so installing the
 * placeholder is not enough: a writer that loaded cb before the store still
 * has it, between reserve and commit or about to reserve. The old buffers
 * may only be freed once every CPU has shown that no context of its own
 * holds an old cb. The one place that can show it is the CPU's task context
 * at a point outside any reservation (a quiescent point, as in RCU):
 *
 *   Q1 The reconfiguring CPU (at task level, outside any reservation: its
 *      own interrupts have all returned) stores the placeholder in every
 *      tracing_rb, notes each CPU's old buffer in leaving[], then stores a
 *      new epoch with release.
 *   Q2 Each other CPU, at a quiescent point of its task context, loads the
 *      epoch with acquire (pairs with Q1's release). From then on every
 *      load of its tracing_rb returns the placeholder. Its task context is
 *      between events, and no interrupt handler of that CPU is running (they
 *      run to completion before the task context resumes), so no context of
 *      it holds an old cb: those that loaded one before Q2 have returned.
 *      It checks that its old buffer's nest word has no writer or publish
 *      bit (it is called outside a reservation, or it refuses to confirm),
 *      then stores the epoch in its qs slot with release.
 *   Q3 The reconfiguring CPU loads each qs slot with acquire (pairs with
 *      Q2's release): everything that CPU did to its old buffer happens
 *      before the free and the reuse of the memory.
 *
 * An idle CPU passes Q2 from its idle loop: Q1 posts it a call that runs
 * tracing_quiescent(). A CPU busy with a long call at task level (a job's
 * writer loop) must call tracing_quiescent() between its events. A CPU
 * that has not confirmed within RECONF_WAIT_MS (or the caller's bound) is
 * named, and the reconfiguration is refused: the old buffers are put back
 * and nothing is freed.
 *
 * Why not just wait for the old nest word to lose its writer bits? A
 * writer holds its cb for a few instructions before its reserve sets the
 * bit, and its commit clears the bit before rb_commit_slow() publishes
 * through the same cb; in those windows the word says "no writer" while
 * the CPU is still about to touch the buffer, and an interrupt or a host
 * that deschedules the vCPU can hold a window open for any time.
 */
#include <stddef.h>
#include <arch/clockwd.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/cpu_hooks.h"
#include "kernel/kstring.h"
#include "kernel/persist.h"
#include "kernel/pmm.h"
#include "kernel/record.h"
#include "kernel/tracing.h"

#define TRACE_PAGES_DEFAULT	64	/* 256 KiB per CPU */
#define RECONF_WAIT_MS		5000	/* for every CPU to confirm (Q2) */
#define RECONF_POISON		0x6b	/* what freed buffer memory is filled with */

static const char *const mode_names[] = { "overwrite", "discard", NULL };

static uint64_t opt_pages = TRACE_PAGES_DEFAULT;
static int opt_mode = RB_MODE_OVERWRITE;
CMDLINE_OPTION(trace_pages, .name = "trace.pages", .type = OPT_UINT, .var = &opt_pages,
	       .min = 2, .max = RB_MAX_PAGES,
	       .help = "ring buffer pages (4 KiB) per CPU");
CMDLINE_OPTION(trace_mode, .name = "trace.mode", .type = OPT_ENUM, .var = &opt_mode,
	       .choices = mode_names,
	       .help = "overwrite (flight recorder) or discard (drop new events when full)");

struct ring_buffer trace_rb;
uint32_t trace_pages;
int trace_mode;
/* Each CPU's buffer, one %gs load for writers; the placeholder until it has one. */
DEFINE_PER_CPU(struct rb_cpu_buffer *, tracing_rb) = &rb_cpu_absent;

static struct rb_cpu_buffer *buffers[MAX_CPUS];
static void *page_tables[MAX_CPUS];	/* each CPU's array of page pointers */
static bool in_range[MAX_CPUS];		/* the buffer is in the persistent range */
static bool recording;

/* Reconfiguration's quiescent points (Q1..Q3 above). */
static uint64_t trace_epoch;			/* bumped by each Q1 */
static struct rb_cpu_buffer *leaving[MAX_CPUS];	/* each CPU's old buffer (Q1) */
static struct {
	uint64_t epoch;				/* the last epoch the CPU confirmed */
} __aligned(CACHELINE_SIZE) qs[MAX_CPUS];

/* Pages one CPU's buffer takes: ring + reader page + the struct. */
static uint64_t pages_per_cpu(uint32_t n)
{
	return n + 1 + (ring_buffer_cpu_size(n) + PAGE_SIZE - 1) / PAGE_SIZE +
	       ((n + 1) * sizeof(void *) + PAGE_SIZE - 1) / PAGE_SIZE;
}

static struct rb_cpu_config cpu_config(unsigned c, uint32_t n, int mode)
{
	return (struct rb_cpu_config){
		.cpu = c, .nr_pages = n, .page_size = RB_PAGE_SIZE_DEFAULT,
		.mode = (uint32_t)mode, .start_off = !recording,
		.base_adjust = smp_tsc_ahead_min(c),	/* built here, written there */
	};
}

/* CPU c's buffer in the persistent range (trace.persist=), as alloc_cpu() below. */
static bool alloc_cpu_persist(unsigned c, uint32_t n, int mode)
{
	struct rb_cpu_config cfg = cpu_config(c, n, mode);
	struct rb_cpu_buffer *cb;
	size_t cb_size;
	void **pages;

	if (!persist_cpu_area(c, n, &cb, &cb_size, &pages))
		return false;
	if (ring_buffer_cpu_init(cb, cb_size, &cfg, pages))
		return false;
	buffers[c] = cb;
	page_tables[c] = pages;
	in_range[c] = true;
	persist_cpu_present(c, true);
	return true;
}

/* Memory for a buffer of n pages: its struct (*cb, *cb_size) and page table. */
static bool alloc_mem(uint32_t n, struct rb_cpu_buffer **cb, size_t *cb_size, void ***pages)
{
	uint64_t meta = (ring_buffer_cpu_size(n) + PAGE_SIZE - 1) / PAGE_SIZE;
	uint64_t tab = ((n + 1) * sizeof(void *) + PAGE_SIZE - 1) / PAGE_SIZE;
	uint64_t cb_phys = pmm_alloc(meta, 1), tab_phys = pmm_alloc(tab, 1);
	uint64_t data_phys = pmm_alloc(n + 1, 1);

	if (!cb_phys || !tab_phys || !data_phys) {
		if (cb_phys) pmm_free(cb_phys, meta);
		if (tab_phys) pmm_free(tab_phys, tab);
		if (data_phys) pmm_free(data_phys, n + 1);
		return false;
	}
	*pages = (void **)(uintptr_t)tab_phys;
	for (uint32_t i = 0; i <= n; i++)
		(*pages)[i] = (void *)(uintptr_t)(data_phys + i * PAGE_SIZE);
	*cb = (struct rb_cpu_buffer *)(uintptr_t)cb_phys;
	*cb_size = meta * PAGE_SIZE;
	return true;
}

static bool alloc_cpu(unsigned c, uint32_t n, int mode)
{
	struct rb_cpu_config cfg = cpu_config(c, n, mode);
	struct rb_cpu_buffer *cb;
	size_t cb_size;
	void **pages;

	if (!alloc_mem(n, &cb, &cb_size, &pages))
		return false;
	buffers[c] = cb;
	page_tables[c] = pages;
	if (ring_buffer_cpu_init(cb, cb_size, &cfg, pages))
		return false;
	return true;
}

/*
 * An AP's buffer built by the AP itself, during bring-up (boot tracing),
 * through the tracer's CPU hook (<kernel/cpu_hooks.h>): the memory is
 * ready before the AP starts (tracing_prepare_ap(), its prepare), and the
 * AP builds its buffer as soon as its clock is final (tracing_ap_start(),
 * its start, from the AP's sync loop: after any
 * IA32_TSC_ADJUST write, before the warp test), so its events from there
 * on (its side of the warp test, for one) are in the trace.  The owner
 * builds it, so the first page's base is its own clock and needs no skew
 * (base_adjust 0), which is what keeps a buffer built by the boot CPU
 * waiting for smp_init()'s measurement.  Readers count the CPU in at
 * tracing_init().  Each slot's owner moves by compare-and-swap:
 *
 *   AP_NONE -> AP_READY      tracing_prepare_ap(), boot CPU, before INIT
 *   AP_READY -> AP_BUILDING  tracing_ap_start(), the AP: it builds
 *   AP_BUILDING -> AP_BUILT  the AP: buffers[c] and its tracing_rb set
 *   AP_READY -> AP_NONE      tracing_init(): the AP never came (or failed
 *                            before): the memory is freed, and the buffer
 *                            is built there as before
 *
 * With trace.persist= the APs' buffers live in the persistent range,
 * whose areas tracing_init() lays out: they are built there, as before.
 */
enum { AP_NONE, AP_READY, AP_BUILDING, AP_BUILT };

static struct {
	uint32_t state;
	uint32_t pages;
	struct rb_cpu_buffer *cb;
	size_t cb_size;
	void **tab;
} ap_buf[MAX_CPUS];

static void tracing_prepare_ap(unsigned c)
{
	uint32_t n = trace_pages;

	if (c >= MAX_CPUS || c == 0 || !n || persist_active() || buffers[c] ||
	    __atomic_load_n(&ap_buf[c].state, __ATOMIC_ACQUIRE) != AP_NONE)
		return;		/* a slot left READY by an AP that did not start is reused */
	if (!alloc_mem(n, &ap_buf[c].cb, &ap_buf[c].cb_size, &ap_buf[c].tab))
		return;		/* tracing_init() tries again, and names it */
	ap_buf[c].pages = n;
	__atomic_store_n(&ap_buf[c].state, AP_READY, __ATOMIC_RELEASE);
}

static void tracing_ap_start(unsigned c)
{
	uint32_t ready = AP_READY;
	struct rb_cpu_config cfg;

	if (c >= MAX_CPUS || !__atomic_compare_exchange_n(&ap_buf[c].state, &ready, AP_BUILDING,
							  false, __ATOMIC_ACQUIRE,
							  __ATOMIC_RELAXED))
		return;
	cfg = cpu_config(c, ap_buf[c].pages, trace_mode);
	cfg.base_adjust = 0;	/* the owner builds: its own clock */
	if (ring_buffer_cpu_init(ap_buf[c].cb, ap_buf[c].cb_size, &cfg, ap_buf[c].tab)) {
		__atomic_store_n(&ap_buf[c].state, AP_READY, __ATOMIC_RELEASE);
		return;
	}
	buffers[c] = ap_buf[c].cb;
	page_tables[c] = ap_buf[c].tab;
	__atomic_store_n(this_cpu_ptr(tracing_rb), ap_buf[c].cb, __ATOMIC_RELEASE);
	__atomic_store_n(&ap_buf[c].state, AP_BUILT, __ATOMIC_RELEASE);
}

CPU_HOOK(tracing, .name = "tracing", .prepare = tracing_prepare_ap, .start = tracing_ap_start);

/* tracing_init(): the slots whose AP did not build are given back. */
static void ap_bufs_settle(void)
{
	for (unsigned c = 1; c < MAX_CPUS; c++) {
		uint32_t ready = AP_READY;
		uint32_t st = __atomic_load_n(&ap_buf[c].state, __ATOMIC_ACQUIRE);

		if (st == AP_BUILT || st == AP_NONE)
			continue;
		if (__atomic_compare_exchange_n(&ap_buf[c].state, &ready, AP_NONE, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			uint32_t n = ap_buf[c].pages;
			void *data = ap_buf[c].tab[0];	/* the n + 1 pages are one block */

			pmm_free((uint64_t)(uintptr_t)ap_buf[c].cb,
				 (ring_buffer_cpu_size(n) + PAGE_SIZE - 1) / PAGE_SIZE);
			pmm_free((uint64_t)(uintptr_t)ap_buf[c].tab,
				 ((n + 1) * sizeof(void *) + PAGE_SIZE - 1) / PAGE_SIZE);
			pmm_free((uint64_t)(uintptr_t)data, n + 1);
			printk("trace: cpu=%u did not start; the memory readied for its buffer "
			       "(%u pages) is given back\n", c, n);
			continue;
		}
		/* BUILDING: the AP is inside ring_buffer_cpu_init(), or stopped there. */
		printk("trace: cpu=%u did not finish building its buffer; it has none\n", c);
	}
}

/*
 * Freed buffer memory is filled with RECONF_POISON first, so that a writer
 * still using it finds its buffer in a state no buffer has (and a test can
 * see that) rather than a plausible one.
 */
static void free_cpu(unsigned c, uint32_t n)
{
	void **pages = page_tables[c];
	void *data;

	if (!buffers[c])
		return;
	data = pages[0];	/* the n + 1 data pages are one block */
	memset(data, RECONF_POISON, (size_t)(n + 1) * PAGE_SIZE);
	memset(buffers[c], RECONF_POISON, ring_buffer_cpu_size(n));
	memset(pages, RECONF_POISON, (n + 1) * sizeof(void *));
	if (in_range[c]) {	/* the range's: nothing to give back */
		in_range[c] = false;
		persist_cpu_present(c, false);
		buffers[c] = NULL;
		page_tables[c] = NULL;
		return;
	}
	pmm_free((uintptr_t)buffers[c], (ring_buffer_cpu_size(n) + PAGE_SIZE - 1) / PAGE_SIZE);
	pmm_free((uintptr_t)data, n + 1);
	pmm_free((uintptr_t)page_tables[c], ((n + 1) * sizeof(void *) + PAGE_SIZE - 1) / PAGE_SIZE);
	buffers[c] = NULL;
	page_tables[c] = NULL;
}

void tracing_quiescent(void)
{
	unsigned c = this_cpu()->cpu;
	/*Q2*/ uint64_t e = __atomic_load_n(&trace_epoch, __ATOMIC_ACQUIRE);	/* pairs with Q1 */
	struct rb_cpu_buffer *old;

	if (c >= MAX_CPUS || e == __atomic_load_n(&qs[c].epoch, __ATOMIC_RELAXED))
		return;
	if (arch_trace_level() != 0)
		return;		/* an interrupt cannot vouch for the task it interrupted */
	old = leaving[c];
	if (old && (__atomic_load_n(&old->nest, __ATOMIC_RELAXED) &
		    (RB_NEST_WRITERS | RB_NEST_PUBLISH)))
		return;		/* called inside a reservation: not a quiescent point */
	__atomic_store_n(&qs[c].epoch, e, __ATOMIC_RELEASE);	/* pairs with Q3 */
}

static void confirm_call(void *arg)
{
	(void)arg;
	tracing_quiescent();	/* from the idle loop: task level, between events */
}

static bool confirmed(unsigned c, uint64_t e)
{
	return __atomic_load_n(&qs[c].epoch, __ATOMIC_ACQUIRE) == e;	/*Q3*/
}

/*
 * Q1 and the wait for Q2 on every CPU. Returns true once no CPU can touch
 * its old buffer; false (having named each CPU that did not confirm) if the
 * old buffers must stay.
 */
static bool switch_out(uint32_t wait_ms)
{
	unsigned self = this_cpu()->cpu, waiting = 0;
	bool posted[MAX_CPUS], paused;
	uint64_t e, t0, lim = (tsc.hz ? tsc.hz : 3000000000ull) / 1000 * wait_ms;

	if (arch_trace_level() != 0 || (buffers[self] && (__atomic_load_n(&buffers[self]->nest,
			__ATOMIC_RELAXED) & (RB_NEST_WRITERS | RB_NEST_PUBLISH)))) {
		printk("trace: cpu=%u: reconfiguration called from an interrupt or inside a "
		       "reservation; refused\n", self);
		return false;
	}
	/*Q1*/
	for (unsigned c = 0; c < cpu_count; c++) {
		leaving[c] = buffers[c];
		if (cpus[c])
			__atomic_store_n(per_cpu_ptr(tracing_rb, c), ring_buffer_cpu(NULL, 0),
					 __ATOMIC_RELAXED);
	}
	e = trace_epoch + 1;
	/* Seq_cst: a release for Q2's acquire, and the posts below come after it. */
	__atomic_store_n(&trace_epoch, e, __ATOMIC_SEQ_CST);
	/* This CPU needs no confirmation: it is at task level, outside any
	 * reservation (checked above), and its interrupts have returned. */

	for (unsigned c = 0; c < cpu_count; c++) {
		posted[c] = false;
		if (c == self || !cpus[c] || !cpus[c]->online)
			continue;	/* a CPU that never started runs no writer */
		/* Idle: the call runs Q2 from the idle loop. Busy: its job must. */
		posted[c] = smp_call_async(c, confirm_call, NULL);
		waiting++;
	}
	t0 = rdtsc();
	paused = watchdog_pause();	/* a bounded wait for the others, who are watched */
	while (waiting && rdtsc() - t0 < lim) {
		waiting = 0;
		for (unsigned c = 0; c < cpu_count; c++)
			if (c != self && cpus[c] && cpus[c]->online && !confirmed(c, e))
				waiting++;
		cpu_relax();	/* under icount, lets the others run */
	}
	watchdog_resume(paused);
	for (unsigned c = 0; c < cpu_count; c++)
		if (posted[c])
			smp_call_wait(c, wait_ms);
	waiting = 0;
	for (unsigned c = 0; c < cpu_count; c++) {
		if (c == self || !cpus[c] || !cpus[c]->online || confirmed(c, e))
			continue;
		waiting++;
		printk("trace: cpu=%u did not confirm within %u ms that it left its buffer "
		       "(busy at task level without tracing_quiescent(), or stuck inside a "
		       "reservation); reconfiguration refused, buffers kept\n",
		       c, wait_ms);
	}
	if (!waiting)
		return true;
	for (unsigned c = 0; c < cpu_count; c++)
		if (cpus[c])
			__atomic_store_n(per_cpu_ptr(tracing_rb, c), ring_buffer_cpu(&trace_rb, c),
					 __ATOMIC_RELEASE);
	return false;
}

/*
 * trace.pages= as it fits: the pages for ncpus CPUs may take at most half
 * of the free memory, or the count is halved until they take a quarter.
 */
static uint32_t fit_pages(uint32_t n, unsigned ncpus)
{
	struct pmm_stats st;
	uint64_t need;
	uint32_t fit = n;

	pmm_get_stats(&st);
	need = pages_per_cpu(n) * ncpus;
	if (need <= st.free_pages / 2)
		return n;
	while (fit > 2 && pages_per_cpu(fit) * ncpus > st.free_pages / 4)
		fit /= 2;
	printk("trace: trace.pages=%u needs %llu MiB for %u CPUs but only %llu MiB are "
	       "free; using trace.pages=%u\n", n,
	       (unsigned long long)(need * PAGE_SIZE >> 20), ncpus,
	       (unsigned long long)(st.free_pages * PAGE_SIZE >> 20), fit);
	return fit;
}

/*
 * A buffer of n pages for each CPU with an area and no buffer yet, then
 * every CPU's tracing_rb pointed at its own. A CPU already writing (the boot
 * CPU since tracing_init_boot(), an AP from its idle loop) moves from the
 * placeholder to its buffer with that one store; its buffer's pages and
 * struct were written before it (release).
 */
static void build_missing(uint32_t n, int mode)
{
	for (unsigned c = 0; c < cpu_count; c++) {
		if (!cpus[c] || buffers[c] ||
		    __atomic_load_n(&ap_buf[c].state, __ATOMIC_ACQUIRE) == AP_BUILDING)
			continue;
		if (persist_active() && alloc_cpu_persist(c, n, mode))
			continue;
		if (persist_active())
			printk("trace: cpu=%u has no area in the persistent range; its buffer "
			       "is not kept across a reset\n", c);
		if (!alloc_cpu(c, n, mode)) {
			printk("trace: cpu=%u: no memory for %u pages; no buffer\n", c, n);
			continue;
		}
	}
	trace_pages = n;
	trace_mode = mode;
	trace_rb.cpus = buffers;
	__atomic_store_n(&trace_rb.nr_cpus, cpu_count, __ATOMIC_RELEASE);
	for (unsigned c = 0; c < cpu_count; c++)
		if (cpus[c])
			__atomic_store_n(per_cpu_ptr(tracing_rb, c), ring_buffer_cpu(&trace_rb, c),
					 __ATOMIC_RELEASE);
}

static bool build(uint32_t n, int mode)
{
	build_missing(persist_active() ? persist_relayout(n) : fit_pages(n, cpu_count), mode);
	return true;
}

/*
 * Boot tracing: the boot CPU's buffer before smp_init(), so that ftrace=
 * and the events record the APs' bring-up. Its pages are budgeted for every
 * CPU smp_init() may start, which then get theirs, of the same size, in
 * tracing_init(); the boot CPU's buffer and its events stay as they are.
 */
/*
 * The tracer's policy for the clock watchdog (arch/x86/time/clockwd.c), which
 * decides nothing for it.  Its clocks are in use while recording: that is
 * when a check protects anything.  A CPU's clock found untrustworthy:
 * recording goes on, since its events still order among themselves and
 * what they are is worth keeping; every dump reads the CPU's trust flag
 * and marks its clock and its events (clock=untrusted, U), so there is
 * nothing to do at the moment of the finding.
 */
static void clock_untrusted(unsigned cpu)
{
	(void)cpu;
}

static const struct clock_watchdog_client clock_client = {
	.in_use = tracing_on,
	.untrusted = clock_untrusted,
};

void tracing_init_boot(void)
{
	uint32_t planned = smp_cpus_planned(), n = persist_boot(planned, (uint32_t)opt_pages);

	clock_watchdog_register(&clock_client);	/* before bring-up starts the watchdog */
	recording = true;
	build_missing(n ? n : fit_pages((uint32_t)opt_pages, planned), opt_mode);
}

void tracing_init(void)
{
	ap_bufs_settle();
	build_missing(trace_pages, trace_mode);
	persist_update();	/* every CPU's clock, skews measured */
	printk("trace: cpus=%u pages_per_cpu=%u page_size=%u mode=%s reserve=%s recording=on\n",
	       cpu_count, trace_pages, RB_PAGE_SIZE_DEFAULT, mode_names[trace_mode],
	       CONFIG_TRACE_RESERVE_CMPXCHG ? "cmpxchg" : "xadd");
}

bool tracing_reconfigure(uint32_t pages, int mode)
{
	return tracing_reconfigure_within(pages, mode, RECONF_WAIT_MS);
}

bool tracing_reconfigure_within(uint32_t pages, int mode, uint32_t wait_ms)
{
	static uint32_t busy;	/* one reconfiguration at a time (Q1 owns the epoch) */
	uint32_t old = trace_pages;
	bool ok;

	/*
	 * A stream reads the buffers about to go: it ends first, whole (one
	 * the shell's `start` opened; the jobs end their own before this).
	 */
	if (record_active()) {
		printk("record: the buffers are rebuilt: the stream ends first\n");
		record_end(NULL);
	}
	if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE)) {
		printk("trace: cpu=%u: another CPU is reconfiguring; refused\n", this_cpu()->cpu);
		return false;
	}
	ok = switch_out(wait_ms);
	if (ok) {
		for (unsigned c = 0; c < cpu_count; c++)
			free_cpu(c, old);
		ok = build(pages, mode);
	}
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
	return ok;
}

void tracing_start(void)
{
	recording = true;
	for (unsigned c = 0; c < cpu_count; c++)
		ring_buffer_record_on(ring_buffer_cpu(&trace_rb, c));
}

void tracing_stop(void)
{
	recording = false;
	for (unsigned c = 0; c < cpu_count; c++)
		ring_buffer_record_off(ring_buffer_cpu(&trace_rb, c));
}

bool tracing_on(void)
{
	return recording;
}

struct tracing_setup tracing_setup_get(void)
{
	return (struct tracing_setup){ trace_pages, trace_mode, recording };
}

bool tracing_setup_restore(const struct tracing_setup *s)
{
	bool ok = tracing_reconfigure(s->pages, s->mode);

	if (s->on)
		tracing_start();
	else
		tracing_stop();
	return ok;
}

static void flush_here(void *arg)
{
	(void)arg;
	ring_buffer_flush(this_cpu_rb());
}

void tracing_flush_all(void)
{
	for (unsigned c = 0; c < cpu_count; c++)
		if (cpus[c] && cpus[c]->online && smp_call_async(c, flush_here, NULL))
			smp_call_wait(c, 5000);
}

/*
 * Out-of-line copies of the write path, for counting its instructions
 * (objdump -d build/kernel.elf) and for the benchmarks: an 8-byte-payload
 * event, exactly what trace_event1() inlines into its callers.
 */
__noinline int trace_probe_event1(uint32_t v)
{
	return trace_bench(v);
}
