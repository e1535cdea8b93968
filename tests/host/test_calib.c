/* Host tests of the calibration arithmetic (arch/x86/time/calib.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arch/calib.h>

#define PIT_PERIOD_FS 838095345ull

static void test_window_exact(void **state)
{
	(void)state;
	/* 50 ms of a 100 MHz HPET while a 2.5 GHz TSC advanced 125e6 cycles. */
	struct calib_window w = { 125000000, 0, 5000000, 0, 10000000 };
	uint64_t hz, err;

	assert_true(calib_window_eval(&w, &hz, &err));
	assert_int_equal(hz, 2500000000ull);
	assert_int_equal(err, 0);
}

static void test_window_bound(void **state)
{
	(void)state;
	/* 500 cycles of bracket over 1e8 cycles: 5 ppm; 1 tick in 5e6: 0.2 ppm;
	 * each over 1 - 5e-6 and rounded up: 5001 + 201 ppb. */
	struct calib_window w = { 100000000, 500, 5000000, 1, 10000000 };
	uint64_t hz, err;

	assert_true(calib_window_eval(&w, &hz, &err));
	assert_int_equal(hz, 2000000000ull);
	assert_int_equal(err, 5001 + 201);
}

/* A window whose uncertainty is a tenth of it: the bound must still
 * cover the worst truth, (d - u) / (T (1 + q)). */
static void test_window_bound_is_a_bound(void **state)
{
	struct calib_window w = { 1000000, 100000, 1000, 10, 1000000000 };	/* 1 ms of 1 MHz */
	uint64_t hz, err, truth;

	(void)state;
	assert_true(calib_window_eval(&w, &hz, &err));
	assert_int_equal(hz, 1000000000ull);
	truth = (uint64_t)((unsigned __int128)(1000000ull - 100000ull) * 1000000000000000ull /
			   ((1000ull + 10ull) * 1000000000ull));
	assert_true(calib_diff_ppb(hz, truth) <= err);
	truth = (uint64_t)((unsigned __int128)(1000000ull + 100000ull) * 1000000000000000ull /
			   ((1000ull - 10ull) * 1000000000ull));
	assert_true(calib_diff_ppb(hz, truth) <= err);
}

static void test_window_pit_icount(void **state)
{
	(void)state;
	/* 200 MSB steps of the PIT at exactly 1 GHz: 51200 ticks = 42910481.7 ns. */
	struct calib_window w = { 42910482, 4, 51200, 0, PIT_PERIOD_FS };
	uint64_t hz, err;

	assert_true(calib_window_eval(&w, &hz, &err));
	assert_true(hz > 999999000ull && hz < 1000001000ull);
	assert_true(err < 1000);	/* < 1 ppm */
}

static void test_window_rejects_nonsense(void **state)
{
	(void)state;
	uint64_t hz = 7, err = 7;
	struct calib_window zero_ticks = { 1000, 0, 0, 0, 10000000 };
	struct calib_window zero_tsc = { 0, 0, 100, 0, 10000000 };
	struct calib_window too_slow = { 10, 0, 5000000, 0, 10000000 };	/* 200 Hz */
	struct calib_window too_fast = { UINT64_MAX / 2, 0, 1, 0, 10000000 };
	struct calib_window wide = { 1000, 1000, 100, 0, 10000000 };	/* bound >= 100% */

	assert_false(calib_window_eval(&zero_ticks, &hz, &err));
	assert_false(calib_window_eval(&zero_tsc, &hz, &err));
	assert_false(calib_window_eval(&too_slow, &hz, &err));
	assert_false(calib_window_eval(&too_fast, &hz, &err));
	assert_false(calib_window_eval(&wide, &hz, &err));
	assert_int_equal(hz, 7);	/* outputs untouched on failure */
}

static void test_combine_median_and_spread(void **state)
{
	(void)state;
	uint64_t hz[3] = { 1000020000, 1000000000, 999990000 };
	uint64_t err[3] = { 1000, 2000, 3000 };
	struct calib_result r;

	calib_combine(hz, err, 3, &r);
	assert_int_equal(r.hz, 1000000000);	/* the median */
	/* spread 30 ppm: half is 15 ppm, more than the median's own 2 ppm */
	assert_true(r.err_ppb >= 14999 && r.err_ppb <= 15001);
	assert_int_equal(r.rounds, 3);

	uint64_t tight[3] = { 1000000001, 1000000000, 1000000002 };
	calib_combine(tight, err, 3, &r);
	assert_int_equal(r.hz, 1000000001);
	assert_int_equal(r.err_ppb, 1000);	/* own bound dominates */

	calib_combine(hz, err, 0, &r);
	assert_int_equal(r.hz, 0);
	assert_int_equal(r.rounds, 0);
}

static void test_diff_ppb(void **state)
{
	(void)state;
	assert_int_equal(calib_diff_ppb(1000001000, 1000000000), 1000);
	assert_int_equal(calib_diff_ppb(999999000, 1000000000), 1000);
	assert_int_equal(calib_diff_ppb(5, 0), UINT64_MAX);
	assert_int_equal(calib_diff_ppb(UINT64_MAX, 1), UINT64_MAX);
}

/* ---- consensus ---- */

#define PPM	1000ull		/* ppb */

enum { PIT, HPET, PMT, CPUID, N };

static void refs_truth(struct calib_ref *r, uint64_t hz)
{
	/* PIT and PM timer fixed-rate; bounds as measured under icount. */
	r[PIT] = (struct calib_ref){ true, true, hz, 650, 100 * PPM, false };
	r[HPET] = (struct calib_ref){ true, false, hz, 400, 500 * PPM, false };
	r[PMT] = (struct calib_ref){ true, true, hz, 5700, 100 * PPM, false };
	r[CPUID] = (struct calib_ref){ false, false, 0, 0, 0, false };
}

static void test_agree_counts_bounds_and_tolerances(void **state)
{
	struct calib_ref a = { true, true, 1000000000, 1000, 100 * PPM, false };
	struct calib_ref b = { true, true, 1000000000, 2000, 100 * PPM, false };

	(void)state;
	/* 203 ppm allowed: 1 + 2 + 100 + 100. */
	b.hz = 1000203000;
	assert_true(calib_agree(&a, &b) && calib_agree(&b, &a));
	b.hz = 1000204000;
	assert_false(calib_agree(&a, &b) || calib_agree(&b, &a));
	b.hz = 999797100;	/* 203 ppm of the lower one: just inside */
	assert_true(calib_agree(&a, &b));
	b.hz = 999796000;
	assert_false(calib_agree(&a, &b));
}

/* An HPET that reports 5 ns while it ticks every 10 ns wins on its bound
 * alone; the PIT and PM timer, which agree, outvote it. */
static void test_wrong_hpet_outvoted(void **state)
{
	struct calib_ref r[N];
	enum calib_verdict v;
	bool in[N];
	int w;

	(void)state;
	refs_truth(r, 1000000000);
	r[HPET].hz = 2000000080;
	w = calib_consensus(r, N, in, &v);
	assert_int_equal(w, PIT);	/* the better bound of the two that agree */
	assert_int_equal(v, CALIB_AGREED);
	assert_true(in[PIT] && in[PMT] && !in[HPET] && !in[CPUID]);
	/* Slightly wrong is wrong too: 0.9% off, far beyond 600 ppm. */
	r[HPET].hz = 1009000000;
	w = calib_consensus(r, N, in, &v);
	assert_int_equal(w, PIT);
	assert_false(in[HPET]);
	/* Within its tolerance it agrees; the PIT's bound on the truth
	 * (0.65 + 100 ppm) still beats the HPET's (0.4 + 500). */
	r[HPET].hz = 1000300000;
	w = calib_consensus(r, N, in, &v);
	assert_int_equal(w, PIT);
	assert_true(in[PIT] && in[PMT] && in[HPET]);
	/* With an HPET of 50 ppm tolerance, its smaller total wins. */
	r[HPET].tol_ppb = 50 * PPM;
	r[HPET].hz = 1000000100;
	assert_int_equal(calib_consensus(r, N, in, &v), HPET);
}

static void test_two_that_disagree(void **state)
{
	struct calib_ref r[N];
	enum calib_verdict v;
	bool in[N];

	(void)state;
	refs_truth(r, 1000000000);
	r[PIT].usable = false;
	r[HPET].hz = 2000000000;
	/* PM timer (fixed) against HPET (firmware-reported): the fixed rate
	 * wins although its bound is 14 times wider. */
	assert_int_equal(calib_consensus(r, N, in, &v), PMT);
	assert_int_equal(v, CALIB_OUTRANKED);
	assert_true(in[PMT] && !in[HPET]);
	/* Two fixed rates that disagree: the smaller total bound, unresolved. */
	refs_truth(r, 1000000000);
	r[HPET].usable = false;
	r[PMT].hz = 1100000000;
	assert_int_equal(calib_consensus(r, N, in, &v), PIT);
	assert_int_equal(v, CALIB_UNRESOLVED);
	/* CPUID's crystal competes like the HPET: outranked by the PIT. */
	refs_truth(r, 1000000000);
	r[HPET].usable = r[PMT].usable = false;
	r[CPUID] = (struct calib_ref){ true, false, 1500000000, 0, 100 * PPM, true };
	assert_int_equal(calib_consensus(r, N, in, &v), PIT);
	assert_int_equal(v, CALIB_OUTRANKED);
}

static void test_sole_and_none(void **state)
{
	struct calib_ref r[N];
	enum calib_verdict v;
	bool in[N];

	(void)state;
	refs_truth(r, 1000000000);
	r[PIT].usable = r[PMT].usable = false;
	assert_int_equal(calib_consensus(r, N, in, &v), HPET);
	assert_int_equal(v, CALIB_SOLE);
	r[HPET].usable = false;
	assert_int_equal(calib_consensus(r, N, in, &v), -1);
	assert_int_equal(v, CALIB_NONE);
	assert_false(in[PIT] || in[HPET] || in[PMT] || in[CPUID]);
}

/* The largest agreeing group wins even against better-bounded outliers. */
static void test_majority_beats_bound(void **state)
{
	struct calib_ref r[N];
	enum calib_verdict v;
	bool in[N];

	(void)state;
	refs_truth(r, 1000000000);
	r[CPUID] = (struct calib_ref){ true, false, 1000100000, 0, 100 * PPM, true };
	r[PIT].hz = 1002000000;		/* the PIT alone is off */
	r[PIT].err_ppb = 1;
	assert_int_equal(calib_consensus(r, N, in, &v), CPUID);
	assert_int_equal(v, CALIB_AGREED);
	assert_true(in[HPET] && in[PMT] && in[CPUID] && !in[PIT]);
}

/*
 * Issue 30, defect 3: a PM timer 250 ppm fast and a right PIT each agree
 * with an HPET (tolerance 500 ppm), in two groups of one size and rank.
 * The old tie-break, the smaller err + tol, went to the PM timer whenever
 * its err came out smaller than the PIT's (2 runs of 3 under TCG).  The
 * HPET's figure is 0.09 ppm from the PIT's, within their errs: the
 * figures decide.  Mutation caught: tight_in() left out of better().
 */
static void test_tie_broken_by_agreement_within_err(void **state)
{
	struct calib_ref r[N];
	enum calib_verdict v;
	bool in[N];

	(void)state;
	refs_truth(r, 1000000000);
	r[PIT].err_ppb = 8 * PPM;		/* a noisy PIT run under TCG */
	r[HPET].hz = 1000000090;		/* 0.09 ppm from the PIT */
	r[PMT].hz = 1000250000;			/* 250 ppm fast... */
	r[PMT].err_ppb = 3 * PPM;		/* ...with the smaller err + tol */
	assert_int_equal(calib_consensus(r, N, in, &v), PIT);
	assert_int_equal(v, CALIB_AGREED);
	assert_true(in[PIT] && in[HPET] && !in[PMT]);
	/* Swapped errs: the same answer (the old rule flipped with them). */
	r[PIT].err_ppb = 3 * PPM;
	r[PMT].err_ppb = 8 * PPM;
	assert_int_equal(calib_consensus(r, N, in, &v), PIT);
	assert_int_equal(v, CALIB_AGREED);
}

/* Two groups that rank alike by every figure: said, not hidden.  The HPET
 * halfway between a PIT and a PM timer 250 ppm apart agrees with both
 * within tolerance and with neither within err.  Mutation caught: the
 * tie not recorded (verdict CALIB_AGREED). */
static void test_tie_said(void **state)
{
	struct calib_ref r[N];
	enum calib_verdict v;
	bool in[N];

	(void)state;
	refs_truth(r, 1000000000);
	r[HPET].hz = 1000125000;
	r[PMT].hz = 1000250000;
	r[PIT].err_ppb = 3 * PPM;
	r[PMT].err_ppb = 4 * PPM;
	assert_int_equal(calib_consensus(r, N, in, &v), PIT);	/* the smaller bound, as before */
	assert_int_equal(v, CALIB_TIED);
	/* One group of three, no rival: no tie. */
	refs_truth(r, 1000000000);
	assert_int_equal(calib_consensus(r, N, in, &v), PIT);
	assert_int_equal(v, CALIB_AGREED);
}

/*
 * Issue 30, defect 4: a CPUID 0x15 figure 150 ppm off, err 0 (nothing
 * measured it), agrees pairwise with PIT, HPET and PM timer (150 <= 100 +
 * 100 + err) and had the smallest err + tol, so it won.  It lies outside
 * the PIT's and the PM timer's err + tol: not confirmed, not the winner.
 * Within every measured bound it may win (it is then as good as any).
 * Mutations caught: read_only ignored (CPUID wins); a read-only figure
 * checked with its own tolerance added (CPUID wins).
 */
static void test_read_only_figure_checked(void **state)
{
	struct calib_ref r[N];
	enum calib_verdict v;
	bool in[N];

	(void)state;
	refs_truth(r, 1000000000);
	r[PIT].hz = 1000001200;			/* all within 1.2 ppm of the truth */
	r[HPET].hz = 999999500;
	r[PMT].hz = 1000000700;
	r[CPUID] = (struct calib_ref){ true, false, 1000150000, 0, 100 * PPM, true };
	assert_int_equal(calib_consensus(r, N, in, &v), PIT);
	assert_int_equal(v, CALIB_AGREED);
	assert_true(in[PIT] && in[HPET] && in[PMT] && in[CPUID]);
	/* 50 ppm off: inside every measured interval, and its bound wins. */
	r[CPUID].hz = 1000050000;
	assert_int_equal(calib_consensus(r, N, in, &v), CPUID);
	/* With the HPET alone to check it, 150 ppm is inside the HPET's
	 * 500.4: confirmed, and its smaller bound wins. */
	refs_truth(r, 1000000000);
	r[PIT].usable = r[PMT].usable = false;
	r[CPUID] = (struct calib_ref){ true, false, 1000150000, 0, 100 * PPM, true };
	assert_int_equal(calib_consensus(r, N, in, &v), CPUID);
}

/*
 * Issue 30, defect 7: two references wrong alike (a PM timer and a CPUID
 * figure both 1% high) win the vote over a right PIT and HPET, with a
 * bound of 100 ppm.  calib_cover_ppb() gives one that covers the truth
 * whichever reference is right: by hand, the HPET's interval is the
 * widest, ceil(10^7 (10^9 + 500400) / 10^9) + 500400 = 10505404 ppb.
 * Mutations caught: the group's own err + tol (100 ppm); the difference
 * without the (1 + b) factor (10505400); left-out references skipped.
 */
static void test_cover_two_wrong_alike(void **state)
{
	struct calib_ref r[N];
	enum calib_verdict v;
	uint64_t spread, cover;
	bool in[N];

	(void)state;
	refs_truth(r, 1000000000);
	r[PMT].hz = 1010000000;
	r[CPUID] = (struct calib_ref){ true, false, 1010000000, 0, 100 * PPM, true };
	assert_int_equal(calib_consensus(r, N, in, &v), CPUID);	/* the wrong pair wins */
	assert_true(in[PMT] && in[CPUID] && !in[PIT] && !in[HPET]);
	cover = calib_cover_ppb(r, N, CPUID, &spread);
	assert_int_equal(cover, 10505404);
	assert_int_equal(spread, 9900991);	/* 10^7 / 1.01e9, rounded up */
	/* The truth, 10^9, within it: |1.01e9 - 1e9| <= cover * 1e9 / 1e9. */
	assert_true(10000000ull <= cover);
	/* Nothing left out, one reference: its own err + tol. */
	r[PIT].usable = r[HPET].usable = r[PMT].usable = false;
	assert_int_equal(calib_cover_ppb(r, N, CPUID, &spread), 100 * PPM);
	assert_int_equal(spread, 0);
}

/*
 * The cover is a bound: for random figures and bounds, whichever usable
 * reference is right, the truth anywhere in its interval (at both ends,
 * T = hz_i / (1 +- b_i)) lies within cover of the winner's figure, in
 * exact integers.
 */
static void test_cover_is_a_bound(void **state)
{
	uint64_t x = 88172645463325252ull;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		struct calib_ref r[N];
		uint64_t spread, cover;
		unsigned win;

		for (int i = 0; i < N; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			r[i] = (struct calib_ref){ (x & 3) != 0, false,
						   500000000 + (x >> 8) % 4000000000ull,
						   (x >> 40) % 20000, (x >> 20) % 600000, false };
		}
		win = (unsigned)(x >> 60) % N;
		r[win].usable = true;
		cover = calib_cover_ppb(r, N, win, &spread);
		for (int i = 0; i < N; i++) {
			unsigned __int128 b = r[i].err_ppb + r[i].tol_ppb;
			unsigned __int128 hi = r[i].hz, hw = r[win].hz;

			if (!r[i].usable)
				continue;
			for (int end = 0; end < 2; end++) {
				/* T = hi 10^9 / (10^9 +- b); check |hw - T| 10^9 <= cover T. */
				unsigned __int128 den = end ? 1000000000u + b : 1000000000u - b;
				unsigned __int128 a = hw * den, t = hi * 1000000000u;
				unsigned __int128 d = a > t ? a - t : t - a;

				assert_true(d * 1000000000u <= (unsigned __int128)cover * t);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_exact),
		cmocka_unit_test(test_window_bound),
		cmocka_unit_test(test_window_bound_is_a_bound),
		cmocka_unit_test(test_window_pit_icount),
		cmocka_unit_test(test_window_rejects_nonsense),
		cmocka_unit_test(test_combine_median_and_spread),
		cmocka_unit_test(test_diff_ppb),
		cmocka_unit_test(test_agree_counts_bounds_and_tolerances),
		cmocka_unit_test(test_wrong_hpet_outvoted),
		cmocka_unit_test(test_two_that_disagree),
		cmocka_unit_test(test_sole_and_none),
		cmocka_unit_test(test_majority_beats_bound),
		cmocka_unit_test(test_tie_broken_by_agreement_within_err),
		cmocka_unit_test(test_tie_said),
		cmocka_unit_test(test_read_only_figure_checked),
		cmocka_unit_test(test_cover_two_wrong_alike),
		cmocka_unit_test(test_cover_is_a_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
