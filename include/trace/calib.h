/*
 * TSC calibration arithmetic, shared by the kernel and host tests: turning
 * one measurement window into a frequency with an error bound, and
 * combining rounds. No floating point; errors are carried in parts per
 * billion (ppb) and printed as ppm with three decimals.
 */
#ifndef TRACE_CALIB_H
#define TRACE_CALIB_H

#include <stdbool.h>
#include <stdint.h>

#define CALIB_MAX_ROUNDS	16
#define CALIB_HZ_MIN		1000000ull		/* 1 MHz: below is impossible */
#define CALIB_HZ_MAX		20000000000ull		/* 20 GHz */

/*
 * One window: the TSC advanced tsc_delta cycles while the reference
 * advanced ref_ticks ticks of ref_period_fs femtoseconds each.
 * tsc_uncert: cycles by which either end of the window may be misplaced,
 * summed over both ends (the brackets around the reference reads, plus
 * the longest poll interval for edge-detecting methods).
 * ref_uncert_ticks: ticks of quantisation in the reference (usually 1).
 */
struct calib_window {
	uint64_t tsc_delta;		/* TSC cycles across the window */
	uint64_t tsc_uncert;		/* cycles of uncertainty, both ends */
	uint64_t ref_ticks;		/* reference ticks across the window */
	uint64_t ref_uncert_ticks;	/* reference quantisation, ticks */
	uint64_t ref_period_fs;		/* reference tick length, femtoseconds */
};

struct calib_result {
	uint64_t hz;			/* TSC frequency, 0 if none */
	uint64_t err_ppb;		/* error bound, parts per billion */
	unsigned rounds;		/* windows that contributed */
	unsigned rejected;		/* windows thrown away */
};

/* Frequency and error bound of one window; false if it is unusable. */
bool calib_window_eval(const struct calib_window *w, uint64_t *hz, uint64_t *err_ppb);

/*
 * Combine n rounds: the result is the median frequency; its bound is the
 * larger of the median round's own bound and half the spread of all
 * rounds (so rounds that disagree widen the error instead of hiding).
 */
void calib_combine(const uint64_t *hz, const uint64_t *err_ppb, unsigned n,
		   struct calib_result *out);

/* |a - b| / b in ppb (saturating). */
uint64_t calib_diff_ppb(uint64_t a, uint64_t b);

/*
 * Consensus among references.  Each measured reference gives the TSC's
 * frequency with a bound on the measurement against that reference
 * (err_ppb) and the tolerance of the reference's own oscillator
 * (tol_ppb).  Two references agree when their frequencies differ by no
 * more than the sum of both bounds and both tolerances: then both can be
 * right.  The largest group in which every pair agrees is trusted; among
 * groups of one size, the one with more architecturally fixed rates (PIT,
 * PM timer: their rate is defined by the platform, not read from the
 * firmware or the hardware) wins, then the one whose best bound is
 * smallest.  The winner is the group's member with the smallest bound on
 * the truth, err_ppb + tol_ppb.  A reference outside the group is not
 * used, whatever its bound.
 */
#define CALIB_MAX_REFS		8

struct calib_ref {
	bool usable;			/* measured, frequency possible */
	bool fixed_rate;		/* rate fixed by the architecture */
	uint64_t hz;			/* TSC frequency it gives */
	uint64_t err_ppb;		/* measurement against it */
	uint64_t tol_ppb;		/* its oscillator's tolerance */
};

enum calib_verdict {
	CALIB_NONE,			/* no usable reference */
	CALIB_SOLE,			/* only one reference to go by */
	CALIB_AGREED,			/* two or more agree */
	CALIB_OUTRANKED,		/* none agree: the winner is fixed-rate, others not */
	CALIB_UNRESOLVED,		/* none agree, all of one rank: smallest bound */
};

/* Do references a and b agree? */
bool calib_agree(const struct calib_ref *a, const struct calib_ref *b);

/*
 * Pick the winner of refs[0..n) (n <= CALIB_MAX_REFS): its index, or -1.
 * in_group[i] says whether reference i is in the trusted group.
 */
int calib_consensus(const struct calib_ref *refs, unsigned n, bool *in_group,
		    enum calib_verdict *verdict);

#endif
