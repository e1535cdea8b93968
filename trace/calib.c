/*
 * TSC calibration arithmetic.
 *
 * A window gives f = tsc_delta / T with T = ref_ticks * ref_period_fs.
 * Assumptions behind the bound:
 *  - the reference's own rate is exact (its error is the firmware's,
 *    nominally ~50-100 ppm on real crystals, and 0 under QEMU);
 *  - each end of the window is known to within the cycles recorded in
 *    tsc_uncert (reads bracketed by rdtsc, plus a poll interval when an
 *    edge is detected by polling);
 *  - the reference count is exact to within ref_uncert_ticks.
 * Then the relative error is at most
 *	tsc_uncert / tsc_delta + ref_uncert_ticks / ref_ticks,
 * which is what calib_window_eval() returns, in ppb, rounded up.
 */
#include "trace/calib.h"

#define FS_PER_S	1000000000000000ull
#define PPB		1000000000ull

static uint64_t div_ceil_u128(unsigned __int128 n, uint64_t d)
{
	return (uint64_t)((n + d - 1) / d);
}

bool calib_window_eval(const struct calib_window *w, uint64_t *hz, uint64_t *err_ppb)
{
	unsigned __int128 den, f;

	if (!w->tsc_delta || !w->ref_ticks || !w->ref_period_fs)
		return false;
	if (w->tsc_uncert >= w->tsc_delta || w->ref_uncert_ticks >= w->ref_ticks)
		return false;
	den = (unsigned __int128)w->ref_ticks * w->ref_period_fs;
	/* f = tsc_delta * 1e15 / den, rounded to nearest. */
	f = ((unsigned __int128)w->tsc_delta * FS_PER_S + den / 2) / den;
	if (f < CALIB_HZ_MIN || f > CALIB_HZ_MAX)
		return false;
	*hz = (uint64_t)f;
	*err_ppb = div_ceil_u128((unsigned __int128)w->tsc_uncert * PPB, w->tsc_delta) +
		   div_ceil_u128((unsigned __int128)w->ref_uncert_ticks * PPB, w->ref_ticks);
	return true;
}

uint64_t calib_diff_ppb(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;
	unsigned __int128 r;

	if (!b)
		return UINT64_MAX;
	r = (unsigned __int128)d * PPB / b;
	return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

void calib_combine(const uint64_t *hz, const uint64_t *err_ppb, unsigned n,
		   struct calib_result *out)
{
	unsigned idx[CALIB_MAX_ROUNDS];
	unsigned m;
	uint64_t lo, hi, half_spread;

	out->hz = 0;
	out->err_ppb = 0;
	out->rounds = 0;
	if (n == 0)
		return;
	if (n > CALIB_MAX_ROUNDS)
		n = CALIB_MAX_ROUNDS;
	/* Insertion sort of indices by frequency (n is tiny). */
	for (unsigned i = 0; i < n; i++) {
		unsigned j = i;
		while (j > 0 && hz[idx[j - 1]] > hz[i]) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = i;
	}
	m = idx[(n - 1) / 2];
	lo = hz[idx[0]];
	hi = hz[idx[n - 1]];
	half_spread = (calib_diff_ppb(hi, lo) + 1) / 2;
	out->hz = hz[m];
	out->err_ppb = err_ppb[m] > half_spread ? err_ppb[m] : half_spread;
	out->rounds = n;
}
