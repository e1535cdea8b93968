/*
 * Clock watchdog arithmetic, shared by the kernel (arch/x86/time/clockwd.c) and
 * the host tests: one watchdog interval between two bracketed readings of
 * a reference counter, the TSC rate it gives, how far that rate is from the
 * rate the same reference gave at calibration (the drift, in ppb) and the
 * bound within which no drift can be told from none; and whether a CPU's
 * re-measured TSC skew differs from the one its clock was built on by more
 * than both measurements' bounds.  No floating point.  The derivations are
 * in arch/x86/time/clockwd_rule.c.
 */
#ifndef ARCH_CLOCKWD_RULE_H
#define ARCH_CLOCKWD_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <arch/calib.h>

/* One reading of the reference, bracketed by two TSC reads. */
struct clockwd_sample {
	uint64_t tsc_before;		/* TSC just before the reference read */
	uint64_t ref;			/* the reference counter (masked to its width) */
	uint64_t tsc_after;		/* TSC just after */
};

/* The reference a watchdog compares the TSC with. */
struct clockwd_ref {
	uint64_t mask;			/* counter width: 2^bits - 1 */
	uint64_t period_fs;		/* tick length, femtoseconds */
	uint64_t base_hz;		/* TSC rate this reference gave at calibration */
	uint64_t base_err_ppb;		/* that figure's bound */
};

/* One interval's verdict. */
struct clockwd_drift {
	uint64_t hz;			/* TSC rate over the interval against the reference */
	uint64_t window_err_ppb;	/* that rate's own bound (calib_window_eval) */
	int64_t drift_ppb;		/* (hz - base_hz) / base_hz, ppb, signed */
	uint64_t bound_ppb;		/* |drift_ppb| above this cannot be no drift */
	uint64_t interval_ns;		/* the interval by the reference, ns */
	bool exceeded;			/* |drift_ppb| > bound_ppb */
};

/*
 * The interval from a to b as a calibration window: midpoints of the
 * brackets, half of each bracket as uncertainty, the reference's modular
 * delta with one tick of quantisation.  False if the samples cannot make a
 * window (TSC not forward, brackets wider than the interval, no ticks).
 */
bool clockwd_window(const struct clockwd_sample *a, const struct clockwd_sample *b,
		    const struct clockwd_ref *ref, struct calib_window *w);

/*
 * The drift over window w against ref, and its bound (see clockwd.c).
 * False if the window gives no frequency or ref has none.
 */
bool clockwd_eval(const struct calib_window *w, const struct clockwd_ref *ref,
		  struct clockwd_drift *out);

enum clockwd_ref_state {
	CLOCKWD_REF_COUNTS = 0,		/* it advanced, or too little time passed to tell */
	CLOCKWD_REF_STOPPED = 1,	/* at most one tick where at least two passed */
	CLOCKWD_REF_BACKWARDS = 2,	/* its delta, signed in its width, is negative */
};

/*
 * Whether the reference counted over the interval from a to b, in which
 * the TSC advanced; *ticks its delta, signed in the counter's width,
 * *expected the fewest ticks that must have passed (see clockwd.c).  For
 * an interval no longer than half the reference's wrap (the caller's
 * clockwd_max_cycles()), where a modular delta is unambiguous.
 */
int clockwd_ref_state(const struct clockwd_sample *a, const struct clockwd_sample *b,
		      const struct clockwd_ref *ref, int64_t *ticks, uint64_t *expected);

/*
 * TSC cycles an interval may last for the reference's modular delta to be
 * the true count: half its wrap period at tsc_hz (so that a TSC running
 * anywhere up to twice too fast or slow still reads an unambiguous count),
 * saturated at UINT64_MAX for a 64-bit counter.
 */
uint64_t clockwd_max_cycles(const struct clockwd_ref *ref, uint64_t tsc_hz);

/*
 * Skew change: a CPU's skew measured at bring-up (old, bound old_uncert)
 * and now (new, bound new_uncert), cycles.  *change = new - old (saturated
 * to int64), *bound = old_uncert + new_uncert; returns whether |change| >
 * bound, i.e. the two measurements cannot both be right about one skew.
 */
bool clockwd_skew_changed(int64_t old_skew, int64_t old_uncert, int64_t new_skew,
			  int64_t new_uncert, int64_t *change, uint64_t *bound);

/* One AP's skew re-measure in a watchdog check. */
struct clockwd_skew_check {
	bool answered;			/* it answered: the figures below are real */
	bool changed;			/* clockwd_skew_changed() said so */
	int64_t change;			/* new skew - bring-up skew, cycles */
	uint64_t bound;			/* the change's bound, cycles */
};

enum clockwd_blame {
	CLOCKWD_BLAME_APS = 0,		/* each AP whose skew changed moved */
	CLOCKWD_BLAME_BOOT = 1,		/* the boot CPU moved: every AP's skew changed alike */
};

/*
 * Which clock moved, from one check's figures.  A skew relates two clocks,
 * an AP's and the boot CPU's, so one AP's change cannot say which of the
 * two moved; the simplest explanation (one clock moved) decides:
 *  - every AP that answered changed, by amounts that agree pairwise
 *    within their bounds (|c_i - c_j| <= b_i + b_j: one move of the boot
 *    CPU shifts every skew by the same amount, each measured within its
 *    bound), and either two or more APs answered or the reference saw the
 *    boot CPU's TSC move in this interval (drift_exceeded: a third clock
 *    against it): the boot CPU moved;
 *  - otherwise each AP that changed moved (one AP and a quiet reference:
 *    the reference agrees with the boot CPU).
 * k[0..n) are the APs' checks (the boot CPU has none).
 */
int clockwd_blame(const struct clockwd_skew_check *k, unsigned n, bool drift_exceeded);

/*
 * Two skew changes that one move explains: |a - b| <= a_bound + b_bound,
 * exactly (no overflow).  Also how a later check tells an AP's change
 * that the boot CPU's known move already explains from a move of its own.
 */
bool clockwd_changes_agree(int64_t a, uint64_t a_bound, int64_t b, uint64_t b_bound);

/* ppb as "[-]<ppm>.<3 decimals>" into buf; returns buf. */
char *clockwd_fmt_ppm(char *buf, size_t len, int64_t ppb);

#endif
