/*
 * TSC calibration arithmetic, shared by the kernel and host tests: turning
 * one measurement window into a frequency with an error bound, and
 * combining rounds. No floating point; errors are carried in parts per
 * billion (ppb) and printed as ppm with three decimals.
 */
#ifndef ARCH_CALIB_H
#define ARCH_CALIB_H

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
 * smallest.  (Amended, issue 30:) between groups of one size and rank,
 * the one whose members agree within their measured bounds alone (err,
 * no tolerance: "tight" pairs) wins: a tolerance says how far a figure
 * may be off, not that it is; two groups still alike are CALIB_TIED.
 * The winner is the group's member with the smallest bound on the truth,
 * err_ppb + tol_ppb, among those the measurements confirm: a read_only
 * figure (nothing measured it) is a candidate only if it lies within
 * err + tol of every measured member of the group.  A reference outside
 * the group is not used, whatever its bound.
 *
 * Assumed: a majority of the references is right (no two are wrong
 * alike).  Two that are (a PIT and a PM timer sharing one bad crystal, an
 * HPET period and a CPUID figure both misreported by one firmware) form a
 * group that outvotes a right one; the figures cannot tell.  So when the
 * vote leaves a reference out, the bound stated is calib_cover_ppb()'s,
 * which holds whichever reference is right.
 */
#define CALIB_MAX_REFS		8

struct calib_ref {
	bool usable;			/* measured, frequency possible */
	bool fixed_rate;		/* rate fixed by the architecture */
	uint64_t hz;			/* TSC frequency it gives */
	uint64_t err_ppb;		/* measurement against it */
	uint64_t tol_ppb;		/* its oscillator's tolerance */
	bool read_only;			/* a figure read (CPUID), not measured: err_ppb is
					 * its rounding, nothing checked it */
};

enum calib_verdict {
	CALIB_NONE,			/* no usable reference */
	CALIB_SOLE,			/* only one reference to go by */
	CALIB_AGREED,			/* two or more agree */
	CALIB_OUTRANKED,		/* none agree: the winner is fixed-rate, others not */
	CALIB_UNRESOLVED,		/* none agree, all of one rank: smallest bound */
	CALIB_TIED,			/* two groups agree alike and rank alike: smallest bound,
					 * and nothing decides between them */
};

/* Do references a and b agree? */
bool calib_agree(const struct calib_ref *a, const struct calib_ref *b);

/* Do a and b agree within their measured bounds alone (err, no tol)? */
bool calib_agree_tight(const struct calib_ref *a, const struct calib_ref *b);

/*
 * Is refs[i] confirmed by the measured members of the group in_group
 * (within err + tol of each)?  A measured reference always is.
 */
bool calib_confirmed(const struct calib_ref *refs, unsigned n, const bool *in_group, unsigned i);

/*
 * A bound on the truth around refs[win].hz that holds whichever usable
 * reference of refs[0..n) is right, in ppb of the truth (the unit of
 * err_ppb and tol_ppb): the largest, over usable i, of
 *	ceil(|hz_i - hz_win| (1 + b_i) / hz_i) + b_i,	b_i = err_i + tol_i
 * (reference i puts the truth T within b_i T of hz_i, so T >= hz_i /
 * (1 + b_i)); refs[win]'s own err + tol at least.  *spread_ppb: the
 * largest |hz_i - hz_win| as a part of hz_win, rounded up.  Saturates.
 */
uint64_t calib_cover_ppb(const struct calib_ref *refs, unsigned n, unsigned win,
			 uint64_t *spread_ppb);

/*
 * Pick the winner of refs[0..n) (n <= CALIB_MAX_REFS): its index, or -1.
 * in_group[i] says whether reference i is in the trusted group.
 */
int calib_consensus(const struct calib_ref *refs, unsigned n, bool *in_group,
		    enum calib_verdict *verdict);

#endif
