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

#endif
