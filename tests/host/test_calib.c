/* Host tests of the calibration arithmetic (trace/calib.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "trace/calib.h"

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
	/* 500 cycles of bracket over 1e8 cycles: 5 ppm; 1 tick in 5e6: 0.2 ppm. */
	struct calib_window w = { 100000000, 500, 5000000, 1, 10000000 };
	uint64_t hz, err;

	assert_true(calib_window_eval(&w, &hz, &err));
	assert_int_equal(hz, 2000000000ull);
	assert_int_equal(err, 5000 + 200);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_exact),
		cmocka_unit_test(test_window_bound),
		cmocka_unit_test(test_window_pit_icount),
		cmocka_unit_test(test_window_rejects_nonsense),
		cmocka_unit_test(test_combine_median_and_spread),
		cmocka_unit_test(test_diff_ppb),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
