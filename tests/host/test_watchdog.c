/*
 * Host tests of the hard-lockup watchdog's rule (arch/x86/watchdog_rule.c,
 * R1..R3 in <arch/watchdog_rule.h>), built from the kernel's own
 * source under ASan and UBSan.
 *
 * The x86 side is modelled in sim_run(): a one-shot deadline restarted
 * when wd_touch() says so or after each sample, a probe that is taken
 * (a sign of life) the first time interrupts are on. Times are TSC cycles
 * at 1 GHz, so cycles are ns.
 *
 * Each test names the mutation it catches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arch/watchdog_rule.h>

#define MS	1000000ull	/* cycles per ms at 1 GHz */
#define P	(1000 * MS)	/* watchdog.ms=2000 */
#define GAP	(P / 8)

/* A hang from the start of work: probe at P, report at 2P for 2P ms. */
static void test_hang_reported_at_two_periods(void **state)
{
	struct wd_cpu w = { 0 };

	(void)state;
	wd_begin(&w, 5 * MS);
	assert_int_equal(wd_sample(&w, 5 * MS + P, P, false), WD_PROBE);
	assert_int_equal(wd_sample(&w, 5 * MS + 2 * P, P, false), WD_STUCK);
	assert_int_equal(wd_cycles_to_ms(5 * MS + 2 * P - w.life, 1000000000ull), 2000);
	assert_int_equal(w.samples, 2);
}

/* Mutation caught: reporting at the first sample with interrupts off. */
static void test_one_interrupts_off_sample_is_no_report(void **state)
{
	struct wd_cpu w = { 0 };
	uint64_t t = 0;

	(void)state;
	wd_begin(&w, t);
	for (int i = 0; i < 50; i++) {
		t += P;
		/* Off at every other sample, with the probe taken in between. */
		enum wd_verdict v = wd_sample(&w, t, P, i % 2);
		assert_int_not_equal(v, WD_STUCK);
		if (v == WD_PROBE)
			wd_touch(&w, t + P / 4, GAP);	/* the probe taken when interrupts came on */
	}
}

/* Mutation caught: R2 ignoring a sign of life after the pending probe (probe < life). */
static void test_touch_between_samples_clears_the_probe(void **state)
{
	struct wd_cpu w = { 0 };

	(void)state;
	wd_begin(&w, 0);
	assert_int_equal(wd_sample(&w, P, P, false), WD_PROBE);
	assert_true(wd_touch(&w, P + P / 2, GAP));
	/* Off again at the next sample: a new probe, not a report. */
	assert_int_equal(wd_sample(&w, 2 * P + P / 2, P, false), WD_PROBE);
	assert_int_equal(wd_sample(&w, 3 * P + P / 2, P, false), WD_STUCK);
}

/* Mutation caught: R1 not updating life (a later hang measured from too far back). */
static void test_interrupts_on_is_alive(void **state)
{
	struct wd_cpu w = { 0 };

	(void)state;
	wd_begin(&w, 0);
	for (uint64_t i = 1; i <= 10; i++)
		assert_int_equal(wd_sample(&w, i * P, P, true), WD_RESTART);
	assert_int_equal(w.life, 10 * P);
	assert_int_equal(wd_sample(&w, 11 * P, P, false), WD_PROBE);
	assert_int_equal(wd_sample(&w, 12 * P, P, false), WD_STUCK);
	assert_int_equal(12 * P - w.life, 2 * P);
}

/* Mutation caught: no rate limit (every touch rewrites the timer), or none at all. */
static void test_touch_rate_limit(void **state)
{
	struct wd_cpu w = { 0 };

	(void)state;
	wd_begin(&w, 0);
	assert_false(wd_touch(&w, GAP - 1, GAP));
	assert_int_equal(w.life, GAP - 1);
	assert_true(wd_touch(&w, GAP, GAP));
	assert_int_equal(w.kick, GAP);
	assert_false(wd_touch(&w, 2 * GAP - 1, GAP));
	assert_true(wd_touch(&w, 2 * GAP, GAP));
}

/* A sample sooner than P / 2 after the probe (a deadline restarted short) waits. */
static void test_probe_needs_half_a_period(void **state)
{
	struct wd_cpu w = { 0 };

	(void)state;
	wd_begin(&w, 0);
	assert_int_equal(wd_sample(&w, P, P, false), WD_PROBE);
	assert_int_equal(wd_sample(&w, P + P / 2 - 1, P, false), WD_RESTART);
	assert_int_equal(wd_sample(&w, P + P / 2, P, false), WD_STUCK);
}

/*
 * The model: work touching every `every` cycles until `hang`, then
 * nothing with interrupts off. Returns when the report came (0: none by
 * `end`), and the reported stuck time in *stuck.
 */
static uint64_t sim_run(uint64_t every, uint64_t hang, uint64_t end, uint64_t *stuck)
{
	struct wd_cpu w = { 0 };
	uint64_t deadline = P, next_touch = every;

	wd_begin(&w, 0);
	for (;;) {
		uint64_t t = deadline;
		if (next_touch > end && deadline > end)
			return 0;
		if (next_touch < hang && next_touch < deadline) {
			t = next_touch;
			next_touch += every;
			if (wd_touch(&w, t, GAP))
				deadline = t + P;
			continue;
		}
		if (t > end)
			return 0;
		enum wd_verdict v = wd_sample(&w, t, P, false);
		if (v == WD_STUCK) {
			*stuck = t - w.life;
			return t;
		}
		deadline = t + P;
	}
}

/*
 * One turn of a patch loop, interrupts off: work ms of work (the deadline
 * may expire in it: a sample), then a wait of wait ms, answered or not
 * (R4, R5). Returns WD_STUCK if a sample said so, else WD_RESTART.
 */
static enum wd_verdict turn(struct wd_cpu *w, uint64_t *t, uint64_t *deadline,
			    uint64_t work, uint64_t wait, bool answered)
{
	/* A CPU marked by R5 does not pause (watchdog_pause()): the wait is work. */
	bool paused = !w->expired;
	uint64_t end = *t + (work + (paused ? 0 : wait)) * MS;

	while (*deadline <= end) {
		*t = *deadline;
		if (wd_sample(w, *t, P, false) == WD_STUCK)
			return WD_STUCK;
		*deadline = *t + P;
	}
	*t = end;
	if (!paused)
		return WD_RESTART;
	*t += wait * MS;		/* paused: no sample */
	if (answered) {
		wd_begin(w, *t);	/* R4, as watchdog_resume() */
		*deadline = *t + P;
	} else {
		*deadline = *t + wd_resume_expired(w, *t, P);
	}
	return WD_RESTART;
}

/*
 * R4: a long patch batch on a slow host (1000 turns of 5 ms of work and a
 * 50 ms answered wait: 55 s, interrupts off) is no report. Mutation
 * caught: an answered wait counted like an expired one (wd_resume_expired()).
 */
static void test_long_batch_of_answered_waits_is_no_report(void **state)
{
	struct wd_cpu w = { 0 };
	uint64_t t = 0, deadline = P;

	(void)state;
	wd_begin(&w, t);
	for (int i = 0; i < 1000; i++)
		assert_int_not_equal(turn(&w, &t, &deadline, 5, 50, true), WD_STUCK);
}

/*
 * R5: waits that expire (10 s each, nobody answered) count whole: with
 * interrupts still off the CPU is probed at once, then reported P later,
 * in the second turn, for the whole time since the last sign of life.
 * A touch clears the mark that keeps it from pausing. Mutation caught:
 * wd_resume_expired() as wd_begin() (the old watchdog_resume(): every
 * wait's end a sign of life): no report in 1000 turns.
 */
static void test_expired_waits_count(void **state)
{
	struct wd_cpu w = { 0 };
	uint64_t t = 0, deadline = P;
	int i;

	(void)state;
	wd_begin(&w, t);
	for (i = 0; i < 1000; i++)
		if (turn(&w, &t, &deadline, 1, 10000, false) == WD_STUCK)
			break;
	assert_int_equal(i, 1);				/* the second turn */
	assert_int_equal(w.expired, 1);
	/* 1 ms, the 10 s wait, the probe 1 cycle later, the report P after it */
	assert_int_equal(t - w.life, 10001 * MS + 1 + P);
	wd_touch(&w, t + 1, GAP);
	assert_int_equal(w.expired, 0);
}

/*
 * Mutation caught: anything that reports a CPU touching more often than
 * watchdog.ms - P/8 (here every 1.8 s with watchdog.ms=2000), or reports a
 * hang later than 3P after its last sign of life or for less than 2P - P/8.
 */
static void test_model_bounds(void **state)
{
	uint64_t stuck = 0;

	(void)state;
	for (uint64_t every = MS; every <= 2 * P - GAP; every = every * 3 + 7 * MS)
		assert_int_equal(sim_run(every, UINT64_MAX, 60 * P, &stuck), 0);
	for (uint64_t every = MS; every <= 2 * P - GAP; every = every * 3 + 7 * MS) {
		for (uint64_t hang = P; hang < 20 * P; hang += P / 3 + 11 * MS) {
			uint64_t at = sim_run(every, hang, 600 * P, &stuck);
			uint64_t last = (hang - 1) / every * every;	/* the last touch */
			assert_true(at > 0);
			assert_true(stuck >= 2 * P - GAP);
			assert_true(stuck <= 3 * P);
			assert_true(at - last == stuck);
		}
	}
}

/* Mutation caught: a count that truncates past 32 bits, or rounds 2000 ms off. */
static void test_half_period_ticks(void **state)
{
	(void)state;
	assert_int_equal(wd_half_period_ticks(2000, 62500000), 62500000);
	assert_int_equal(wd_half_period_ticks(400, 62500000), 12500000);
	assert_int_equal(wd_half_period_ticks(1, 1000), 1);		/* at least 1 */
	assert_int_equal(wd_half_period_ticks(60000, 1000000000000ull), 0xFFFFFFFFu);
	assert_int_equal(wd_cycles_to_ms(UINT64_MAX, 1000000000ull), UINT64_MAX / 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hang_reported_at_two_periods),
		cmocka_unit_test(test_one_interrupts_off_sample_is_no_report),
		cmocka_unit_test(test_touch_between_samples_clears_the_probe),
		cmocka_unit_test(test_interrupts_on_is_alive),
		cmocka_unit_test(test_touch_rate_limit),
		cmocka_unit_test(test_probe_needs_half_a_period),
		cmocka_unit_test(test_long_batch_of_answered_waits_is_no_report),
		cmocka_unit_test(test_expired_waits_count),
		cmocka_unit_test(test_model_bounds),
		cmocka_unit_test(test_half_period_ticks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
