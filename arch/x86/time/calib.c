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
 * Write d = tsc_delta, u = tsc_uncert, q = ref_uncert_ticks / ref_ticks.
 * The true cycle count lies in [d - u, d + u] and the true duration in
 * T (1 +- q), so the measured f is off the truth by at most
 *	(u + d q) / (d - u)	(relative to the true frequency),
 * reached when the truth is (d - u) / (T (1 + q)).  That is what
 * calib_window_eval() returns, in ppb, rounded up.  (u / d + q, the first
 * order of it, is not a bound: a window disturbed by a long stall, where
 * u / d is large, would lie outside it; tests/host/test_pit.c has one.)
 */
#include <arch/calib.h>

#define FS_PER_S	1000000000000000ull
#define PPB		1000000000ull

static uint64_t div_ceil_u128(unsigned __int128 n, uint64_t d)
{
	return (uint64_t)((n + d - 1) / d);
}

bool calib_window_eval(const struct calib_window *w, uint64_t *hz, uint64_t *err_ppb)
{
	unsigned __int128 den, f;
	uint64_t q;

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
	/* See the head of the file: (u + d q) / (d - u), each term rounded up. */
	q = div_ceil_u128((unsigned __int128)w->ref_uncert_ticks * PPB, w->ref_ticks);
	*err_ppb = div_ceil_u128((unsigned __int128)w->tsc_uncert * PPB,
				 w->tsc_delta - w->tsc_uncert) +
		   div_ceil_u128((unsigned __int128)q * w->tsc_delta, w->tsc_delta - w->tsc_uncert);
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

bool calib_agree(const struct calib_ref *a, const struct calib_ref *b)
{
	uint64_t d = calib_diff_ppb(a->hz, b->hz);
	uint64_t allowed = a->err_ppb + b->err_ppb + a->tol_ppb + b->tol_ppb;

	/* Symmetric: the difference as a part of the lower frequency. */
	if (calib_diff_ppb(b->hz, a->hz) > d)
		d = calib_diff_ppb(b->hz, a->hz);
	return d <= allowed;
}

/* |a - b| as a part of the lower of the two, in ppb. */
static uint64_t diff_sym_ppb(uint64_t a, uint64_t b)
{
	uint64_t d = calib_diff_ppb(a, b), e = calib_diff_ppb(b, a);

	return d > e ? d : e;
}

bool calib_agree_tight(const struct calib_ref *a, const struct calib_ref *b)
{
	return diff_sym_ppb(a->hz, b->hz) <= a->err_ppb + b->err_ppb;
}

/*
 * A read-only figure's truth interval is hz +- tol, but nothing measured
 * it: a CPUID 0x15 crystal figure 150 ppm off still agrees pairwise with
 * right references (150 <= 100 + 100 + err), and with err 0 its bound
 * (100 ppm) is the smallest, so it won.  Each measured reference says the
 * truth lies within its err + tol of its own figure; a figure outside
 * any of those intervals is one the measurements do not confirm.
 */
static bool confirmed_mask(const struct calib_ref *r, unsigned n, unsigned m, unsigned i)
{
	if (!r[i].read_only)
		return true;
	for (unsigned j = 0; j < n; j++)
		if ((m >> j & 1) && j != i && !r[j].read_only &&
		    diff_sym_ppb(r[i].hz, r[j].hz) > r[j].err_ppb + r[j].tol_ppb)
			return false;
	return true;
}

bool calib_confirmed(const struct calib_ref *refs, unsigned n, const bool *in_group, unsigned i)
{
	unsigned m = 0;

	if (n > CALIB_MAX_REFS)
		n = CALIB_MAX_REFS;
	for (unsigned j = 0; j < n; j++)
		m |= (unsigned)in_group[j] << j;
	return i < n && confirmed_mask(refs, n, m, i);
}

static uint64_t sat_add64(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t sat_u128(unsigned __int128 v)
{
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

uint64_t calib_cover_ppb(const struct calib_ref *refs, unsigned n, unsigned win,
			 uint64_t *spread_ppb)
{
	uint64_t hw = refs[win].hz, cover = sat_add64(refs[win].err_ppb, refs[win].tol_ppb);

	*spread_ppb = 0;
	if (n > CALIB_MAX_REFS)
		n = CALIB_MAX_REFS;
	for (unsigned i = 0; i < n; i++) {
		uint64_t b = sat_add64(refs[i].err_ppb, refs[i].tol_ppb), d, off, spread;

		if (!refs[i].usable || !refs[i].hz || !hw)
			continue;
		d = refs[i].hz > hw ? refs[i].hz - hw : hw - refs[i].hz;
		/* d < 2^64 and 10^9 + b < 2^65: the product fits 128 bits. */
		off = sat_u128(((unsigned __int128)d * ((unsigned __int128)PPB + b) +
				refs[i].hz - 1) / refs[i].hz);
		spread = sat_u128(((unsigned __int128)d * PPB + hw - 1) / hw);
		cover = sat_add64(off, b) > cover ? sat_add64(off, b) : cover;
		*spread_ppb = spread > *spread_ppb ? spread : *spread_ppb;
	}
	return cover;
}

static unsigned popcount(unsigned m)
{
	return (unsigned)__builtin_popcount(m);
}

/* A reference's bound on the truth: its measurement and its oscillator. */
static uint64_t total_ppb(const struct calib_ref *r)
{
	return r->err_ppb + r->tol_ppb;
}

/*
 * The member of group m with the smallest total bound (lowest index on
 * ties) among those the group's measurements confirm; if none is (a group
 * of read-only figures alone), among all of m.
 */
static int best_of(const struct calib_ref *r, unsigned n, unsigned m)
{
	int best = -1;

	for (int pass = 0; pass < 2 && best < 0; pass++)
		for (unsigned i = 0; i < n; i++)
			if ((m >> i & 1) && (pass || confirmed_mask(r, n, m, i)) &&
			    (best < 0 || total_ppb(&r[i]) < total_ppb(&r[best])))
				best = (int)i;
	return best;
}

/* Pairs of group m that agree within their measured bounds alone. */
static unsigned tight_in(const struct calib_ref *r, unsigned n, unsigned m)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			k += (m >> i & 1) && (m >> j & 1) && calib_agree_tight(&r[i], &r[j]);
	return k;
}

static unsigned fixed_in(const struct calib_ref *r, unsigned n, unsigned m)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		k += (m >> i & 1) && r[i].fixed_rate;
	return k;
}

/* Is group m better than group g (ranked as in the header's comment)? */
static bool better(const struct calib_ref *r, unsigned n, unsigned m, unsigned g)
{
	if (!g)
		return true;
	if (popcount(m) != popcount(g))
		return popcount(m) > popcount(g);
	if (fixed_in(r, n, m) != fixed_in(r, n, g))
		return fixed_in(r, n, m) > fixed_in(r, n, g);
	/* Issue 30: a PM timer 250 ppm fast and a right PIT each agreed with an
	 * HPET (tolerance 500 ppm), and the smaller bound of the two pairs won,
	 * so noise in err chose.  The HPET agreed with the PIT within err
	 * (0.09 ppm apart): that is what the figures say. */
	if (tight_in(r, n, m) != tight_in(r, n, g))
		return tight_in(r, n, m) > tight_in(r, n, g);
	return total_ppb(&r[best_of(r, n, m)]) < total_ppb(&r[best_of(r, n, g)]);
}

/* Do groups m and g rank alike (neither better)? */
static bool alike(const struct calib_ref *r, unsigned n, unsigned m, unsigned g)
{
	return popcount(m) == popcount(g) && fixed_in(r, n, m) == fixed_in(r, n, g) &&
	       tight_in(r, n, m) == tight_in(r, n, g);
}

int calib_consensus(const struct calib_ref *refs, unsigned n, bool *in_group,
		    enum calib_verdict *verdict)
{
	unsigned usable = 0, group = 0, fixed_outside = 0, fixed_inside;
	bool tied = false;
	int win;

	if (n > CALIB_MAX_REFS)
		n = CALIB_MAX_REFS;
	for (unsigned i = 0; i < n; i++) {
		in_group[i] = false;
		if (refs[i].usable)
			usable |= 1u << i;
	}
	/* Every subset of the usable references (n is tiny): keep the best
	 * one in which every pair agrees. */
	for (unsigned m = usable; m; m = (m - 1) & usable) {
		bool all = true;

		for (unsigned i = 0; i < n && all; i++)
			for (unsigned j = i + 1; j < n && all; j++)
				if ((m >> i & 1) && (m >> j & 1) && !calib_agree(&refs[i], &refs[j]))
					all = false;
		if (!all)
			continue;
		if (better(refs, n, m, group)) {
			/* Better by the bound alone is no better by the figures:
			 * still a tie; better by a rank ends any tie. */
			tied = group && popcount(m) >= 2 && alike(refs, n, m, group);
			group = m;
		} else if (alike(refs, n, m, group) && popcount(m) >= 2) {
			tied = true;	/* as good as the best by every rank */
		}
	}
	if (!group) {
		*verdict = CALIB_NONE;
		return -1;
	}
	for (unsigned i = 0; i < n; i++)
		in_group[i] = group >> i & 1;
	win = best_of(refs, n, group);
	fixed_inside = fixed_in(refs, n, group);
	fixed_outside = fixed_in(refs, n, usable & ~group);
	if (popcount(usable) == 1)
		*verdict = CALIB_SOLE;
	else if (tied)
		*verdict = CALIB_TIED;
	else if (popcount(group) >= 2)
		*verdict = CALIB_AGREED;
	else if (fixed_inside && !fixed_outside)
		*verdict = CALIB_OUTRANKED;
	else
		*verdict = CALIB_UNRESOLVED;
	return win;
}
