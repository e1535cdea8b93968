/*
 * TSC calibration. The trace write path stamps raw TSC cycles; this file
 * finds how many cycles make a second, and how sure we are.
 *
 * Procedure (per reference present, or the one clock= names):
 *  - one warm-up window, discarded: under TCG the first window after boot
 *    reads up to 0.5% high while code is being translated;
 *  - TSC_ROUNDS windows, each with its own error bound (see pit.c, hpet.c,
 *    pmtimer.c for the derivations); windows an SMI or emulator stall
 *    disturbed are rejected and retried, up to TSC_MAX_TRIES;
 *  - the median round's frequency, with a bound widened to half the
 *    rounds' spread (arch/x86/time/calib.c).
 * Each result carries two figures: err, the measurement against the
 * reference (brackets, quantisation, spread), and tol, the tolerance of
 * the reference's own oscillator, which no measurement against it can
 * see.  The winner is chosen by consensus, not by the smallest err alone
 * (calib_consensus()): the largest group of references that pairwise agree
 * within err + tol is trusted, and a reference outside it is not used,
 * however small its err.  Between two that disagree, a rate fixed by the
 * architecture (PIT, PM timer) outranks one the firmware or the hardware
 * reports (HPET period, CPUID crystal).  The vote assumes that a majority
 * of the references is right: two wrong alike outvote a right one, and
 * the figures cannot tell.  So a vote that leaves a reference out is
 * disputed: the bound stated then covers every reference's figure
 * (calib_cover_ppb()), and the winner's own is said as what holds if the
 * majority is right.  tsc.refine_ms=N then measures one
 * long window against the winner (HPET or PM timer; the PIT cannot time
 * more than 54 ms).
 *
 * Tolerances assumed:
 *  - PIT and PM timer: 100 ppm. Both count a 14.31818 MHz crystal's
 *    output (divided by 12 and by 4); PC boards' crystals are specified at
 *    50-100 ppm, and neither the 8254 nor the ACPI specification promises
 *    more.
 *  - HPET: 500 ppm, the IA-PC HPET specification's +-0.05% over intervals
 *    of 1 ms or more.
 *  - CPUID 0x15/0x16: 100 ppm for the crystal (0x15 gives its nominal
 *    frequency exactly, so err is 0; 0x16's MHz figure adds +-0.5 MHz of
 *    rounding to err).
 * tsc_hz= skips all of this. With no usable reference the kernel says so
 * and leaves stamps as unconverted cycles rather than invent a frequency.
 */
#include <stddef.h>
#include <arch/acpi.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/timers.h>
#include <arch/tsc.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "lib/format.h"
#include "kernel/kstring.h"

#define TSC_ROUNDS		3
#define TSC_MAX_TRIES		8
#define TSC_WINDOW_NS		50000000ull	/* 50 ms */
#define PIT_MSB_STEPS		200		/* 200 * 256 ticks = 42.9 ms */
#define PIT_GATE_TICKS		59659		/* 50.0 ms */
#define CPUID_CRYSTAL_PPB	100000ull	/* nominal crystal tolerance, 100 ppm */

enum { REF_PIT = TSC_REF_PIT, REF_HPET = TSC_REF_HPET, REF_PMTIMER = TSC_REF_PMTIMER,
       REF_CPUID = TSC_REF_CPUID, NREFS };
static const char *const ref_names[NREFS] = { "pit", "hpet", "pmtimer", "cpuid" };
/* The oscillators' tolerances (see the head of this file) and which rates
 * the architecture fixes. */
static const uint64_t ref_tol_ppb[NREFS] = { 100000, 500000, 100000, CPUID_CRYSTAL_PPB };
static const bool ref_fixed_rate[NREFS] = { true, false, true, false };

static uint64_t inject_cpuid_hz;	/* inject.cpuid_hz=, 0 = none */
CMDLINE_OPTION(inject_cpuid_hz, .name = "inject.cpuid_hz", .type = OPT_UINT,
	       .var = &inject_cpuid_hz, .min = CALIB_HZ_MIN, .max = CALIB_HZ_MAX,
	       .help = "test facility: take CPUID 0x15 to report this TSC frequency (Hz)");

static const char *const clock_choices[] = { "auto", "pit", "hpet", "pmtimer", "cpuid", NULL };
static int clock_choice;		/* index in clock_choices; 0 = auto */
static uint64_t user_hz;		/* tsc_hz=, 0 = calibrate */
static uint64_t refine_ms;		/* tsc.refine_ms=, 0 = none */

CMDLINE_OPTION(clock, .name = "clock", .type = OPT_ENUM, .var = &clock_choice,
	       .choices = clock_choices,
	       .help = "TSC calibration reference: auto (all present, by consensus), pit, hpet, pmtimer, cpuid");
CMDLINE_OPTION(tsc_hz, .name = "tsc_hz", .type = OPT_UINT, .var = &user_hz,
	       .min = CALIB_HZ_MIN, .max = CALIB_HZ_MAX,
	       .help = "TSC frequency in Hz, skipping calibration");
CMDLINE_OPTION(tsc_refine, .name = "tsc.refine_ms", .type = OPT_UINT, .var = &refine_ms,
	       .min = 0, .max = 10000,
	       .help = "extra calibration window in ms against the HPET or PM timer");

struct tsc_info tsc;
struct clock_latch tsc_clock_boot;
/* Each CPU's cycles->ns, alone on its cache line: read by any CPU's dump. */
DEFINE_PER_CPU_ALIGNED(struct clock_latch, tsc_clock);

struct ref {
	bool present;			/* the hardware exists */
	const char *absent;		/* why not, when !present */
	bool measured;			/* a result was obtained */
	bool broken;			/* impossible or wildly off: not used */
	struct calib_result r;		/* frequency and bound */
};

static struct ref refs[NREFS];

/* Print ppb as ppm with three decimals. */
#define PPM_FMT "%llu.%03llu"
#define PPM_ARG(ppb) (unsigned long long)((ppb) / 1000), (unsigned long long)((ppb) % 1000)

static void detect_properties(void)
{
	struct cpuid_regs r = cpuid(0, 0);
	uint32_t max_leaf = r.eax;
	uint32_t max_ext = cpuid(0x80000000, 0).eax;

	if (max_ext >= 0x80000007)
		tsc.invariant = cpuid(0x80000007, 0).edx & (1u << 8);
	if (max_leaf >= 7)
		tsc.tsc_adjust = cpuid(7, 0).ebx & (1u << 1);
	tsc.hypervisor = cpuid(1, 0).ecx & (1u << 31);
	if (tsc.hypervisor) {
		r = cpuid(0x40000000, 0);
		memcpy(tsc.hv_vendor, &r.ebx, 4);
		memcpy(tsc.hv_vendor + 4, &r.ecx, 4);
		memcpy(tsc.hv_vendor + 8, &r.edx, 4);
		tsc.hv_vendor[12] = '\0';
		for (int i = 0; i < 12; i++)
			if (tsc.hv_vendor[i] < ' ' || tsc.hv_vendor[i] > '~')
				tsc.hv_vendor[i] = '?';
	}
	printk("tsc: invariant=%s tsc_adjust=%s hypervisor=%s%s%s\n",
	       tsc.invariant ? "yes" : "no", tsc.tsc_adjust ? "yes" : "no",
	       tsc.hypervisor ? "\"" : "none", tsc.hypervisor ? tsc.hv_vendor : "",
	       tsc.hypervisor ? "\"" : "");
	if (!tsc.invariant)
		printk("tsc: warning: the TSC is not known to be invariant; stamps are "
		       "trustworthy only while its frequency holds\n");
}

static void detect_references(void)
{
	const char *why;

	/* Hardware-reduced machines may have none: a bounded probe, not nine
	 * windows' worth of polling. */
	refs[REF_PIT].absent = pit_probe();
	refs[REF_PIT].present = !refs[REF_PIT].absent;
	if (!acpi.has_hpet) {
		refs[REF_HPET].absent = "no valid ACPI HPET table";
	} else if ((why = hpet_init(acpi.hpet_addr))) {
		refs[REF_HPET].absent = why;
	} else {
		refs[REF_HPET].present = true;
		printk("tsc: hpet period_fs=%llu counter_bits=%u\n",
		       (unsigned long long)hpet_period_fs(), hpet_is_64bit() ? 64 : 32);
	}
	if (acpi.hw_reduced) {
		refs[REF_PMTIMER].absent = "hardware-reduced ACPI (the FADT's PM timer is ignored)";
	} else if (!acpi.pm_timer_port) {
		refs[REF_PMTIMER].absent = "the FADT names no PM timer";
	} else {
		pmtimer_init(acpi.pm_timer_port, acpi.pm_timer_32bit ? 32 : 24);
		refs[REF_PMTIMER].present = pmtimer_ready();
		refs[REF_PMTIMER].absent = "the PM timer does not count";
	}
	if (inject_cpuid_hz)
		refs[REF_CPUID].present = true;
	else if (cpuid(0, 0).eax < 0x15)
		refs[REF_CPUID].absent = "the CPU has no CPUID leaf 0x15";
	else
		refs[REF_CPUID].present = true;
}

/* The PIT's result, once measured: bounds the other references' waits. */
static uint64_t provisional_hz;

/*
 * TSC cycles a window of window_ns may take before it is abandoned: four
 * times its length plus 10 ms at the provisional rate (slack for emulator
 * stalls), or 0 (no time bound, only a read count) before there is one.
 */
uint64_t tsc_window_deadline(uint64_t window_ns)
{
	if (!provisional_hz)
		return 0;
	return (uint64_t)((unsigned __int128)(4 * window_ns + 10000000ull) * provisional_hz /
			  1000000000ull);
}

/* One window of reference i. */
static const char *window(int i, struct calib_window *w)
{
	switch (i) {
	case REF_HPET:
		return hpet_window(w, TSC_WINDOW_NS, tsc_window_deadline(TSC_WINDOW_NS));
	case REF_PMTIMER:
		return pmtimer_window(w, TSC_WINDOW_NS, tsc_window_deadline(TSC_WINDOW_NS));
	default:
		return "no window method";
	}
}

/* Warm-up, then TSC_ROUNDS accepted windows of one method. */
static const char *measure_rounds(const char *(*fn)(int, struct calib_window *), int i,
				  const char *label, struct calib_result *out)
{
	uint64_t hz[TSC_ROUNDS], err[TSC_ROUNDS];
	unsigned n = 0, rejected = 0;
	struct calib_window w;
	const char *why = NULL;

	fn(i, &w);				/* warm-up, discarded whatever it gives */
	for (unsigned tries = 0; n < TSC_ROUNDS && tries < TSC_MAX_TRIES; tries++) {
		why = fn(i, &w);
		if (!why && !calib_window_eval(&w, &hz[n], &err[n]))
			why = "the window gives an impossible frequency";
		if (why) {
			printk("tsc: ref=%s window rejected: %s\n", label, why);
			rejected++;
			continue;
		}
		n++;
	}
	if (n < TSC_ROUNDS)
		return "too many windows rejected";
	calib_combine(hz, err, n, out);
	out->rejected = rejected;
	return NULL;
}

static const char *pit_msb(int i, struct calib_window *w)
{
	(void)i;
	return pit_window_msb(w, PIT_MSB_STEPS);
}

static const char *pit_gate(int i, struct calib_window *w)
{
	(void)i;
	return pit_window_gate(w, PIT_GATE_TICKS);
}

static void measure_pit(struct ref *ref)
{
	struct calib_result msb, gate;
	const char *e1 = measure_rounds(pit_msb, REF_PIT, "pit", &msb);
	const char *e2 = measure_rounds(pit_gate, REF_PIT, "pit", &gate);

	if (!e1)
		printk("tsc: pit method=msb freq_hz=%llu err_ppm=" PPM_FMT " rounds=%u rejected=%u\n",
		       (unsigned long long)msb.hz, PPM_ARG(msb.err_ppb), msb.rounds, msb.rejected);
	else
		printk("tsc: pit method=msb failed: %s\n", e1);
	if (!e2)
		printk("tsc: pit method=gate freq_hz=%llu err_ppm=" PPM_FMT " rounds=%u rejected=%u\n",
		       (unsigned long long)gate.hz, PPM_ARG(gate.err_ppb), gate.rounds, gate.rejected);
	else
		printk("tsc: pit method=gate failed: %s\n", e2);
	if (e1 && e2) {
		ref->absent = e1;
		return;
	}
	ref->measured = true;
	ref->r = (!e1 && (e2 || msb.err_ppb <= gate.err_ppb)) ? msb : gate;
	if (ref->r.hz >= CALIB_HZ_MIN && ref->r.hz <= CALIB_HZ_MAX)
		provisional_hz = ref->r.hz;
}

static void measure_cpuid(struct ref *ref)
{
	struct cpuid_regs r15 = cpuid(0x15, 0);
	uint32_t max_leaf = cpuid(0, 0).eax;

	if (inject_cpuid_hz) {
		printk("tsc: inject.cpuid_hz=%llu: taking CPUID 0x15 to report a TSC frequency of "
		       "%llu Hz\n", (unsigned long long)inject_cpuid_hz,
		       (unsigned long long)inject_cpuid_hz);
		ref->r.hz = inject_cpuid_hz;
		ref->r.err_ppb = 0;
	} else if (r15.eax && r15.ebx && r15.ecx) {
		/* Exact for the nominal crystal; its tolerance is in tol. */
		ref->r.hz = (uint64_t)r15.ecx * r15.ebx / r15.eax;
		ref->r.err_ppb = 0;
	} else if (max_leaf >= 0x16 && (cpuid(0x16, 0).eax & 0xFFFF)) {
		/* Base frequency in MHz: nominal, +-0.5 MHz of rounding. */
		ref->r.hz = (uint64_t)(cpuid(0x16, 0).eax & 0xFFFF) * 1000000ull;
		ref->r.err_ppb = 500000ull * 1000000000ull / ref->r.hz;
	} else {
		ref->absent = "CPUID 0x15 gives no crystal frequency and 0x16 no base frequency";
		return;
	}
	ref->r.rounds = 1;
	ref->measured = true;
}

static void measure(int i)
{
	struct ref *ref = &refs[i];
	const char *why = NULL;

	if (i == REF_PIT)
		measure_pit(ref);
	else if (i == REF_CPUID)
		measure_cpuid(ref);
	else if ((why = measure_rounds(window, i, ref_names[i], &ref->r)))
		ref->absent = why;
	else
		ref->measured = true;
	if (ref->measured && (ref->r.hz < CALIB_HZ_MIN || ref->r.hz > CALIB_HZ_MAX)) {
		printk("tsc: ref=%s gives an impossible %llu Hz; not used\n", ref_names[i],
		       (unsigned long long)ref->r.hz);
		ref->broken = true;
	}
	if (!ref->measured)
		printk("tsc: ref=%s failed: %s\n", ref_names[i], ref->absent);
}

static void fill_calib_refs(struct calib_ref *cr)
{
	for (int i = 0; i < NREFS; i++)
		cr[i] = (struct calib_ref){
			.usable = refs[i].measured && !refs[i].broken,
			.fixed_rate = ref_fixed_rate[i],
			.hz = refs[i].r.hz,
			.err_ppb = refs[i].r.err_ppb,
			.tol_ppb = ref_tol_ppb[i],
			.read_only = i == REF_CPUID,	/* read, not measured */
		};
}

/*
 * Whether the consensus would leave a measured reference out. A window
 * disturbed in a way its brackets cannot see (the emulator's host moving
 * the TSC under a descheduled vCPU, say) can make a right reference
 * disagree once; a wrong rate disagrees every time. So before anything is
 * voted out, every measured reference is measured once more and the vote
 * is taken on the new figures.
 */
static void remeasure_if_disagreeing(void)
{
	struct calib_ref cr[NREFS];
	bool in[NREFS];
	enum calib_verdict v;
	bool again = false;

	fill_calib_refs(cr);
	if (calib_consensus(cr, NREFS, in, &v) < 0)
		return;
	for (int i = 0; i < NREFS; i++)
		if (cr[i].usable && !in[i])
			again = true;
	if (!again)
		return;
	printk("tsc: references disagree; measuring them again before any is left out\n");
	for (int i = 0; i < NREFS; i++) {
		if (!refs[i].measured || refs[i].broken)
			continue;
		refs[i].measured = false;
		measure(i);
	}
}

static bool vote_usable[NREFS];	/* pick(): the references the vote counted */

/*
 * The winner by consensus (arch/x86/time/calib.c); every measured reference the
 * consensus leaves out is reported and marked not used.
 */
static int pick(void)
{
	struct calib_ref cr[NREFS];
	bool in[NREFS];
	enum calib_verdict v;
	char group[32] = "";
	size_t len = 0;
	int best;

	fill_calib_refs(cr);
	best = calib_consensus(cr, NREFS, in, &v);
	if (best < 0)
		return -1;
	for (int i = 0; i < NREFS; i++) {
		vote_usable[i] = cr[i].usable;
		if (in[i])
			len += ksnprintf(group + len, sizeof(group) - len, "%s%s", len ? "," : "",
					 ref_names[i]);
	}
	for (int i = 0; i < NREFS; i++) {
		if (!cr[i].usable || in[i])
			continue;
		printk("tsc: ref=%s disagrees with %s (" PPM_FMT " ppm); %s not used\n",
		       ref_names[i], group, PPM_ARG(calib_diff_ppb(cr[i].hz, cr[best].hz)),
		       ref_names[i]);
		refs[i].broken = true;
	}
	for (int i = 0; i < NREFS; i++)
		if (in[i] && i != best && !calib_confirmed(cr, NREFS, in, (unsigned)i))
			printk("tsc: ref=%s's figure, read and not measured, lies outside the bound of "
			       "a measured reference (" PPM_FMT " ppm from ref=%s); %s is not the "
			       "winner\n", ref_names[i], PPM_ARG(calib_diff_ppb(cr[i].hz, cr[best].hz)),
			       ref_names[best], ref_names[i]);
	if (v == CALIB_TIED)
		printk("tsc: the vote is tied: another group of references agrees as closely as %s "
		       "and disagrees with it; ref=%s is used for its bound, and nothing decides "
		       "between them\n", group, ref_names[best]);
	else if (v == CALIB_OUTRANKED)
		printk("tsc: no two references agree; ref=%s is used: its rate is fixed by the "
		       "architecture, the others' are reported by the hardware\n", ref_names[best]);
	else if (v == CALIB_UNRESOLVED)
		printk("tsc: no two references agree; ref=%s is used for its bound, and nothing "
		       "confirms it\n", ref_names[best]);
	return best;
}

/*
 * A vote that left a reference out: which group won and which lost, and a
 * bound on the truth that holds whichever of them is right (a majority
 * wrong alike wins the vote; docs/clock.md, "The vote's assumptions").
 * The winner's own err is kept as vote_err_ppb.  After refine(): the
 * figures stated are the final ones.
 */
static void state_dispute(int best)
{
	struct calib_ref cr[NREFS];
	uint64_t cover;
	size_t u = 0, o = 0;

	fill_calib_refs(cr);
	for (int i = 0; i < NREFS; i++) {
		cr[i].usable = vote_usable[i];
		if (!vote_usable[i])
			continue;
		if (refs[i].broken)
			o += ksnprintf(tsc.left_out + o, sizeof(tsc.left_out) - o, "%s%s",
				       o ? "," : "", ref_names[i]);
		else
			u += ksnprintf(tsc.used + u, sizeof(tsc.used) - u, "%s%s", u ? "," : "",
				       ref_names[i]);
	}
	if (!o)
		return;
	cover = calib_cover_ppb(cr, NREFS, (unsigned)best, &tsc.spread_ppb);
	tsc.disputed = true;
	tsc.vote_err_ppb = tsc.err_ppb;
	tsc.err_ppb = cover - tsc.tol_ppb;	/* cover >= the winner's err + tol */
	printk("tsc: vote disputed (it assumes a majority of the references is right; err_ppm "
	       "covers every reference): used=%s left_out=%s spread_ppm=" PPM_FMT " vote_err_ppm="
	       PPM_FMT " err_ppm=" PPM_FMT "\n", tsc.used, tsc.left_out, PPM_ARG(tsc.spread_ppb),
	       PPM_ARG(tsc.vote_err_ppb), PPM_ARG(tsc.err_ppb));
}

static void refine(int best)
{
	struct calib_window w;
	uint64_t hz, err;
	const char *why;

	if (!refine_ms)
		return;
	if (best == REF_HPET)
		why = hpet_window(&w, refine_ms * 1000000ull, tsc_window_deadline(refine_ms * 1000000ull));
	else if (best == REF_PMTIMER && refine_ms <= 2000)
		why = pmtimer_window(&w, refine_ms * 1000000ull,
				     tsc_window_deadline(refine_ms * 1000000ull));
	else
		why = "refinement needs the HPET or the PM timer (up to 2000 ms) as reference";
	if (!why && !calib_window_eval(&w, &hz, &err))
		why = "the window gives an impossible frequency";
	if (why) {
		printk("tsc: refine_ms=%llu skipped: %s\n", (unsigned long long)refine_ms, why);
		return;
	}
	printk("tsc: refine ref=%s window_ms=%llu freq_hz=%llu err_ppm=" PPM_FMT "\n",
	       ref_names[best], (unsigned long long)refine_ms, (unsigned long long)hz,
	       PPM_ARG(err));
	if (err < refs[best].r.err_ppb) {
		refs[best].r.hz = hz;
		refs[best].r.err_ppb = err;
	}
}

bool tsc_ref_result(int ref_id, uint64_t *hz, uint64_t *err_ppb)
{
	const struct ref *r = ref_id >= 0 && ref_id < NREFS ? &refs[ref_id] : NULL;

	if (!r || !r->measured || r->broken)
		return false;
	*hz = r->r.hz;
	*err_ppb = r->r.err_ppb;
	return true;
}

long long tsc_cycles_to_ns(uint64_t cycles)
{
	struct clock_conv c;

	/* A CPU's latch is all zeros (hz 0) until it has a clock. */
	if (clock_latch_read(this_cpu_ptr(tsc_clock), &c) || !c.hz)
		return -1;
	return clock_cycles_to_ns(&c, cycles);
}

long long tsc_now_ns(void)
{
	return tsc_cycles_to_ns(rdtsc());
}

static void install_clock(void)
{
	struct clock_conv c;

	if (clock_conv_init(&c, tsc.hz, rdtsc(), 0)) {
		printk("tsc: cannot build a conversion for %llu Hz\n", (unsigned long long)tsc.hz);
		tsc.hz = 0;
		return;
	}
	clock_latch_write(&tsc_clock_boot, &c);
	clock_latch_write(this_cpu_ptr(tsc_clock), &c);	/* the boot CPU's own clock */
	printk_set_clock(tsc_now_ns);
	printk("clock: cpu=0 " CLOCK_CONV_FMT "\n", CLOCK_CONV_ARGS(c));
}

void tsc_init(void)
{
	int best = -1, want = clock_choice - 1;	/* -1 = auto */

	this_cpu_ptr(tsc_skew)->trusted = true;	/* the reference: skew 0 by definition */
	detect_properties();
	if (user_hz) {
		tsc.hz = user_hz;
		tsc.err_ppb = 0;
		tsc.ref = "user";
		printk("tsc: freq_hz=%llu ref=user err_ppm=0.000 tol_ppm=0.000 invariant=%s\n",
		       (unsigned long long)tsc.hz, tsc.invariant ? "yes" : "no");
		install_clock();
		return;
	}
	detect_references();
	if (want >= 0 && !refs[want].present) {
		printk("tsc: clock=%s: %s; falling back to clock=auto\n", ref_names[want],
		       refs[want].absent);
		want = -1;
	}
	for (int i = 0; i < NREFS; i++) {
		if (!refs[i].present && (want < 0 || i == want))
			printk("tsc: ref=%s absent: %s\n", ref_names[i], refs[i].absent);
		else if (refs[i].present && (want < 0 || i == want))
			measure(i);
	}
	if (want >= 0 && !refs[want].measured) {
		printk("tsc: clock=%s did not give a result; falling back to clock=auto\n",
		       ref_names[want]);
		for (int i = 0; i < NREFS; i++)
			if (refs[i].present && i != want)
				measure(i);
	}
	remeasure_if_disagreeing();
	best = pick();
	if (best >= 0) {
		refine(best);
		tsc.hz = refs[best].r.hz;
		tsc.err_ppb = refs[best].r.err_ppb;
		tsc.tol_ppb = ref_tol_ppb[best];
		tsc.ref = ref_names[best];
		tsc.ref_id = best;
		state_dispute(best);
	} else {
		tsc.hz = 0;
		tsc.ref = "none";
	}
	printk("tsc: freq_hz=%llu ref=%s err_ppm=" PPM_FMT " tol_ppm=" PPM_FMT " invariant=%s\n",
	       (unsigned long long)tsc.hz, tsc.ref, PPM_ARG(tsc.err_ppb), PPM_ARG(tsc.tol_ppb),
	       tsc.invariant ? "yes" : "no");
	for (int i = 0; i < NREFS; i++)
		if (refs[i].measured)
			printk("tsc: ref=%s freq_hz=%llu err_ppm=" PPM_FMT " tol_ppm=" PPM_FMT
			       " rounds=%u%s\n", ref_names[i], (unsigned long long)refs[i].r.hz,
			       PPM_ARG(refs[i].r.err_ppb), PPM_ARG(ref_tol_ppb[i]), refs[i].r.rounds,
			       refs[i].broken ? " (not used)" : "");
	if (!tsc.hz) {
		printk("tsc: no reference gave a usable frequency; trace stamps stay raw "
		       "cycles, marked unconverted (tsc_hz= sets one by hand)\n");
		return;
	}
	install_clock();
}
