/*
 * In-kernel test of the calibrated clock against a reference other than
 * the one calibration chose, so that a reference that wins wrongly (an
 * HPET misreporting its period, say) cannot vouch for itself.  The other
 * reference is one whose rate the architecture fixes: the PM timer, or the
 * PIT when the PM timer won or is absent.  Over one window of it, the TSC
 * delta converted to ns by the boot CPU's conversion must match the
 * reference's ns within: the calibration's bound and tolerance, the other
 * reference's own window bound and tolerance, the window's brackets, and
 * 1 ns of rounding.
 */
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/timers.h>
#include <arch/tsc.h>
#include "kernel/console.h"
#include "kernel/ktest.h"
#include "kernel/kstring.h"

#define WINDOW_NS	100000000ull	/* PM timer window */
#define PIT_STEPS	200		/* PIT window: 200 * 256 ticks = 42.9 ms */
#define WINDOW_TRIES	3		/* a host stall refuses a window: again */
#define OTHER_TOL_PPB	100000ull	/* PIT and PM timer: 100 ppm (tsc.c) */
#define PPB		1000000000ull

KTEST(tsc_matches_other_reference)
{
	struct calib_window w;
	const char *name, *why = NULL;
	bool use_pm;
	uint64_t hz, err, ref_ns, allowed_ppb, diff_ns, allowed_ns;
	int64_t n0, n1;
	uint64_t t0, t1, tsc_ns;

	if (!tsc.hz)
		return "the TSC is not calibrated";
	if (!strcmp(tsc.ref, "user"))
		return KT_SKIP("tsc_hz= set the frequency by hand");
	use_pm = tsc.ref_id != TSC_REF_PMTIMER && pmtimer_ready();
	name = use_pm ? "pmtimer" : "pit";
	for (unsigned i = 0; i < WINDOW_TRIES; i++) {
		if (use_pm)
			why = pmtimer_window(&w, WINDOW_NS, tsc_window_deadline(WINDOW_NS));
		else
			why = pit_window_msb(&w, PIT_STEPS);
		if (!why)
			break;
		printk("ktest: tsc ref=%s window refused: %s\n", name, why);
	}
	if (why)
		return KT_SKIP("every window of the other reference was refused");
	KT_ASSERT(calib_window_eval(&w, &hz, &err));
	/* Frequencies: both may be right only within both bounds and tolerances. */
	allowed_ppb = tsc.err_ppb + tsc.tol_ppb + err + OTHER_TOL_PPB;
	/* Times: the window's middle-of-bracket ends, converted. */
	t0 = 1000000;	/* any anchor: the conversion is linear */
	t1 = t0 + w.tsc_delta;
	KT_ASSERT(!clock_latch_cycles_to_ns(&tsc_clock_boot, t0, &n0));
	KT_ASSERT(!clock_latch_cycles_to_ns(&tsc_clock_boot, t1, &n1));
	tsc_ns = (uint64_t)(n1 - n0);
	ref_ns = (uint64_t)((unsigned __int128)w.ref_ticks * w.ref_period_fs / 1000000ull);
	diff_ns = tsc_ns > ref_ns ? tsc_ns - ref_ns : ref_ns - tsc_ns;
	allowed_ns = (uint64_t)((unsigned __int128)ref_ns * allowed_ppb / PPB) +
		     (uint64_t)((unsigned __int128)w.tsc_uncert * PPB / tsc.hz) + 1;
	printk("ktest: tsc ref=%s freq_hz=%llu against ref=%s freq_hz=%llu: diff_ppm=%llu.%03llu "
	       "allowed_ppm=%llu.%03llu; window ref_ns=%llu tsc_ns=%llu\n", tsc.ref,
	       (unsigned long long)tsc.hz, name, (unsigned long long)hz,
	       (unsigned long long)(calib_diff_ppb(tsc.hz, hz) / 1000),
	       (unsigned long long)(calib_diff_ppb(tsc.hz, hz) % 1000),
	       (unsigned long long)(allowed_ppb / 1000), (unsigned long long)(allowed_ppb % 1000),
	       (unsigned long long)ref_ns, (unsigned long long)tsc_ns);
	KT_ASSERT(calib_diff_ppb(tsc.hz, hz) <= allowed_ppb);
	KT_ASSERT(diff_ns <= allowed_ns);
	return NULL;
}
