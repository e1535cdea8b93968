/*
 * Clock watchdog arithmetic (the kernel side is arch/x86/time/clockwd.c).
 *
 * What is compared.  At calibration every reference present measured the
 * TSC's rate: base_hz, within base_err.  The watchdog measures it again
 * against the same reference over each interval: hz, within e1 (the
 * interval is a calibration window, calib_window_eval()).  The drift is
 * (hz - base_hz) / base_hz.  Comparing a reference with itself is what
 * makes the bound tight: the reference oscillator's tolerance (100 ppm for
 * a PM timer's crystal, 500 ppm for an HPET) is an offset from its
 * nominal rate that was there at calibration too, and cancels.  The
 * stamps' frequency (tsc.hz, perhaps from another reference) holds to its
 * own err + tol for as long as the TSC's rate has not changed since
 * calibration, which is what this tests.
 *
 * Assumptions:
 *  - the reference keeps its rate for the run (a crystal's temperature
 *    and ageing drift, ppm over hours, is not bounded here);
 *  - base_hz is within base_err (e0) of the true rate f0 at calibration,
 *    relative to f0, plus 0.5 Hz for rounding to whole Hz;
 *  - hz is within e1 of the interval's true rate f1, relative to f1,
 *    plus 0.5 Hz (calib_window_eval()'s bound: brackets, one tick);
 *  - no drift means f1 = f0 = f.
 *
 * Derivation of the bound.  With no drift,
 *	|hz - base_hz| <= (e0 + e1) f + 1 Hz,    base_hz >= f (1 - e0) - 0.5 Hz,
 * so the figure's size is at most
 *	(e0 + e1 + 1/f) / (1 - e0 - 0.5/f) <= b (1 + 2x),
 *	b = e0 + e1 + r,  x = e0 + r,  r = 2 / base_hz >= 1/f
 * (f >= base_hz / 2 whenever e0 < 1/2), using 1 / (1 - x) <= 1 + 2x for
 * x <= 1/2.  In ppb, each term rounded up:
 *	bound = b + ceil(2 b x / 10^9).
 * A larger figure cannot come from an unchanged rate: that is a drift.
 * Conversely a real drift D gives a figure within the same bound of D, so
 * one above twice the bound is always reported; one between one and two
 * bounds may or may not be.  The figure itself is truncated toward zero,
 * never overstated.
 *
 * A reference that does not count.  A watchdog whose reference stopped
 * or runs backwards has no interval to evaluate; it must say so rather
 * than skip every interval in silence.  Between the two reads of an
 * interval the TSC advanced by at least t = b.tsc_before - a.tsc_after
 * cycles.  Assumed, as for the wrap (clockwd_max_cycles()): the TSC runs
 * at most twice the rate base_hz the reference gave at calibration.  Then
 * those t cycles last at least t / (2 base_hz) seconds, which is
 *	n = floor(t * 10^15 / (2 base_hz period_fs))
 * ticks of the reference or more; and two floors of a continuous count
 * at least n apart differ by at least n.  So with n >= 2 a counting
 * reference reads a delta of at least 2: one of 0 or 1 is a stopped
 * counter.  Backwards: over an interval shorter than half the wrap, the
 * true delta is below half the wrap, so a modular delta of half the wrap
 * or more is a negative one, (mask + 1) - delta ticks back, however short
 * the interval.  A stop with n < 2 is not said: one tick in that time can
 * be a counting reference's.
 *
 * Skew change.  A skew measured as s0 within u0 lies in [s0 - u0, s0 + u0];
 * one measured as s1 within u1 in [s1 - u1, s1 + u1].  If they were one
 * skew, |s1 - s0| <= u0 + u1; more than that, and it changed.
 */
#include <arch/clockwd_rule.h>
#include "lib/format.h"

#define PPB		1000000000ull
#define FS_PER_S	1000000000000000ull

static uint64_t sat_u64(unsigned __int128 v)
{
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static uint64_t div_ceil(unsigned __int128 n, uint64_t d)
{
	return sat_u64((n + d - 1) / d);
}

bool clockwd_window(const struct clockwd_sample *a, const struct clockwd_sample *b,
		    const struct clockwd_ref *ref, struct calib_window *w)
{
	uint64_t ma, mb;

	if (a->tsc_after < a->tsc_before || b->tsc_after < b->tsc_before)
		return false;
	ma = a->tsc_before + (a->tsc_after - a->tsc_before) / 2;
	mb = b->tsc_before + (b->tsc_after - b->tsc_before) / 2;
	if (mb <= ma)
		return false;
	w->tsc_delta = mb - ma;
	/* Each read lies within its bracket: half of each around its midpoint. */
	w->tsc_uncert = ((a->tsc_after - a->tsc_before) + (b->tsc_after - b->tsc_before) + 1) / 2;
	/* Two floors of a continuous count: the difference is within one tick. */
	w->ref_ticks = (b->ref - a->ref) & ref->mask;
	w->ref_uncert_ticks = 1;
	w->ref_period_fs = ref->period_fs;
	return w->ref_ticks > w->ref_uncert_ticks && w->tsc_uncert < w->tsc_delta;
}

bool clockwd_eval(const struct calib_window *w, const struct clockwd_ref *ref,
		  struct clockwd_drift *out)
{
	uint64_t e0 = ref->base_err_ppb, r, b, x;
	__int128 d;

	if (!ref->base_hz || !calib_window_eval(w, &out->hz, &out->window_err_ppb))
		return false;
	r = div_ceil(2 * (unsigned __int128)PPB, ref->base_hz);
	x = sat_u64((unsigned __int128)e0 + r);
	if (x > PPB / 2)
		return false;	/* calibration too poor for any bound */
	b = sat_u64((unsigned __int128)e0 + out->window_err_ppb + r);
	out->bound_ppb = sat_u64((unsigned __int128)b + div_ceil((unsigned __int128)2 * b * x, PPB));
	/* Truncated toward zero: never larger than the true quotient. */
	d = ((__int128)out->hz - (__int128)ref->base_hz) * (__int128)PPB / (__int128)ref->base_hz;
	out->drift_ppb = d > INT64_MAX ? INT64_MAX : d < -INT64_MAX ? -INT64_MAX : (int64_t)d;
	out->interval_ns = sat_u64((unsigned __int128)w->ref_ticks * w->ref_period_fs / 1000000u);
	out->exceeded = (uint64_t)(out->drift_ppb < 0 ? -out->drift_ppb : out->drift_ppb) >
			out->bound_ppb;
	return true;
}

int clockwd_ref_state(const struct clockwd_sample *a, const struct clockwd_sample *b,
		      const struct clockwd_ref *ref, int64_t *ticks, uint64_t *expected)
{
	uint64_t m = (b->ref - a->ref) & ref->mask, half = ref->mask / 2 + 1;
	uint64_t t = b->tsc_before > a->tsc_after ? b->tsc_before - a->tsc_after : 0;
	unsigned __int128 den = (unsigned __int128)2 * ref->base_hz * ref->period_fs;

	*expected = den ? sat_u64((unsigned __int128)t * FS_PER_S / den) : 0;
	/* Signed in the counter's width: mask + 1 - m back (a 64-bit mask: two's complement). */
	*ticks = m >= half ? -(int64_t)(ref->mask - m) - 1 : (int64_t)m;
	if (m >= half)
		return CLOCKWD_REF_BACKWARDS;
	return m <= 1 && *expected >= 2 ? CLOCKWD_REF_STOPPED : CLOCKWD_REF_COUNTS;
}

uint64_t clockwd_max_cycles(const struct clockwd_ref *ref, uint64_t tsc_hz)
{
	unsigned __int128 half_fs;

	if (ref->mask == UINT64_MAX)
		return UINT64_MAX;
	/* Half the wrap: (mask + 1) / 2 ticks. */
	half_fs = ((unsigned __int128)ref->mask + 1) / 2 * ref->period_fs;
	return sat_u64(half_fs * tsc_hz / FS_PER_S);
}

bool clockwd_skew_changed(int64_t old_skew, int64_t old_uncert, int64_t new_skew,
			  int64_t new_uncert, int64_t *change, uint64_t *bound)
{
	__int128 c = (__int128)new_skew - old_skew;
	unsigned __int128 mag = c < 0 ? (unsigned __int128)-c : (unsigned __int128)c;
	unsigned __int128 u = (unsigned __int128)(old_uncert < 0 ? 0 : old_uncert) +
			      (unsigned __int128)(new_uncert < 0 ? 0 : new_uncert);

	*change = c > INT64_MAX ? INT64_MAX : c < INT64_MIN ? INT64_MIN : (int64_t)c;
	*bound = sat_u64(u);
	return mag > u;
}

bool clockwd_changes_agree(int64_t a, uint64_t a_bound, int64_t b, uint64_t b_bound)
{
	__int128 d = (__int128)a - b;
	unsigned __int128 mag = d < 0 ? (unsigned __int128)-d : (unsigned __int128)d;

	return mag <= (unsigned __int128)a_bound + b_bound;
}

int clockwd_blame(const struct clockwd_skew_check *k, unsigned n, bool drift_exceeded)
{
	unsigned answered = 0;

	for (unsigned i = 0; i < n; i++) {
		if (!k[i].answered)
			continue;
		if (!k[i].changed)
			return CLOCKWD_BLAME_APS;	/* an AP agrees with the boot CPU */
		answered++;
		for (unsigned j = 0; j < i; j++)
			if (k[j].answered && !clockwd_changes_agree(k[i].change, k[i].bound,
								     k[j].change, k[j].bound))
				return CLOCKWD_BLAME_APS;	/* they moved apart */
	}
	if (answered >= 2 || (answered == 1 && drift_exceeded))
		return CLOCKWD_BLAME_BOOT;
	return CLOCKWD_BLAME_APS;
}

char *clockwd_fmt_ppm(char *buf, size_t len, int64_t ppb)
{
	uint64_t m = ppb < 0 ? 0 - (uint64_t)ppb : (uint64_t)ppb;

	ksnprintf(buf, len, "%s%llu.%03llu", ppb < 0 ? "-" : "", (unsigned long long)(m / 1000),
		  (unsigned long long)(m % 1000));
	return buf;
}
