/*
 * Host tests of the clock watchdog's arithmetic (arch/x86/time/clockwd_rule.c): the
 * interval as a window, the drift figure and its bound, the wrap limit,
 * the skew-change decision.
 *
 * The bound is checked against a model made independently of the code:
 * a TSC of true rate f and a reference of exact period, read at the worst
 * places the assumptions allow (each TSC end off by its whole bracket, the
 * reference count off by almost a tick, in opposite directions at
 * calibration and in the interval).  With no drift the figure must stay
 * within the bound; with a drift of twice the bound it must be reported
 * and read within the bound of the drift.  Mutations seen to fail here:
 * the calibration's err left out of the bound (no-drift model exceeds it),
 * the rounding term left out (1 MHz case), drift sign flipped
 * (test_drift_reported), modular delta without the mask (wrap test), the
 * skew bound taken as max(u0, u1) instead of the sum.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <arch/clockwd_rule.h>

#define HPET_FS		10000000ull	/* 100 MHz */
#define PMT_FS		279365115ull	/* 3.579545 MHz */
#define PIT_FS		838095345ull

/* A window as the model reads it: true rate f (Hz, may be fractional
 * through num/den), ticks K read, the truth ticks K - eps (|eps| < 1, in
 * 1/1000 ticks), TSC count off by delta cycles, bracket uncertainty u. */
static struct calib_window model_window(long double f, uint64_t K, int eps_milli, int64_t delta,
					uint64_t u, uint64_t period_fs)
{
	long double t = ((long double)K - eps_milli / 1000.0L) * period_fs / 1e15L;
	long double c = f * t;
	struct calib_window w = {
		.tsc_delta = (uint64_t)(c + 0.5L) + (uint64_t)delta,
		.tsc_uncert = u,
		.ref_ticks = K,
		.ref_uncert_ticks = 1,
		.ref_period_fs = period_fs,
	};
	return w;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void test_exact_interval_reads_zero(void **state)
{
	/* 1 GHz, HPET, 100 ms, no brackets: exactly the base rate. */
	struct clockwd_ref ref = { UINT64_MAX, HPET_FS, 1000000000ull, 361 };
	struct clockwd_sample a = { 5000, 100, 5000 }, b = { 100005000, 10000100, 100005000 };
	struct calib_window w;
	struct clockwd_drift d;

	(void)state;
	assert_true(clockwd_window(&a, &b, &ref, &w));
	assert_int_equal(w.tsc_delta, 100000000);
	assert_int_equal(w.tsc_uncert, 0);
	assert_int_equal(w.ref_ticks, 10000000);
	assert_true(clockwd_eval(&w, &ref, &d));
	assert_int_equal(d.hz, 1000000000ull);
	assert_int_equal(d.drift_ppb, 0);
	assert_false(d.exceeded);
	assert_int_equal(d.interval_ns, 100000000ull);
	/* e1: one tick in 1e7 = 100 ppb; r = 2 ppb; b = 361 + 100 + 2 = 463;
	 * x = 363; 2 b x / 1e9 = 0.000336 -> 1: bound 464. */
	assert_int_equal(d.window_err_ppb, 100);
	assert_int_equal(d.bound_ppb, 464);
}

static void test_brackets_and_wrap(void **state)
{
	/* A 24-bit PM timer that wraps inside the interval. */
	struct clockwd_ref ref = { 0xFFFFFF, PMT_FS, 2000000000ull, 5000 };
	struct clockwd_sample a = { 1000, 0xFFFF00, 1200 }, b = { 3001000, 0x000100, 3001400 };
	struct calib_window w;

	(void)state;
	assert_true(clockwd_window(&a, &b, &ref, &w));
	assert_int_equal(w.ref_ticks, 0x200);
	assert_int_equal(w.tsc_delta, (3001000 + 200) - (1000 + 100));
	assert_int_equal(w.tsc_uncert, (200 + 400 + 1) / 2);
	/* Backwards TSC, a bracket that ends before it starts, no ticks: refused. */
	assert_false(clockwd_window(&b, &a, &ref, &w));
	struct clockwd_sample bad = { 10, 5, 9 };
	assert_false(clockwd_window(&bad, &b, &ref, &w));
	struct clockwd_sample same = { 3001000, 0xFFFF00, 3001400 };
	assert_false(clockwd_window(&a, &same, &ref, &w));
}

static void test_max_cycles(void **state)
{
	struct clockwd_ref pmt = { 0xFFFFFF, PMT_FS, 1, 0 }, hpet32 = { 0xFFFFFFFF, HPET_FS, 1, 0 };
	struct clockwd_ref hpet64 = { UINT64_MAX, HPET_FS, 1, 0 };

	(void)state;
	/* 2^23 ticks of 279365115 fs = 2.343 s: at 1 GHz 2,343,484,... cycles. */
	assert_int_equal(clockwd_max_cycles(&pmt, 1000000000ull),
			 (uint64_t)((unsigned __int128)(1ull << 23) * PMT_FS * 1000000000ull /
				    1000000000000000ull));
	/* 2^31 ticks of 10 ns = 21.47 s at 3 GHz. */
	assert_int_equal(clockwd_max_cycles(&hpet32, 3000000000ull), 64424509440ull);
	assert_int_equal(clockwd_max_cycles(&hpet64, 3000000000ull), UINT64_MAX);
}

/*
 * No drift, worst placements: calibration reads high by its whole bound
 * budget, the interval reads low by its own, or the other way.  The figure
 * must stay within the bound, and come close to it (the bound is not
 * vacuous: at least half of it is reached somewhere).
 */
static void test_no_drift_within_bound(void **state)
{
	static const uint64_t periods[] = { HPET_FS, PMT_FS, PIT_FS };
	uint64_t worst_ratio_milli = 0;

	(void)state;
	for (int i = 0; i < 4000; i++) {
		long double f = 1e6L + (long double)(rnd() % 19999000000ull) + (rnd() % 1000) / 1000.0L;
		uint64_t period = periods[rnd() % 3];
		long double tick_s = period / 1e15L;
		/* Calibration: 50 ms; interval: 10 ms .. 2 s. */
		uint64_t K0 = (uint64_t)(0.05L / tick_s), K1 = (uint64_t)((0.01L + (rnd() % 1990) / 1000.0L) / tick_s);
		uint64_t u0 = rnd() % 2000, u1 = rnd() % 2000;
		int s = (rnd() & 1) ? 1 : -1;
		/* High at calibration (more cycles, fewer true ticks), low in the interval. */
		struct calib_window w0 = model_window(f, K0, s * 999, s * (int64_t)u0, u0 + 1, period);
		struct calib_window w1 = model_window(f, K1, -s * 999, -s * (int64_t)u1, u1 + 1, period);
		struct clockwd_ref ref = { UINT64_MAX, period, 0, 0 };
		struct clockwd_drift d;

		if (w0.tsc_delta <= w0.tsc_uncert || !calib_window_eval(&w0, &ref.base_hz, &ref.base_err_ppb))
			continue;
		if (!clockwd_eval(&w1, &ref, &d))
			continue;
		uint64_t mag = (uint64_t)(d.drift_ppb < 0 ? -d.drift_ppb : d.drift_ppb);
		if (mag > d.bound_ppb)
			fail_msg("f=%.3Lf period=%llu K0=%llu K1=%llu u0=%llu u1=%llu: drift %lld ppb "
				 "> bound %llu", f, (unsigned long long)period, (unsigned long long)K0,
				 (unsigned long long)K1, (unsigned long long)u0,
				 (unsigned long long)u1, (long long)d.drift_ppb,
				 (unsigned long long)d.bound_ppb);
		assert_false(d.exceeded);
		if (d.bound_ppb && mag * 1000 / d.bound_ppb > worst_ratio_milli)
			worst_ratio_milli = mag * 1000 / d.bound_ppb;
	}
	assert_true(worst_ratio_milli >= 500);
}

/* A real drift of twice the bound is reported, its figure within the bound. */
static void test_drift_reported(void **state)
{
	(void)state;
	for (int i = 0; i < 2000; i++) {
		long double f = 5e8L + (long double)(rnd() % 4000000000ull);
		int64_t sign = (rnd() & 1) ? 1 : -1;
		uint64_t u = rnd() % 500;
		struct calib_window w0 = model_window(f, 5000000, 0, 0, u + 1, HPET_FS);
		struct clockwd_ref ref = { UINT64_MAX, HPET_FS, 0, 0 };
		struct clockwd_drift d;

		assert_true(calib_window_eval(&w0, &ref.base_hz, &ref.base_err_ppb));
		/* Find the bound at this rate first (no drift), then drift by twice it. */
		struct calib_window w1 = model_window(f, 10000000, 0, 0, u + 1, HPET_FS);
		assert_true(clockwd_eval(&w1, &ref, &d));
		int64_t p = sign * (int64_t)(2 * d.bound_ppb + 1 + rnd() % 100000);
		long double f1 = f * (1.0L + p / 1e9L);
		w1 = model_window(f1, 10000000, (int)(rnd() % 1999) - 999,
				  (int64_t)(rnd() % (u + 1)) * sign, u + 1, HPET_FS);
		assert_true(clockwd_eval(&w1, &ref, &d));
		assert_true(d.exceeded);
		assert_true((d.drift_ppb < 0) == (p < 0));
		int64_t off = d.drift_ppb - p;
		/* The bound plus the second-order term of a drift of p. */
		uint64_t slack = d.bound_ppb + (uint64_t)((p < 0 ? -p : p) / 1000000) + 1;
		if ((uint64_t)(off < 0 ? -off : off) > slack)
			fail_msg("p=%lld figure=%lld bound=%llu", (long long)p,
				 (long long)d.drift_ppb, (unsigned long long)d.bound_ppb);
	}
}

/* At 1 MHz whole-Hz rounding alone is 0.5 ppm a figure: the bound covers it. */
static void test_rounding_term(void **state)
{
	struct clockwd_ref ref = { UINT64_MAX, HPET_FS, 1000001ull, 0 };
	/* 1,000,000.4 Hz truth read exactly: hz rounds to 1,000,000. */
	struct calib_window w = { 400000, 0, 40000000, 0, HPET_FS };	/* 0.4 s */
	struct clockwd_drift d;

	(void)state;
	w.tsc_delta = 400000;	/* 1e6 Hz */
	assert_true(clockwd_eval(&w, &ref, &d));
	assert_int_equal(d.hz, 1000000ull);
	assert_int_equal(d.drift_ppb, -999);	/* -1 Hz in 1000001 */
	assert_true(d.bound_ppb >= 2000);	/* r = 2e9 / 1000001 rounded up = 2000 */
	assert_false(d.exceeded);
}

static void test_eval_refuses(void **state)
{
	struct clockwd_ref ref = { UINT64_MAX, HPET_FS, 0, 0 };
	struct calib_window w = { 100000000, 0, 10000000, 1, HPET_FS };
	struct clockwd_drift d;

	(void)state;
	assert_false(clockwd_eval(&w, &ref, &d));		/* no base */
	ref.base_hz = 1000000000ull;
	ref.base_err_ppb = 600000000ull;			/* a calibration worth nothing */
	assert_false(clockwd_eval(&w, &ref, &d));
	ref.base_err_ppb = 0;
	w.tsc_uncert = w.tsc_delta;				/* no window */
	assert_false(clockwd_eval(&w, &ref, &d));
}

static void test_skew_changed(void **state)
{
	int64_t c;
	uint64_t b;

	(void)state;
	/* Bring-up 13 +- 31, now 14 +- 32: no change. */
	assert_false(clockwd_skew_changed(13, 31, 14, 32, &c, &b));
	assert_int_equal(c, 1);
	assert_int_equal(b, 63);
	/* Exactly at the bound is still one skew; one more is a change. */
	assert_false(clockwd_skew_changed(0, 100, 300, 200, &c, &b));
	assert_true(clockwd_skew_changed(0, 100, 301, 200, &c, &b));
	assert_true(clockwd_skew_changed(0, 100, -301, 200, &c, &b));
	assert_int_equal(c, -301);
	/* A step of 10^6 cycles with the inject trap's 444-cycle bounds. */
	assert_true(clockwd_skew_changed(223, 444, 1000223, 444, &c, &b));
	assert_int_equal(c, 1000000);
	assert_int_equal(b, 888);
	/* Extremes saturate instead of wrapping. */
	assert_true(clockwd_skew_changed(INT64_MIN, 0, INT64_MAX, 0, &c, &b));
	assert_int_equal(c, INT64_MAX);
	assert_false(clockwd_skew_changed(0, INT64_MAX, 0, INT64_MAX, &c, &b));
	assert_int_equal(b, (uint64_t)INT64_MAX * 2);
}

/*
 * Which clock moved.  Each case is what one fault leaves (the figures are
 * the skews' changes as the kernel measures them): the verdict is the
 * fault's clock.  Mutations caught: blame always the APs (the boot CPU's
 * step cases), the agreement test dropped or made one-sided (the APs
 * moving apart, by +/- amounts), one AP alone taken as the boot CPU
 * without the reference's word, an AP that did not answer counted as
 * agreeing, an unchanged AP ignored.
 */
#define AP(ch, c, b)	{ .answered = true, .changed = (ch), .change = (c), .bound = (b) }
#define SILENT		{ .answered = false }

static void test_blame(void **state)
{
	(void)state;
	/* The boot CPU stepped by +3000: every AP's skew reads about -3000. */
	struct clockwd_skew_check boot3[] = { AP(true, -3034, 1279), AP(true, -2764, 1008) };
	assert_int_equal(clockwd_blame(boot3, 2, false), CLOCKWD_BLAME_BOOT);
	assert_int_equal(clockwd_blame(boot3, 2, true), CLOCKWD_BLAME_BOOT);
	/* One AP only: the reference decides. */
	assert_int_equal(clockwd_blame(boot3, 1, true), CLOCKWD_BLAME_BOOT);
	assert_int_equal(clockwd_blame(boot3, 1, false), CLOCKWD_BLAME_APS);
	/* Two APs stepped apart (+3000 and -3000): each moved. */
	struct clockwd_skew_check apart[] = { AP(true, 3000, 1000), AP(true, -3000, 1000) };
	assert_int_equal(clockwd_blame(apart, 2, false), CLOCKWD_BLAME_APS);
	assert_int_equal(clockwd_blame(apart, 2, true), CLOCKWD_BLAME_APS);
	/* Just apart: |c_i - c_j| one more than b_i + b_j; just together: equal. */
	struct clockwd_skew_check edge_out[] = { AP(true, 5001, 1000), AP(true, 3000, 1000) };
	struct clockwd_skew_check edge_in[] = { AP(true, 5000, 1000), AP(true, 3000, 1000) };
	assert_int_equal(clockwd_blame(edge_out, 2, false), CLOCKWD_BLAME_APS);
	assert_int_equal(clockwd_blame(edge_in, 2, false), CLOCKWD_BLAME_BOOT);
	struct clockwd_skew_check edge_out2[] = { AP(true, 3000, 1000), AP(true, 5001, 1000) };
	assert_int_equal(clockwd_blame(edge_out2, 2, false), CLOCKWD_BLAME_APS);
	/* One AP of two stepped: that AP (the other agrees with the boot CPU). */
	struct clockwd_skew_check one[] = { AP(false, 12, 1000), AP(true, 1000000, 1000) };
	assert_int_equal(clockwd_blame(one, 2, false), CLOCKWD_BLAME_APS);
	assert_int_equal(clockwd_blame(one, 2, true), CLOCKWD_BLAME_APS);
	/* An unchanged AP whose figure is near the others' still clears the boot CPU. */
	struct clockwd_skew_check near[] = { AP(false, -500, 1000), AP(true, -3000, 2600) };
	assert_int_equal(clockwd_blame(near, 2, true), CLOCKWD_BLAME_APS);
	/* An AP that did not answer says nothing either way. */
	struct clockwd_skew_check quiet[] = { SILENT, AP(true, -3000, 500), AP(true, -3100, 500) };
	assert_int_equal(clockwd_blame(quiet, 3, false), CLOCKWD_BLAME_BOOT);
	struct clockwd_skew_check quiet1[] = { SILENT, AP(true, -3000, 500) };
	assert_int_equal(clockwd_blame(quiet1, 2, false), CLOCKWD_BLAME_APS);
	assert_int_equal(clockwd_blame(quiet1, 2, true), CLOCKWD_BLAME_BOOT);
	/* Nobody answered, or no AP: nothing to blame on the boot CPU. */
	struct clockwd_skew_check none[] = { SILENT, SILENT };
	assert_int_equal(clockwd_blame(none, 2, true), CLOCKWD_BLAME_APS);
	assert_int_equal(clockwd_blame(NULL, 0, true), CLOCKWD_BLAME_APS);
	/* Changes near the int64 ends compare exactly (no overflow). */
	struct clockwd_skew_check far[] = { AP(true, INT64_MAX, 0), AP(true, INT64_MIN, 0) };
	assert_int_equal(clockwd_blame(far, 2, false), CLOCKWD_BLAME_APS);
	struct clockwd_skew_check wide[] = { AP(true, INT64_MAX, UINT64_MAX),
					     AP(true, INT64_MIN, UINT64_MAX) };
	assert_int_equal(clockwd_blame(wide, 2, false), CLOCKWD_BLAME_BOOT);
}

static void test_fmt_ppm(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(clockwd_fmt_ppm(buf, sizeof(buf), 0), "0.000");
	assert_string_equal(clockwd_fmt_ppm(buf, sizeof(buf), 140), "0.140");
	assert_string_equal(clockwd_fmt_ppm(buf, sizeof(buf), -140), "-0.140");
	assert_string_equal(clockwd_fmt_ppm(buf, sizeof(buf), 1000000123), "1000000.123");
	assert_string_equal(clockwd_fmt_ppm(buf, sizeof(buf), INT64_MIN), "-9223372036854775.808");
}

/*
 * The reference's state at its boundaries.  t0, the fewest TSC cycles in
 * which two ticks must pass at twice base_hz, is computed here by
 * ceiling, apart from the code's floor.
 */
static void test_ref_state_boundaries(void **state)
{
	struct clockwd_ref pmt = { 0xFFFFFF, PMT_FS, 1000000000ull, 1000 };
	struct clockwd_ref h64 = { UINT64_MAX, HPET_FS, 1000000000ull, 361 };
	struct clockwd_ref h32 = { 0xFFFFFFFFull, HPET_FS, 1000000000ull, 361 };
	/* 2 ticks * 2 * 1e9 Hz * 279365115 fs / 1e15 = 1117.46: 1118 cycles. */
	uint64_t t0 = (2 * 2 * 1000000000ull * PMT_FS + 999999999999999ull) / 1000000000000000ull;
	struct clockwd_sample a = { 1000, 100, 1010 }, b;
	uint64_t n;
	int64_t d;

	(void)state;
	assert_int_equal(t0, 1118);
	b = (struct clockwd_sample){ 1010 + t0, 100, 1020 + t0 };
	assert_int_equal(clockwd_ref_state(&a, &b, &pmt, &d, &n), CLOCKWD_REF_STOPPED);
	assert_int_equal(d, 0);
	assert_int_equal(n, 2);
	b.ref = 101;	/* one tick: still impossible */
	assert_int_equal(clockwd_ref_state(&a, &b, &pmt, &d, &n), CLOCKWD_REF_STOPPED);
	b.ref = 102;	/* two: a counting reference may read that */
	assert_int_equal(clockwd_ref_state(&a, &b, &pmt, &d, &n), CLOCKWD_REF_COUNTS);
	b = (struct clockwd_sample){ 1009 + t0, 100, 1020 + t0 };	/* one cycle less */
	assert_int_equal(clockwd_ref_state(&a, &b, &pmt, &d, &n), CLOCKWD_REF_COUNTS);
	assert_int_equal(n, 1);
	/* Backwards, in the counter's width, however short the interval. */
	b = (struct clockwd_sample){ 1000, 99, 1010 };
	assert_int_equal(clockwd_ref_state(&a, &b, &pmt, &d, &n), CLOCKWD_REF_BACKWARDS);
	assert_int_equal(d, -1);
	b = (struct clockwd_sample){ 1000000000, 100 + 0x800000, 1000000010 };	/* half the wrap */
	assert_int_equal(clockwd_ref_state(&a, &b, &pmt, &d, &n), CLOCKWD_REF_BACKWARDS);
	assert_int_equal(d, -0x800000);
	b.ref = 100 + 0x7FFFFF;
	assert_int_equal(clockwd_ref_state(&a, &b, &pmt, &d, &n), CLOCKWD_REF_COUNTS);
	assert_int_equal(d, 0x7FFFFF);
	/* A forward wrap of each width counts; a step back does not. */
	a = (struct clockwd_sample){ 1000, 0xFFFFFFF0ull, 1010 };
	b = (struct clockwd_sample){ 2000000, 0x10, 2000010 };
	assert_int_equal(clockwd_ref_state(&a, &b, &h32, &d, &n), CLOCKWD_REF_COUNTS);
	assert_int_equal(d, 0x20);
	a.ref = UINT64_MAX - 1;
	b.ref = 3;
	assert_int_equal(clockwd_ref_state(&a, &b, &h64, &d, &n), CLOCKWD_REF_COUNTS);
	assert_int_equal(d, 5);
	a.ref = 10;
	b.ref = 5;
	assert_int_equal(clockwd_ref_state(&a, &b, &h64, &d, &n), CLOCKWD_REF_BACKWARDS);
	assert_int_equal(d, -5);
	a.ref = 0;
	b.ref = 1ull << 63;
	assert_int_equal(clockwd_ref_state(&a, &b, &h64, &d, &n), CLOCKWD_REF_BACKWARDS);
	assert_int_equal(d, INT64_MIN);
}

/*
 * A model counter: floor(phase + elapsed / period), read at the two ends
 * of an interval of t TSC cycles with the TSC at twice base_hz (the most
 * the assumption allows: the fewest ticks).  A counting one is never
 * called stopped or backwards, whatever the phase and length (from none
 * to beyond two ticks); a frozen one is called stopped from the length at
 * which the model itself counts two ticks on.
 */
static void test_ref_state_model(void **state)
{
	struct clockwd_ref ref = { 0xFFFFFF, PMT_FS, 1000000000ull, 1000 };
	long double tick_cycles = 2.0L * 1e9L * PMT_FS / 1e15L;	/* cycles a tick, TSC 2x */

	(void)state;
	for (uint64_t t = 0; t < 4000; t += 1 + rnd() % 7) {
		for (int i = 0; i < 50; i++) {
			long double c0 = (long double)(rnd() % 0xFFFFFF) + (rnd() % 1000000) / 1e6L;
			long double c1 = c0 + t / tick_cycles;
			uint64_t r0 = (uint64_t)c0, r1 = (uint64_t)c1;
			struct clockwd_sample a = { 500, r0 & 0xFFFFFF, 510 };
			struct clockwd_sample b = { 510 + t, r1 & 0xFFFFFF, 520 + t };
			bool two = (uint64_t)(t / tick_cycles) >= 2;
			uint64_t n;
			int64_t d;
			int st = clockwd_ref_state(&a, &b, &ref, &d, &n);

			assert_int_equal(st, CLOCKWD_REF_COUNTS);
			assert_int_equal(d, (int64_t)(r1 - r0));
			b.ref = a.ref;	/* frozen */
			st = clockwd_ref_state(&a, &b, &ref, &d, &n);
			assert_int_equal(st, two ? CLOCKWD_REF_STOPPED : CLOCKWD_REF_COUNTS);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_interval_reads_zero),
		cmocka_unit_test(test_brackets_and_wrap),
		cmocka_unit_test(test_max_cycles),
		cmocka_unit_test(test_no_drift_within_bound),
		cmocka_unit_test(test_drift_reported),
		cmocka_unit_test(test_rounding_term),
		cmocka_unit_test(test_eval_refuses),
		cmocka_unit_test(test_skew_changed),
		cmocka_unit_test(test_blame),
		cmocka_unit_test(test_fmt_ppm),
		cmocka_unit_test(test_ref_state_boundaries),
		cmocka_unit_test(test_ref_state_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
