/*
 * run=hwlat: hardware latency on every CPU at once (docs/lab.md).
 *
 * Each CPU taking part (hwlat.cpus=) spins with interrupts off for
 * hwlat.width_ms of every hwlat.window_ms, hwlat.duration_ms in all,
 * reading the TSC in a tight loop. Nothing the kernel does can stop it
 * there (no interrupt, no other work), so a jump between two reads longer
 * than the threshold is time the CPU lost to something outside the
 * kernel: an SMI, an NMI, the hypervisor or emulator not running it, a
 * stall of the memory system. Each such gap is a trace event
 * (lab:hwlat_gap) and is kept for the summary.
 *
 *   CPU c:  |lineup|resolution|  width 0 (IF=0)   |  IF=1  |  width 1 ...
 *           t_line             t0                  t0+width t0+window
 *   loop:   prev = now; pause; now = rdtsc; now - prev > threshold: a gap
 *
 * Timing. Every CPU waits for one instant t_line on the corrected
 * timeline (each AP's clock has its skew taken out), measures its loop's
 * resolution (the median turn over RES_TURNS turns, all CPUs turning at
 * once as they will in the widths), and starts width 0 at t0 = its own
 * TSC at t_line plus LINEUP_US. Width k starts at t0 + k * window. A CPU
 * late for an instant (descheduled by a host) starts where it is, and says
 * so; a width already over is skipped.
 *
 * The loop pauses each turn. On a real CPU that costs a few to ~140
 * cycles of resolution and lets a hyperthread sibling run; under QEMU's
 * icount (one host thread, CPUs in turn) it hands the emulator to the
 * next CPU every turn, so that the CPUs sample side by side: without it
 * each would run a slice of up to milliseconds while the others, not
 * running, saw that slice as a gap.
 *
 * Threshold (hwlat.threshold_ns=, 0 = auto): auto is THRESH_RES_MULT times
 * the resolution, at least THRESH_MIN_NS: far below Linux's 10 us default,
 * since nothing here shares the CPU with the loop. Time spent recording a
 * gap is not sampled (the next turn starts after it).
 *
 * Injected stalls (inject.stall=<us>@<ms>[:<cpu>], test facility): at the
 * first turn at or after t0 + ms, the CPU (each CPU, for one without
 * :<cpu>) busy-waits us microseconds between two reads of the loop: a
 * gap of that length, plus up to a turn, that the method must find.
 *
 * The machine view: after the run, the boot CPU merges every CPU's gaps
 * (lab_gaps_merge(), include/trace/lab.h), each widened by its CPU's skew
 * bound: overlapping gaps on different CPUs are one stop of the machine
 * ("coincident"), which an SMI (it stops every core) is and a per-core
 * effect is not.
 *
 * Results are per CPU, written by their CPU only during the run and read by
 * the boot CPU after smp_call_wait() saw the call end (its acquire pairs
 * with the AP's release of call_fn, after the last write).
 */
#include <stdbool.h>
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/smi.h>
#include <arch/smp.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/lab.h"
#include "kernel/pmm.h"
#include "kernel/tracing.h"
#include "trace/lab.h"

#define RES_TURNS	512	/* turns timed to find the loop's resolution */
#define LINEUP_MS	20	/* from the boot CPU's start to t_line: every CPU called */
#define LINEUP_US	1000	/* from t_line to t0: the resolution's turns */
#define THRESH_MIN_NS	1000	/* the auto threshold's floor */
#define THRESH_RES_MULT	10	/* ... and its multiple of the resolution */
#define REC_MAX		512	/* gaps kept per CPU for the machine view */
#define WAIT_EXTRA_MS	30000	/* past the run's end, how long the boot CPU waits for a CPU */
#define SETTLE_NS	20000	/* after a width, before recording: the others have left theirs */
#define PROGRESS_MS	1000	/* a progress line this often in long runs */

static uint64_t width_ms = 50;
static uint64_t window_ms = 100;
static uint64_t duration_ms = 1000;
static uint64_t threshold_ns;
static char cpus_opt[64] = "all";
static char stall_opt[128];
static uint64_t smi_ms = UINT64_MAX;

static bool check_cpus(const char *v, char *why, size_t cap)
{
	uint64_t m[4];

	return lab_cpulist_parse(v, m, why, cap);
}

static bool check_stalls(const char *v, char *why, size_t cap)
{
	struct lab_stall s[LAB_STALLS_MAX];
	unsigned n;

	return lab_stall_parse(v, s, LAB_STALLS_MAX, &n, why, cap);
}

CMDLINE_OPTION(hwlat_width, .name = "hwlat.width_ms", .type = OPT_UINT, .var = &width_ms,
	       .min = 1, .max = 1000,
	       .help = "run=hwlat: ms of each window spent sampling with interrupts off");
CMDLINE_OPTION(hwlat_window, .name = "hwlat.window_ms", .type = OPT_UINT, .var = &window_ms,
	       .min = 1, .max = 60000, .help = "run=hwlat: the sampling period, ms");
CMDLINE_OPTION(hwlat_duration, .name = "hwlat.duration_ms", .type = OPT_UINT,
	       .var = &duration_ms, .min = 1, .max = 3600000,
	       .help = "run=hwlat: how long the run lasts, ms");
CMDLINE_OPTION(hwlat_threshold, .name = "hwlat.threshold_ns", .type = OPT_UINT,
	       .var = &threshold_ns, .min = 0, .max = 1000000000,
	       .help = "run=hwlat: a gap longer than this is recorded; 0 = auto (from the "
		       "loop's resolution)");
CMDLINE_OPTION(hwlat_cpus, .name = "hwlat.cpus", .type = OPT_STRING, .var = cpus_opt,
	       .size = sizeof(cpus_opt), .check = check_cpus,
	       .help = "run=hwlat: the CPUs that sample (all, or a list like 0,2-3)");
CMDLINE_OPTION(inject_stall, .name = "inject.stall", .type = OPT_STRING, .var = stall_opt,
	       .size = sizeof(stall_opt), .check = check_stalls,
	       .help = "test facility: run=hwlat stalls <us>@<ms> (every CPU) or "
		       "<us>@<ms>:<cpu>, comma-separated");

CMDLINE_OPTION(inject_smi, .name = "inject.smi", .type = OPT_UINT, .var = &smi_ms,
	       .min = 0, .max = LAB_STALL_MS_MAX,
	       .help = "test facility: run=hwlat's CPU 0 raises an SMI (APM port 0xB2) this many "
		       "ms into the run");

/* The run's shape, written by the boot CPU before any CPU is called. */
static struct {
	int64_t t_line_ns;		/* the common instant, corrected ns */
	uint64_t width_cyc, window_cyc;	/* in TSC cycles */
	uint64_t windows;		/* widths in the run */
	struct lab_stall stall[LAB_STALLS_MAX];
	unsigned nstall;
} run;

/* A gap as the loop saw it: raw readings. */
struct hwlat_raw {
	uint64_t prev, now;		/* the TSC reads around it */
	int64_t smi_before, smi_after;	/* SMI counts, -1 unknown */
	uint32_t nmis;			/* NMIs taken in it */
};

/* One CPU's results: written by that CPU during the run, read after it. */
struct hwlat_cpu {
	uint64_t gaps;			/* gaps above the threshold */
	uint64_t max_ns;		/* the longest */
	uint64_t res_ns;		/* the loop's median turn */
	uint64_t thresh_ns;		/* the threshold used */
	uint64_t turns;			/* loop turns in the widths */
	uint64_t late_ns;		/* how late it reached t_line */
	uint64_t injected;		/* stalls it made */
	uint64_t nmis;			/* NMIs taken during its widths */
	int64_t smi_start, smi_end;	/* SMI count at the first and last width, -1 unknown */
	uint64_t hist[LAB_HIST_BUCKETS];	/* gaps by lab_log2_bucket(ns) */
	unsigned nrec;			/* gaps kept in raw (the first REC_MAX) */
	unsigned nflushed;		/* ... of which converted into rec and recorded */
	bool ran;			/* it took part */
	uint64_t turn[RES_TURNS];	/* the resolution's turns, cycles */
	struct hwlat_raw raw[REC_MAX + 1];	/* as the loop saw them; the last: overflow */
	struct lab_gap rec[REC_MAX];	/* converted, for the machine view */
};

static struct hwlat_cpu *res;	/* cpu_count entries, from the page allocator */
static uint64_t res_pages;
static uint64_t mask[4];	/* hwlat.cpus= */

static uint64_t ns_to_cyc(uint64_t ns)
{
	return (uint64_t)((unsigned __int128)ns * tsc.hz / 1000000000u);
}

static int64_t smi_now(void)
{
	uint64_t v;

	return smi_count_read(&v) ? (int64_t)v : -1;
}

/* One raw gap converted on its own CPU's clock: counted, recorded, kept if keep. */
static void hwlat_flush_one(struct hwlat_cpu *r, const struct hwlat_raw *g, uint32_t cpu,
			    bool keep)
{
	int64_t s = tsc_cycles_to_ns(g->prev), e = tsc_cycles_to_ns(g->now);
	uint64_t len = e > s ? (uint64_t)(e - s) : 0;
	int64_t u = (int64_t)((unsigned __int128)this_cpu_ptr(tsc_skew)->uncert * 1000000000u /
			      tsc.hz);

	r->gaps++;
	if (len > r->max_ns)
		r->max_ns = len;
	r->hist[lab_log2_bucket(len)]++;
	if (keep)
		r->rec[r->nflushed] = (struct lab_gap){ s, e, u + 1, cpu, 0 };	/* +1: rounding */
	trace_hwlat_gap(s, len, g->smi_before, g->smi_after, g->nmis, (uint32_t)r->gaps);
}

/* After a width: the gaps it kept, converted and recorded. */
static void hwlat_flush(struct hwlat_cpu *r, uint32_t cpu)
{
	for (; r->nflushed < r->nrec; r->nflushed++)
		hwlat_flush_one(r, &r->raw[r->nflushed], cpu, true);
}

/*
 * A gap between reads prev and now, as the loop saw it: kept raw (a few
 * stores, so that the other CPUs, which under icount wait for this one,
 * see little of it), converted and recorded by hwlat_flush() after the
 * width. Past REC_MAX the gap is flushed at once, and not kept for the
 * machine view.
 */
static void hwlat_gap(struct hwlat_cpu *r, uint64_t prev, uint64_t now, int64_t smi_before,
		      uint64_t nmis, uint32_t cpu)
{
	struct hwlat_raw *g = &r->raw[r->nrec < REC_MAX ? r->nrec : REC_MAX];

	*g = (struct hwlat_raw){ prev, now, smi_before, smi_now(), (uint32_t)nmis };
	if (r->nrec < REC_MAX)
		r->nrec++;
	else
		hwlat_flush_one(r, g, cpu, false);
}

/* This CPU's stalls, in its own TSC cycles, sorted by instant: the loop only compares. */
struct hwlat_stalls {
	uint64_t at[LAB_STALLS_MAX + 2];	/* instants; the last UINT64_MAX */
	uint64_t len[LAB_STALLS_MAX + 1];	/* lengths; 0: inject.smi=, an SMI instead */
	unsigned next;				/* the next to take */
};

/* Insert (at, len) into st's first n entries, kept sorted by instant. */
static void hwlat_stall_insert(struct hwlat_stalls *st, unsigned n, uint64_t at, uint64_t len)
{
	unsigned i = n;

	for (; i > 0 && st->at[i - 1] > at; i--) {
		st->at[i] = st->at[i - 1];
		st->len[i] = st->len[i - 1];
	}
	st->at[i] = at;
	st->len[i] = len;
}

static void hwlat_stalls_init(struct hwlat_stalls *st, uint64_t t0, uint32_t cpu)
{
	unsigned n = 0;

	for (unsigned k = 0; k < run.nstall; k++)
		if (run.stall[k].cpu == LAB_STALL_ALL || run.stall[k].cpu == cpu)
			hwlat_stall_insert(st, n++, t0 + ns_to_cyc(run.stall[k].ms * 1000000),
					   ns_to_cyc(run.stall[k].us * 1000));
	if (cpu == 0 && smi_ms != UINT64_MAX)
		hwlat_stall_insert(st, n++, t0 + ns_to_cyc(smi_ms * 1000000), 0);
	st->at[n] = UINT64_MAX;
	st->next = 0;
}

/* One width, until end (cycles), interrupts off; st: this CPU's stalls. */
static void hwlat_width(struct hwlat_cpu *r, uint64_t end, struct hwlat_stalls *st, uint32_t cpu)
{
	struct percpu *pc = this_cpu();
	uint64_t prev = rdtsc(), now, nmi_prev = pc->nmi_count;
	int64_t smi_prev = smi_now();
	uint64_t thresh = ns_to_cyc(r->thresh_ns);

	if (r->smi_start < 0 && smi_prev >= 0 && !r->turns)
		r->smi_start = smi_prev;
	for (;;) {
		now = rdtsc();
		r->turns++;
		if (now - prev > thresh) {
			uint64_t nmi = pc->nmi_count;

			hwlat_gap(r, prev, now, smi_prev, nmi - nmi_prev, cpu);
			r->nmis += nmi - nmi_prev;
			nmi_prev = nmi;
			smi_prev = smi_now();
			now = rdtsc();	/* recording is not sampled */
		}
		if (now >= end)
			break;
		if (now >= st->at[st->next]) {
			uint64_t len = st->len[st->next++];

			r->injected++;
			if (!len)
				smi_raise_apm();
			while (rdtsc() - now < len)
				cpu_relax();
		}
		prev = now;
		cpu_relax();
	}
	r->nmis += pc->nmi_count - nmi_prev;
	r->smi_end = smi_now();
}

/* The loop's median turn, in ns, measured with the other CPUs turning too. */
static uint64_t hwlat_resolution(uint64_t *t)
{
	uint64_t prev = rdtsc(), now;

	for (unsigned i = 0; i < RES_TURNS; i++) {
		now = rdtsc();
		t[i] = now - prev;
		prev = now;
		cpu_relax();
	}
	return (uint64_t)((unsigned __int128)lab_percentile(t, RES_TURNS, 50) * 1000000000u /
			  tsc.hz);
}

/* A sign of life between widths; out of line: inlined into hwlat_cpu_run(), GCC 12 said
 * "impossible constraint" of this_cpu_read()'s "i" operand. */
static __noinline void hwlat_touch(void)
{
	watchdog_touch();
}

static void hwlat_cpu_run(void *arg)
{
	uint32_t cpu = this_cpu()->cpu;
	struct hwlat_cpu *r = &res[cpu];
	uint64_t now = rdtsc(), t0;
	int64_t now_ns = tsc_cycles_to_ns(now);
	uint64_t flags = read_rflags();
	struct hwlat_stalls st;

	(void)arg;
	r->ran = true;
	r->smi_start = r->smi_end = -1;
	if (now_ns < 0)
		return;		/* no clock on this CPU: nothing to line up with */
	if (now_ns < run.t_line_ns) {
		uint64_t line = now + ns_to_cyc((uint64_t)(run.t_line_ns - now_ns));

		while (rdtsc() < line)
			cpu_relax();
	} else {
		r->late_ns = (uint64_t)(now_ns - run.t_line_ns);
	}
	t0 = rdtsc() + ns_to_cyc(LINEUP_US * 1000) - ns_to_cyc(r->late_ns);
	irq_disable();
	r->res_ns = hwlat_resolution(r->turn);
	if (flags & RFLAGS_IF)
		irq_enable();
	r->thresh_ns = threshold_ns ? threshold_ns : r->res_ns * THRESH_RES_MULT;
	if (r->thresh_ns < THRESH_MIN_NS && !threshold_ns)
		r->thresh_ns = THRESH_MIN_NS;
	hwlat_stalls_init(&st, t0, cpu);
	for (uint64_t w = 0; w < run.windows; w++) {
		uint64_t start = t0 + w * run.window_cyc, end = start + run.width_cyc;
		uint64_t last = t0 + duration_ms * (tsc.hz / 1000), settle = ns_to_cyc(SETTLE_NS);

		if (end > last)
			end = last;
		while (rdtsc() < start)
			cpu_relax();
		if (rdtsc() >= end)
			continue;	/* late past the whole width */
		hwlat_touch();
		irq_disable();
		hwlat_width(r, end, &st, cpu);
		if (flags & RFLAGS_IF)
			irq_enable();
		while (rdtsc() < end + settle)
			cpu_relax();	/* the others leave their width before this CPU records */
		hwlat_flush(r, cpu);
		hwlat_touch();
		if (cpu == 0 && duration_ms >= 2 * PROGRESS_MS &&
		    (w + 1) * window_ms / PROGRESS_MS != w * window_ms / PROGRESS_MS)
			printk("hwlat: progress ms=%llu/%llu\n",
			       (unsigned long long)((w + 1) * window_ms),
			       (unsigned long long)duration_ms);
	}
	trace_hwlat_cpu(r->thresh_ns, r->res_ns, r->smi_start, r->smi_end,
			(uint32_t)r->injected, (uint32_t)r->gaps);
}

static bool in_mask(unsigned c)
{
	return mask[c / 64] & (1ull << (c % 64));
}

/* The per-CPU lines, and each CPU's gaps gathered into all[] for the machine view. */
static size_t hwlat_report_cpus(struct lab_gap *all, unsigned *ncpus, int64_t *smi)
{
	char hist[256];
	size_t n = 0;

	*smi = 0;
	for (unsigned c = 0; c < cpu_count; c++) {
		const struct hwlat_cpu *r = &res[c];

		if (!r->ran)
			continue;
		(*ncpus)++;
		if (r->smi_start < 0 || r->smi_end < 0)
			*smi = -1;
		else if (*smi >= 0 && r->smi_end - r->smi_start > *smi)
			*smi = r->smi_end - r->smi_start;	/* the most any CPU took */
		if (r->late_ns)
			printk("hwlat: cpu=%u reached the common start %llu ns late\n", c,
			       (unsigned long long)r->late_ns);
		printk("hwlat: cpu=%u gaps=%llu max_ns=%llu threshold_ns=%llu resolution_ns=%llu "
		       "nmi=%llu injected=%llu turns=%llu kept=%u\n", c,
		       (unsigned long long)r->gaps, (unsigned long long)r->max_ns,
		       (unsigned long long)r->thresh_ns, (unsigned long long)r->res_ns,
		       (unsigned long long)r->nmis, (unsigned long long)r->injected,
		       (unsigned long long)r->turns, r->nflushed);
		printk("hwlat: cpu=%u hist%s\n", c,
		       lab_hist_format(hist, sizeof(hist), r->hist, LAB_HIST_BUCKETS));
		for (unsigned i = 0; i < r->nflushed; i++)
			all[n++] = r->rec[i];
	}
	return n;
}

static void hwlat_report(void)
{
	uint64_t pages = (cpu_count * REC_MAX * sizeof(struct lab_gap) + PAGE_SIZE - 1) / PAGE_SIZE;
	struct lab_gap *all = (struct lab_gap *)(uintptr_t)pmm_alloc(pages, 1);
	struct lab_merge m = { 0 };
	unsigned ncpus = 0;
	int64_t smi;
	size_t n;

	if (!all) {
		printk("hwlat: no memory for the machine view (%llu pages)\n",
		       (unsigned long long)pages);
		return;
	}
	n = hwlat_report_cpus(all, &ncpus, &smi);
	lab_gaps_merge(all, n, ncpus, &m);
	if (smi >= 0)
		printk("hwlat: machine gaps=%llu coincident=%llu max_ns=%llu smi=%lld "
		       "all_cpus=%llu cpus=%u\n", (unsigned long long)m.groups,
		       (unsigned long long)m.coincident, (unsigned long long)m.max_ns,
		       (long long)smi, (unsigned long long)m.all_cpus, ncpus);
	else
		printk("hwlat: machine gaps=%llu coincident=%llu max_ns=%llu smi=unknown "
		       "all_cpus=%llu cpus=%u\n", (unsigned long long)m.groups,
		       (unsigned long long)m.coincident, (unsigned long long)m.max_ns,
		       (unsigned long long)m.all_cpus, ncpus);
	pmm_free((uintptr_t)all, pages);
}

/* Check the stalls against the run and the CPUs; say what will not happen as asked. */
static void hwlat_check_stalls(void)
{
	char why[160];

	run.nstall = 0;
	if (stall_opt[0] && !lab_stall_parse(stall_opt, run.stall, LAB_STALLS_MAX, &run.nstall,
					     why, sizeof(why)))
		printk("hwlat: inject.stall=%s: %s\n", stall_opt, why);	/* checked at parse */
	for (unsigned k = 0; k < run.nstall; k++) {
		const struct lab_stall *s = &run.stall[k];
		uint64_t in_window = s->ms % window_ms;

		if (s->cpu != LAB_STALL_ALL && (s->cpu >= cpu_count || !in_mask(s->cpu)))
			printk("hwlat: inject.stall=%llu@%llu:%u: cpu %u does not sample; not "
			       "taken\n", (unsigned long long)s->us, (unsigned long long)s->ms,
			       s->cpu, s->cpu);
		else if (s->ms >= duration_ms)
			printk("hwlat: inject.stall=%llu@%llu: past the run's end (%llu ms); not "
			       "taken\n", (unsigned long long)s->us, (unsigned long long)s->ms,
			       (unsigned long long)duration_ms);
		else if (in_window >= width_ms && s->ms - in_window + window_ms >= duration_ms)
			printk("hwlat: inject.stall=%llu@%llu: between widths, and no width "
			       "follows; not taken\n", (unsigned long long)s->us,
			       (unsigned long long)s->ms);
		else if (in_window >= width_ms)
			printk("hwlat: inject.stall=%llu@%llu: between widths; taken at the next "
			       "width's start\n", (unsigned long long)s->us,
			       (unsigned long long)s->ms);
	}
}

bool hwlat_job(void)
{
	const char *smi_why = smi_count_probe();
	char why[160];
	bool ok = true;

	lab_cpulist_parse(cpus_opt, mask, why, sizeof(why));	/* checked at parse */
	if (!tsc.hz || tsc_now_ns() < 0) {
		printk("hwlat: the TSC is not calibrated; nothing to measure with\n");
		return false;
	}
	if (width_ms > window_ms) {
		printk("hwlat: hwlat.width_ms=%llu is longer than hwlat.window_ms=%llu; using "
		       "the window\n", (unsigned long long)width_ms, (unsigned long long)window_ms);
		width_ms = window_ms;
	}
	res_pages = (cpu_count * sizeof(struct hwlat_cpu) + PAGE_SIZE - 1) / PAGE_SIZE;
	res = (struct hwlat_cpu *)(uintptr_t)pmm_alloc(res_pages, 1);
	if (!res) {
		printk("hwlat: no memory for %llu pages of results\n",
		       (unsigned long long)res_pages);
		return false;
	}
	memset(res, 0, res_pages * PAGE_SIZE);
	run.width_cyc = ns_to_cyc(width_ms * 1000000);
	run.window_cyc = ns_to_cyc(window_ms * 1000000);
	run.windows = (duration_ms + window_ms - 1) / window_ms;
	printk("hwlat: cpus=%s width_ms=%llu window_ms=%llu duration_ms=%llu threshold_ns=%s "
	       "smi_count=%s\n", cpus_opt, (unsigned long long)width_ms,
	       (unsigned long long)window_ms, (unsigned long long)duration_ms,
	       threshold_ns ? "given" : "auto", smi_why ? smi_why : "msr");
	hwlat_check_stalls();
	run.t_line_ns = tsc_now_ns() + LINEUP_MS * 1000000ll;
	for (unsigned c = 1; c < cpu_count; c++)
		if (in_mask(c) && cpus[c] && cpus[c]->online) {
			if (!smp_call_async(c, hwlat_cpu_run, NULL))
				printk("hwlat: cpu=%u did not take the call\n", c);
		}
	if (in_mask(0))
		hwlat_cpu_run(NULL);
	for (unsigned c = 1; c < cpu_count; c++)
		if (in_mask(c) && cpus[c] && cpus[c]->online &&
		    !smp_call_wait(c, duration_ms + LINEUP_MS + WAIT_EXTRA_MS)) {
			printk("hwlat: cpu=%u did not finish within %llu ms of the run's end\n", c,
			       (unsigned long long)WAIT_EXTRA_MS);
			ok = false;
		}
	if (!ok)
		return false;	/* res stays allocated: a CPU still running may write it */
	hwlat_report();
	pmm_free((uintptr_t)res, res_pages);
	return true;
}
