/*
 * Clock watchdog, like Linux's clocksource watchdog: while its client (the
 * tracer, clock_watchdog_register()) says the clocks are in use, every
 * clock.watchdog_ms (default 1000; 0 = off) the boot CPU reads the TSC
 * against a reference counter (the HPET or the PM timer) and measures each
 * AP's TSC skew again.  A drift of the TSC's rate beyond its bound, or a
 * skew that moved beyond both measurements' bounds, is reported once and
 * the clocks it touches are marked untrusted (tsc_skew.trusted, which
 * dumps carry: clock=untrusted, the U flag, CLOCK frames without
 * DUMP_CLOCK_TRUSTED): every CPU's for a drift, since they share a rate;
 * the one CPU's for a skew change.  Each CPU's trust ends at the last check
 * that found its clock good (cwd_cpu.good_ns): the fault lies after it,
 * so the dump marks that CPU's events from then on, and only those.  The
 * flag is the watchdog's finding; what the tracer does about it (today:
 * records on, its dumps mark the CPU's events) is the tracer's, told
 * through the client's untrusted().
 *
 * Where it runs.  It starts at the end of bring-up (clock_watchdog_init():
 * its line, and inject.tsc_step=).  Checks run from a poll,
 * clock_watchdog_poll(), at the boot CPU's task level where it waits
 * anyway: the shell between keys (woken at 1 kHz by its LAPIC timer) and
 * the demo's loop.  It costs one rdtsc and a compare until a check is
 * due.  A report prints at once, wherever it is found; from the shell
 * (quiet) a skew re-measure the AP did not answer is only counted, since
 * a line there would split the prompt for a matter of host scheduling.  Not a timer interrupt: the LAPIC timer belongs to
 * the jobs (the demo's ticks) and the hard-lockup watchdog, and a check
 * from an interrupt would stop whatever the boot CPU was tracing for the
 * length of the skew re-measure.  What is not checked when:
 *  - a job that does not poll (ktest, bench, dump, a long stretch with
 *    interrupts off) is not interrupted; the first poll after it checks
 *    the interval that covered it, which is fine for the drift (a longer
 *    interval measures better) as long as the reference cannot have
 *    wrapped: an interval that lasted longer than half the reference's
 *    wrap (the PM timer's 24 bits: 2.34 s, twice the longest interval
 *    it is set to, 1171 ms; a 32-bit HPET: 21.5 s; a 64-bit HPET: never)
 *    is discarded, counted as skipped, and the next interval starts there;
 *  - while the client says the clocks are not in use (the tracer: while
 *    recording is off) there is nothing to protect: no check, and the
 *    next interval starts at the first poll with them in use;
 *  - after the jobs end the boot CPU halts with interrupts off: no check.
 *
 * The drift.  Each interval between two bracketed reads of the reference
 * gives the TSC's rate against it (a calibration window), compared with
 * the rate the same reference gave at calibration; the bound is derived in
 * arch/x86/time/clockwd_rule.c (the calibration's bound against that reference, the
 * interval's own, whole-Hz rounding; the reference's oscillator tolerance
 * cancels).  The reference: the calibration's winner if it is the HPET or
 * the PM timer, otherwise whichever of them calibrated with the smaller
 * bound (the PIT cannot time more than 54 ms; CPUID's crystal cannot be
 * read), or clock.watchdog_ref=.  Without one (tsc_hz= given, no HPET and
 * no PM timer) the watchdog says so and stays off.  Each read is taken up
 * to SAMPLE_TRIES times and the tightest bracket kept, so that an SMI or
 * an emulator stall widens nothing.
 *
 * A reference that fails.  Before its drift, each interval is asked
 * whether the reference counted at all while the TSC advanced
 * (clockwd_ref_state(): stopped, or gone backwards).  One that did not is
 * said at once (ref_failed()) and the other reference used if it
 * calibrated the TSC; with none left the state is CWD_BLIND: the rate is
 * no longer compared, the skews still are, and the summary says
 * ref=none rate_watched=no.  inject.hpet_fault= (hpet.c) makes the HPET
 * fail from this watchdog's start.
 *
 * The skew.  Each AP's skew is measured again with the bring-up ping-pong,
 * answered from an interrupt handler on the AP (smp_tsc_remeasure()), the
 * whole of it bounded by SKEW_WAIT_MS; an AP that does not answer within
 * it (interrupts off, or not scheduled by the host) is reported once
 * ("did not answer") and counted, and its skew is not checked this time.
 * The new skew is compared with the bring-up one its clock was built on:
 * a difference beyond the sum of both bounds is a change.  A check thus
 * lasts at most SKEW_WAIT_MS per AP plus the reference reads.
 *
 * The write path is not touched: nothing here runs unless polled, and no
 * trace stamp, buffer or event depends on it; a CPU's trust flag is read
 * only when a dump is made.
 */
#include <stddef.h>
#include <arch/clockwd.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/timers.h>
#include <arch/tsc.h>
#include <arch/tsc_inject.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/kstring.h"
#include <arch/clockwd_rule.h>

#define INTERVAL_MIN_MS		10	/* a PM timer tick is 28 ppm of 10 ms */
#define SKEW_WAIT_MS		10	/* per AP, the whole re-measure */
#define SAMPLE_TRIES		4	/* reads of the reference, tightest bracket kept */

static uint64_t opt_ms = 1000;
CMDLINE_OPTION(clock_watchdog_ms, .name = "clock.watchdog_ms", .type = OPT_UINT,
	       .var = &opt_ms, .min = 0, .max = 60000,
	       .help = "clock watchdog interval while tracing, ms (10..60000); 0 = off");

static const char *const ref_choices[] = { "auto", "hpet", "pmtimer", NULL };
static int opt_ref;
CMDLINE_OPTION(clock_watchdog_ref, .name = "clock.watchdog_ref", .type = OPT_ENUM,
	       .var = &opt_ref, .choices = ref_choices,
	       .help = "the clock watchdog's reference: auto, hpet, pmtimer");

/*
 * CWD_BLIND: the reference failed and no other calibrated the TSC: the
 * skews are still re-measured, the rate is not.
 */
enum cwd_state { CWD_NEW, CWD_ON, CWD_OFF, CWD_BLIND };

static struct {
	enum cwd_state state;		/* set by clock_watchdog_init() */
	int ref_id;			/* TSC_REF_HPET or TSC_REF_PMTIMER */
	const char *ref_name;		/* its name in lines */
	struct clockwd_ref ref;		/* width, period, calibration figure */
	uint64_t interval_ms;		/* clock.watchdog_ms, as used */
	uint64_t interval_cycles;	/* the same in TSC cycles */
	uint64_t max_cycles;		/* longest interval the reference can time */
	bool have_base;			/* base holds the interval's start */
	struct clockwd_sample base;	/* the last read */
	uint64_t checks;		/* intervals evaluated */
	uint64_t skipped;		/* intervals discarded (too long, unusable) */
	uint64_t exceeded;		/* intervals beyond their bound */
	struct clockwd_drift last;	/* the last interval's figures */
	struct clockwd_drift worst;	/* the one with the largest |drift| */
	bool reported;			/* a drift was reported, clocks untrusted */
	bool boot_moved;		/* the boot CPU's move was reported (report_boot) */
	int64_t boot_change;		/* what it did to every AP's skew, cycles */
	uint64_t boot_bound;		/* that figure's bound */
} wd;

static const struct clock_watchdog_client *client;	/* the tracer, once registered */

static struct cwd_cpu {
	uint64_t checks;		/* re-measures that completed */
	uint64_t missed;		/* re-measures the AP did not answer */
	int64_t skew, uncert;		/* the last re-measure */
	int64_t worst_change;		/* the largest |change| from bring-up */
	uint64_t worst_bound;		/* its bound */
	bool reported;			/* a change was reported, clock untrusted */
	int64_t good_ns;		/* the last check that found this clock good; 0:
					 * none (the end of calibration stands in) */
	int64_t from_ns, found_ns;	/* set once by mark_untrusted(): trust ended */
	uint32_t why;			/* enum clock_untrust, 0: not untrusted by it;
					 * stored last, release (clock_watchdog_untrusted()) */
} cwd_cpu[MAX_CPUS];

/*
 * One bracketed read of the reference: the tightest of SAMPLE_TRIES.
 * lfence; rdtsc; lfence around the read: rdtsc is not ordered with the
 * loads around it (Intel SDM, RDTSC), and the bracket must hold the read
 * (calibration's 50 ms windows are less sensitive to it than a 10 ms
 * interval).
 */
static struct clockwd_sample sample(void)
{
	struct clockwd_sample best = { 0 }, s;

	for (int i = 0; i < SAMPLE_TRIES; i++) {
		__asm__ __volatile__("lfence" ::: "memory");
		s.tsc_before = rdtsc();
		__asm__ __volatile__("lfence" ::: "memory");
		s.ref = wd.ref_id == TSC_REF_HPET ? hpet_read() : pmtimer_read();
		__asm__ __volatile__("lfence" ::: "memory");
		s.tsc_after = rdtsc();
		if (i == 0 || s.tsc_after - s.tsc_before < best.tsc_after - best.tsc_before)
			best = s;
	}
	best.ref &= wd.ref.mask;
	return best;
}

/* The reference to watch with, or -1 (why set). */
static int choose_ref(const char **why)
{
	bool hpet = hpet_ready(), pmt = pmtimer_ready();
	uint64_t hz, e_hpet = UINT64_MAX, e_pmt = UINT64_MAX;

	if (hpet && !tsc_ref_result(TSC_REF_HPET, &hz, &e_hpet))
		hpet = false;
	if (pmt && !tsc_ref_result(TSC_REF_PMTIMER, &hz, &e_pmt))
		pmt = false;
	if (opt_ref == 1 || opt_ref == 2) {
		bool ok = opt_ref == 1 ? hpet : pmt;
		*why = "clock.watchdog_ref= names a reference that did not calibrate the TSC";
		return ok ? (opt_ref == 1 ? TSC_REF_HPET : TSC_REF_PMTIMER) : -1;
	}
	*why = "neither the HPET nor the PM timer calibrated the TSC";
	if (hpet && !strcmp(tsc.ref, "hpet"))
		return TSC_REF_HPET;	/* the winner itself */
	if (pmt && !strcmp(tsc.ref, "pmtimer"))
		return TSC_REF_PMTIMER;
	if (hpet && (!pmt || e_hpet <= e_pmt))
		return TSC_REF_HPET;
	return pmt ? TSC_REF_PMTIMER : -1;
}

/*
 * Watch with reference id from now on: its figures, and the interval
 * capped to a quarter of its wrap (said if capped).  The next poll starts
 * an interval.
 */
static void use_ref(int id)
{
	wd.ref_id = id;
	tsc_ref_result(id, &wd.ref.base_hz, &wd.ref.base_err_ppb);
	if (id == TSC_REF_HPET) {
		wd.ref_name = "hpet";
		wd.ref.mask = hpet_is_64bit() ? UINT64_MAX : 0xFFFFFFFFull;
		wd.ref.period_fs = hpet_period_fs();
	} else {
		wd.ref_name = "pmtimer";
		wd.ref.mask = pmtimer_mask();
		wd.ref.period_fs = PMTIMER_PERIOD_FS;
	}
	wd.have_base = false;
	wd.max_cycles = clockwd_max_cycles(&wd.ref, tsc.hz);
	wd.interval_cycles = tsc.hz / 1000 * wd.interval_ms;
	if (wd.interval_cycles > wd.max_cycles / 2) {
		uint64_t ms = wd.max_cycles / 2 / (tsc.hz / 1000);
		printk("clock: watchdog: clock.watchdog_ms=%llu is too long for the %s's %u-bit "
		       "counter; using %llu\n", (unsigned long long)wd.interval_ms, wd.ref_name,
		       64 - __builtin_clzll(wd.ref.mask), (unsigned long long)ms);
		wd.interval_ms = ms;
		wd.interval_cycles = tsc.hz / 1000 * ms;
	}
}

void clock_watchdog_init(void)
{
	const char *why = NULL;
	char err[32];
	int id;

	wd.state = CWD_OFF;
	tsc_inject_step();	/* inject.tsc_step=: after bring-up, before any re-measure */
	hpet_inject_fault();	/* inject.hpet_fault=: the reference goes wrong from here */
	if (!opt_ms)
		return;		/* off, as asked: nothing to say */
	if (!tsc.hz) {
		printk("clock: watchdog: off: the TSC is not calibrated\n");
		return;
	}
	id = choose_ref(&why);
	if (id < 0) {
		printk("clock: watchdog: off: %s\n", why);
		return;
	}
	wd.interval_ms = opt_ms;
	if (wd.interval_ms < INTERVAL_MIN_MS) {
		printk("clock: watchdog: clock.watchdog_ms=%llu is below %u ms, where one reference "
		       "tick is too much of the interval; using %u\n", (unsigned long long)opt_ms,
		       INTERVAL_MIN_MS, INTERVAL_MIN_MS);
		wd.interval_ms = INTERVAL_MIN_MS;
	}
	use_ref(id);
	wd.state = CWD_ON;
	printk("clock: watchdog: on: ref=%s interval_ms=%llu base_freq_hz=%llu base_err_ppm=%s "
	       "skew_wait_ms=%u\n", wd.ref_name, (unsigned long long)wd.interval_ms,
	       (unsigned long long)wd.ref.base_hz,
	       clockwd_fmt_ppm(err, sizeof(err), (int64_t)wd.ref.base_err_ppb), SKEW_WAIT_MS);
}

void clock_watchdog_register(const struct clock_watchdog_client *c)
{
	client = c;
}

/*
 * The reference failed over the interval from wd.base to s (state, its
 * delta and the fewest ticks it owed): said at once, and the other
 * reference used if it calibrated the TSC; otherwise the rate is no
 * longer watched (CWD_BLIND: the skews still are).
 */
static void ref_failed(int state, const struct clockwd_sample *s, int64_t ticks, uint64_t expected)
{
	int other = wd.ref_id == TSC_REF_HPET ? TSC_REF_PMTIMER : TSC_REF_HPET;
	bool usable = (other == TSC_REF_HPET ? hpet_ready() : pmtimer_ready()) &&
		      tsc_ref_result(other, &(uint64_t){ 0 }, &(uint64_t){ 0 });
	uint64_t per_ms = tsc.hz / 1000;

	printk("clock: watchdog: %s %s: %lld ticks in %llu ms by the TSC, at least %llu "
	       "expected; %s%s\n", wd.ref_name, state == CLOCKWD_REF_STOPPED ? "stopped" :
	       "went backwards", (long long)ticks,
	       (unsigned long long)((s->tsc_before - wd.base.tsc_after + per_ms / 2) / per_ms),
	       (unsigned long long)expected, usable ? "switching to " : "no other reference "
	       "calibrated the TSC: its rate is not watched from here on",
	       usable ? (other == TSC_REF_HPET ? "hpet" : "pmtimer") : "");
	wd.base = *s;	/* the skews' interval goes on */
	if (!usable) {
		wd.state = CWD_BLIND;
		wd.ref_name = "none";
		return;
	}
	use_ref(other);
	wd.base = sample();	/* the new reference's first read: its interval starts */
	wd.have_base = true;
}

/*
 * CPU c's clock is untrusted from its last good check on (found now).
 * Only a clock trusted until now gets an instant: one untrusted since
 * bring-up, or already by the watchdog, keeps what it had.
 */
static void mark_untrusted(unsigned c, uint32_t why)
{
	struct tsc_skew *sk = per_cpu_ptr(tsc_skew, c);
	struct cwd_cpu *k = &cwd_cpu[c];

	if (!__atomic_load_n(&sk->trusted, __ATOMIC_RELAXED))
		return;
	k->from_ns = k->good_ns;
	k->found_ns = tsc_cycles_to_ns(wd.base.tsc_before);	/* this check's read */
	if (k->found_ns < k->from_ns)
		k->found_ns = k->from_ns;	/* the boot CPU's own clock moved back */
	/* Release: pairs with the acquire in clock_watchdog_untrusted(). */
	__atomic_store_n(&k->why, why, __ATOMIC_RELEASE);
	__atomic_store_n(&sk->trusted, false, __ATOMIC_RELAXED);
	/* The flag first (dumps read it), then the client, whose call the rest is. */
	if (client && client->untrusted)
		client->untrusted(c);
}

bool clock_watchdog_untrusted(unsigned cpu, int64_t *from_ns, int64_t *found_ns, uint32_t *why)
{
	const struct cwd_cpu *k = cpu < MAX_CPUS ? &cwd_cpu[cpu] : NULL;

	if (!k || !(*why = __atomic_load_n(&k->why, __ATOMIC_ACQUIRE)))
		return false;
	*from_ns = k->from_ns;
	*found_ns = k->found_ns;
	return true;
}

/* The interval since the last read: true if its drift exceeded its bound (*d its figures). */
static bool check_drift(struct clockwd_drift *d)
{
	struct clockwd_sample s = { 0 };
	struct calib_window w;
	uint64_t expected;
	int64_t ticks;
	int state;

	if (wd.state == CWD_BLIND) {	/* no reference: an interval for the skews alone */
		s.tsc_before = s.tsc_after = rdtsc();
		wd.base = s;
		wd.have_base = true;
		return false;
	}
	s = sample();
	if (!wd.have_base) {
		wd.base = s;
		wd.have_base = true;
		return false;
	}
	if (s.tsc_after - wd.base.tsc_before > wd.max_cycles) {
		wd.skipped++;
		wd.base = s;
		return false;
	}
	state = clockwd_ref_state(&wd.base, &s, &wd.ref, &ticks, &expected);
	if (state != CLOCKWD_REF_COUNTS) {
		wd.skipped++;
		ref_failed(state, &s, ticks, expected);
		return false;
	}
	if (!clockwd_window(&wd.base, &s, &wd.ref, &w) || !clockwd_eval(&w, &wd.ref, d)) {
		wd.skipped++;
		wd.base = s;
		return false;
	}
	wd.base = s;
	wd.checks++;
	wd.last = *d;
	if (wd.checks == 1 || (d->drift_ppb < 0 ? -d->drift_ppb : d->drift_ppb) >
			      (wd.worst.drift_ppb < 0 ? -wd.worst.drift_ppb : wd.worst.drift_ppb))
		wd.worst = *d;
	if (d->exceeded)
		wd.exceeded++;
	return d->exceeded;
}

/* A drift no AP's skew explains: every CPU shares the rate. */
static void report_drift(const struct clockwd_drift *d)
{
	char a[32], b[32];

	if (wd.reported)
		return;		/* said once; the count goes on */
	wd.reported = true;
	for (unsigned c = 0; c < cpu_count; c++)
		if (cpus[c])
			mark_untrusted(c, CLOCK_UNTRUST_DRIFT);
	printk("clock: watchdog: tsc drift %s ppm against %s over %llu ms exceeds bound %s ppm: "
	       "clocks marked untrusted\n", clockwd_fmt_ppm(a, sizeof(a), d->drift_ppb), wd.ref_name,
	       (unsigned long long)((d->interval_ns + 500000) / 1000000),
	       clockwd_fmt_ppm(b, sizeof(b), (int64_t)d->bound_ppb));
}

/* Re-measure AP c's skew into *k (answered false: no figures this time). */
static void check_skew(unsigned c, bool quiet, struct clockwd_skew_check *k)
{
	struct cwd_cpu *kc = &cwd_cpu[c];
	int64_t skew, uncert;
	int r;

	*k = (struct clockwd_skew_check){ 0 };
	r = smp_tsc_remeasure(c, SKEW_WAIT_MS, &skew, &uncert);
	if (r == SMP_RESYNC_NONE)
		return;
	if (r != SMP_RESYNC_OK) {
		if (kc->missed++ || quiet)
			return;		/* said once (never in the shell); counted */
		if (r == SMP_RESYNC_VECTOR)
			printk("clock: watchdog: cpu=%u cannot be asked: vector 0x%x is taken; its "
			       "skew is not re-measured\n", c, VEC_TSC_RESYNC);
		else
			printk("clock: watchdog: cpu=%u did not answer within %u ms; its skew is not "
			       "re-measured this time\n", c, SKEW_WAIT_MS);
		return;
	}
	kc->checks++;
	kc->skew = skew;
	kc->uncert = uncert;
	k->answered = true;
	k->changed = clockwd_skew_changed(per_cpu_ptr(tsc_skew, c)->skew,
					  per_cpu_ptr(tsc_skew, c)->uncert, skew, uncert,
					  &k->change, &k->bound);
	uint64_t mag = k->change < 0 ? 0 - (uint64_t)k->change : (uint64_t)k->change;
	uint64_t worst = kc->worst_change < 0 ? 0 - (uint64_t)kc->worst_change :
			 (uint64_t)kc->worst_change;
	if (kc->checks == 1 || mag > worst) {
		kc->worst_change = k->change;
		kc->worst_bound = k->bound;
	}
}

/* AP c's skew moved on its own: its clock alone is untrusted. */
static void report_ap(unsigned c, const struct clockwd_skew_check *k)
{
	if (cwd_cpu[c].reported)
		return;
	cwd_cpu[c].reported = true;
	mark_untrusted(c, CLOCK_UNTRUST_SKEW);
	printk("clock: watchdog: cpu=%u tsc skew changed by %lld cycles (from %lld to %lld) "
	       "exceeds bound %llu cycles: clock marked untrusted\n", c, (long long)k->change,
	       (long long)per_cpu_ptr(tsc_skew, c)->skew, (long long)cwd_cpu[c].skew,
	       (unsigned long long)k->bound);
}

/*
 * Every AP's skew moved alike: the boot CPU's TSC moved by minus that
 * much (a skew is an AP's reading minus the boot CPU's).  Its clock alone
 * is untrusted; the APs keep theirs, whose mutual order still holds.
 */
static void report_boot(const struct clockwd_skew_check *k, unsigned n)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	uint64_t bound = 0;

	if (wd.boot_moved)
		return;
	for (unsigned i = 0; i < n; i++) {
		if (!k[i].answered)
			continue;
		lo = k[i].change < lo ? k[i].change : lo;
		hi = k[i].change > hi ? k[i].change : hi;
		bound = k[i].bound > bound ? k[i].bound : bound;
	}
	/* Every figure lies within bound of the move; so do later ones that it explains. */
	wd.boot_moved = true;
	wd.boot_change = lo + (int64_t)(((uint64_t)hi - (uint64_t)lo) / 2);
	wd.boot_bound = bound + ((uint64_t)hi - (uint64_t)lo + 1) / 2;
	mark_untrusted(0, CLOCK_UNTRUST_MOVED);
	printk("clock: watchdog: cpu=0 tsc moved: every AP's skew changed alike, by %lld..%lld "
	       "cycles (bounds up to %llu cycles): clock marked untrusted\n", (long long)lo,
	       (long long)hi, (unsigned long long)bound);
}

/*
 * notrace: idle waiters (the shell between keys, 1 kHz) call this once a
 * tick; traced, it would fill the buffers with its own calls.  The checks
 * it runs are functions of their own, traced as any.
 */
notrace void clock_watchdog_poll(bool quiet)
{
	static bool busy;
	static struct clockwd_skew_check k[MAX_CPUS];	/* k[c - 1]: AP c's */
	struct clockwd_drift d;
	unsigned n = 0;

	if (this_cpu()->cpu != 0 || busy)
		return;
	tsc_inject_step_poll();	/* inject.tsc_step_ms=: say when it happened */
	if (wd.state != CWD_ON && wd.state != CWD_BLIND)
		return;
	if (!client || !client->in_use()) {
		wd.have_base = false;	/* nothing stamped: start afresh when it is */
		return;
	}
	if (wd.have_base && rdtsc() - wd.base.tsc_before < wd.interval_cycles)
		return;
	busy = true;
	bool first = !wd.have_base;
	uint64_t checks = wd.checks;
	bool drift = check_drift(&d);
	bool rate_ok = wd.checks > checks && !drift;	/* evaluated, within its bound */
	if (!first) {
		for (unsigned c = 1; c < cpu_count; c++, n++) {
			k[c - 1] = (struct clockwd_skew_check){ 0 };
			if (cpus[c] && cpus[c]->online)
				check_skew(c, quiet, &k[c - 1]);
		}
	}
	/* What the boot CPU's reported move explains is no AP's change. */
	for (unsigned i = 0; wd.boot_moved && i < n; i++)
		if (k[i].answered && k[i].changed &&
		    clockwd_changes_agree(k[i].change, k[i].bound, wd.boot_change, wd.boot_bound))
			k[i].changed = false;
	bool boot = clockwd_blame(k, n, drift) == CLOCKWD_BLAME_BOOT;
	if (boot) {
		report_boot(k, n);	/* explains the drift too: the boot CPU read the reference */
	} else {
		if (drift)
			report_drift(&d);
		for (unsigned i = 0; i < n; i++)
			if (k[i].answered && k[i].changed)
				report_ap(i + 1, &k[i]);
	}
	/* The clocks this check found good were good at its read, at least. */
	long long now = tsc_cycles_to_ns(wd.base.tsc_before);
	if (rate_ok && !boot)
		cwd_cpu[0].good_ns = now;
	for (unsigned i = 0; rate_ok && i < n; i++)
		if (k[i].answered && !k[i].changed)
			cwd_cpu[i + 1].good_ns = now;
	busy = false;
}

void clock_watchdog_print(void)
{
	char a[32], b[32], c[32];

	if (wd.state != CWD_ON && wd.state != CWD_BLIND) {
		cprintf("clock: watchdog: %s\n", opt_ms ? (wd.state == CWD_NEW ? "not started "
			"(no CPUs brought up)" : "off (see its boot line)") : "off (clock.watchdog_ms=0)");
		return;
	}
	cprintf("clock: watchdog: ref=%s interval_ms=%llu checks=%llu skipped=%llu drift_ppm=%s "
		"max_drift_ppm=%s bound_ppm=%s exceeded=%llu rate_watched=%s\n", wd.ref_name,
		(unsigned long long)wd.interval_ms, (unsigned long long)wd.checks,
		(unsigned long long)wd.skipped, clockwd_fmt_ppm(a, sizeof(a), wd.last.drift_ppb),
		clockwd_fmt_ppm(b, sizeof(b), wd.worst.drift_ppb),
		clockwd_fmt_ppm(c, sizeof(c), (int64_t)wd.worst.bound_ppb),
		(unsigned long long)wd.exceeded, wd.state == CWD_ON ? "yes" : "no");
	for (unsigned i = 1; i < cpu_count; i++) {
		const struct cwd_cpu *k = &cwd_cpu[i];
		if (!cpus[i] || !cpus[i]->online)
			continue;
		cprintf("clock: watchdog: cpu=%u skew_checks=%llu missed=%llu tsc_skew_cycles=%lld "
			"uncertainty_cycles=%lld max_change_cycles=%lld bound_cycles=%llu changed=%s\n",
			i, (unsigned long long)k->checks, (unsigned long long)k->missed,
			(long long)k->skew, (long long)k->uncert, (long long)k->worst_change,
			(unsigned long long)k->worst_bound, k->reported ? "yes" : "no");
	}
}
