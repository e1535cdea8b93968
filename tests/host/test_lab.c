/*
 * Host tests of the lab's arithmetic (trace/lab.c).
 *
 * The merge is checked against a model made independently: union-find
 * over every pair of gaps, joined when their widened intervals overlap
 * (O(n^2), no sorting), on random sets of gaps and on the hand-made cases
 * the method must get right (an all-CPU stall staggered within the skew
 * bounds is one; two gaps just out of each other's reach are two; a chain
 * of three is one). Percentiles are checked against a count of the
 * samples at or below the answer. Mutations seen to fail here: the
 * widening left out of the merge (test_touching, the random model), the
 * comparison made strict the other way (lo >= reach: the same), the
 * group's reach not kept as a maximum (test_chain, the random model), the
 * percentile's rank rounded down (test_percentile_vs_count).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "trace/lab.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int uf[512];
static int uf_find(int x)
{
	while (uf[x] != x)
		x = uf[x] = uf[uf[x]];
	return x;
}

/* The model: groups of pairwise-overlapping widened intervals, closed transitively. */
static void model(const struct lab_gap *g, int n, unsigned ncpus, struct lab_merge *m)
{
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < n; i++)
		uf[i] = i;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (g[i].start - g[i].uncert <= g[j].end + g[j].uncert &&
			    g[j].start - g[j].uncert <= g[i].end + g[i].uncert)
				uf[uf_find(i)] = uf_find(j);
	for (int r = 0; r < n; r++) {
		if (uf_find(r) != r)
			continue;
		int64_t lo = INT64_MAX, hi = INT64_MIN;
		unsigned cpus = 0;
		uint8_t seen[256] = { 0 };
		for (int i = 0; i < n; i++) {
			if (uf_find(i) != r)
				continue;
			cpus += !seen[g[i].cpu]++;
			lo = g[i].start < lo ? g[i].start : lo;
			hi = g[i].end > hi ? g[i].end : hi;
		}
		m->groups++;
		m->coincident += cpus >= 2;
		m->all_cpus += cpus >= ncpus && ncpus >= 2;
		if ((uint64_t)(hi - lo) > m->max_ns)
			m->max_ns = (uint64_t)(hi - lo);
	}
}

static void check(struct lab_gap *g, int n, unsigned ncpus)
{
	struct lab_merge want, got;

	model(g, n, ncpus, &want);
	lab_gaps_merge(g, (size_t)n, ncpus, &got);
	assert_int_equal(got.groups, want.groups);
	assert_int_equal(got.coincident, want.coincident);
	assert_int_equal(got.all_cpus, want.all_cpus);
	assert_int_equal(got.max_ns, want.max_ns);
}

static void test_staggered_within_bounds(void **state)
{
	/* Five CPUs stall 100 us, each entering up to 40 ns late, bounds 30 ns: one machine gap. */
	struct lab_gap g[5];
	struct lab_merge m;

	(void)state;
	for (int c = 0; c < 5; c++)
		g[c] = (struct lab_gap){ 1000 + 10 * c, 101000 + 10 * c, c ? 30 : 0,
					 (uint32_t)c, 0 };
	lab_gaps_merge(g, 5, 5, &m);
	assert_int_equal(m.groups, 1);
	assert_int_equal(m.coincident, 1);
	assert_int_equal(m.all_cpus, 1);
	assert_int_equal(m.max_ns, 100040);
}

static void test_touching(void **state)
{
	/* cpu 1's gap starts 20 ns after cpu 0's ends; bounds 10 + 10: they touch, one gap. */
	struct lab_gap g[2] = { { 0, 100, 10, 0, 0 }, { 120, 200, 10, 1, 0 } };
	struct lab_merge m;

	(void)state;
	lab_gaps_merge(g, 2, 2, &m);
	assert_int_equal(m.groups, 1);
	/* One ns further apart: two gaps, neither coincident. */
	g[0] = (struct lab_gap){ 0, 100, 10, 0, 0 };
	g[1] = (struct lab_gap){ 121, 200, 10, 1, 0 };
	lab_gaps_merge(g, 2, 2, &m);
	assert_int_equal(m.groups, 2);
	assert_int_equal(m.coincident, 0);
	assert_int_equal(m.max_ns, 100);
}

static void test_chain(void **state)
{
	/* A long gap on cpu 0 reaches past a short one on cpu 1 to one on cpu 2. */
	struct lab_gap g[3] = { { 0, 1000, 0, 0, 0 }, { 10, 20, 0, 1, 0 }, { 900, 1100, 0, 2, 0 } };
	struct lab_merge m;

	(void)state;
	lab_gaps_merge(g, 3, 3, &m);
	assert_int_equal(m.groups, 1);
	assert_int_equal(m.all_cpus, 1);
	assert_int_equal(m.max_ns, 1100);
}

static void test_one_cpu_many(void **state)
{
	/* Gaps of one CPU only are never coincident, even overlapping. */
	struct lab_gap g[2] = { { 0, 100, 0, 3, 0 }, { 50, 150, 0, 3, 0 } };
	struct lab_merge m;

	(void)state;
	lab_gaps_merge(g, 2, 4, &m);
	assert_int_equal(m.groups, 1);
	assert_int_equal(m.coincident, 0);
	lab_gaps_merge(g, 0, 4, &m);
	assert_int_equal(m.groups, 0);
}

static void test_random_vs_model(void **state)
{
	static struct lab_gap g[300];

	(void)state;
	for (int round = 0; round < 400; round++) {
		int n = (int)(rnd() % 300);
		unsigned ncpus = 1 + (unsigned)(rnd() % 6);
		for (int i = 0; i < n; i++) {
			int64_t s = (int64_t)(rnd() % 200000) - 1000;
			int64_t len = 1 + (int64_t)(rnd() % 3000), u = (int64_t)(rnd() % 100);

			g[i] = (struct lab_gap){ s, s + len, u, (uint32_t)(rnd() % ncpus), 0 };
		}
		check(g, n, ncpus);
	}
}

/*
 * Signed percentiles (run=c2c's one-way figures may be negative): against
 * a count of the samples at or below the answer, with both signs mixed.
 * Mutation seen to fail: the sign bit not flipped (negatives sort last).
 */
static void test_percentile_s64_vs_count(void **state)
{
	static const unsigned pcts[] = { 1, 10, 50, 90, 99, 100 };
	int64_t v[301], w[301];

	(void)state;
	for (int round = 0; round < 50; round++) {
		size_t n = 1 + rnd() % 301;

		for (size_t i = 0; i < n; i++)
			v[i] = (int64_t)(rnd() % 2001) - 1000;
		for (size_t k = 0; k < sizeof(pcts) / sizeof(pcts[0]); k++) {
			size_t at_or_below = 0, below = 0;
			int64_t p;

			memcpy(w, v, n * sizeof(v[0]));
			p = lab_percentile_s64(w, n, pcts[k]);
			for (size_t i = 0; i < n; i++) {
				at_or_below += v[i] <= p;
				below += v[i] < p;
			}
			assert_true(at_or_below * 100 >= n * pcts[k]);
			assert_true(below * 100 < n * pcts[k]);
			assert_int_equal(w[0] <= w[n - 1], 1);	/* sorted, values kept */
		}
	}
	assert_int_equal(lab_percentile_s64(w, 0, 50), 0);
}

/* meaningful=: the bound must be smaller than the figure's magnitude, either sign. */
static void test_c2c_meaningful(void **state)
{
	(void)state;
	assert_true(lab_c2c_meaningful(52, 40));
	assert_true(lab_c2c_meaningful(-52, 40));
	assert_false(lab_c2c_meaningful(40, 40));
	assert_false(lab_c2c_meaningful(-40, 40));
	assert_false(lab_c2c_meaningful(0, 0));
	assert_true(lab_c2c_meaningful(INT64_MIN, (1ull << 63) - 1));	/* no overflow */
}

static void test_percentile_vs_count(void **state)
{
	uint64_t v[1000], w[1000];

	(void)state;
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + rnd() % 1000;
		unsigned pct = (unsigned)(rnd() % 101);
		for (size_t i = 0; i < n; i++)
			v[i] = w[i] = rnd() % 50;
		uint64_t p = lab_percentile(v, n, pct);
		size_t le = 0, lt = 0;
		for (size_t i = 0; i < n; i++) {
			le += w[i] <= p;
			lt += w[i] < p;
		}
		/* At least pct% at or below p, and fewer than pct% strictly below it. */
		assert_true(le * 100 >= n * pct);
		assert_true(lt * 100 < n * pct || (pct == 0 && lt == 0));
		for (size_t i = 1; i < n; i++)
			assert_true(v[i - 1] <= v[i]);
	}
	assert_int_equal(lab_percentile(v, 0, 50), 0);
	uint64_t one[4] = { 40, 10, 30, 20 };
	assert_int_equal(lab_percentile(one, 4, 50), 20);
	assert_int_equal(lab_percentile(one, 4, 99), 40);
	assert_int_equal(lab_percentile(one, 4, 0), 10);
}

static void test_log2_hist(void **state)
{
	uint64_t h[LAB_HIST_BUCKETS] = { 0 };
	char buf[64];

	(void)state;
	assert_int_equal(lab_log2_bucket(0), 0);
	assert_int_equal(lab_log2_bucket(1), 0);
	assert_int_equal(lab_log2_bucket(2), 1);
	assert_int_equal(lab_log2_bucket(1023), 9);
	assert_int_equal(lab_log2_bucket(1024), 10);
	assert_int_equal(lab_log2_bucket(UINT64_MAX), LAB_HIST_BUCKETS - 1);
	h[10] = 3;
	h[17] = 1;
	assert_string_equal(lab_hist_format(buf, sizeof(buf), h, LAB_HIST_BUCKETS), " 10:3 17:1");
	assert_string_equal(lab_hist_format(buf, 6, h, LAB_HIST_BUCKETS), " 10:3");
}

static void test_stall_parse(void **state)
{
	struct lab_stall s[LAB_STALLS_MAX];
	unsigned n = 99;
	char why[160];

	(void)state;
	assert_true(lab_stall_parse("100@20", s, LAB_STALLS_MAX, &n, why, sizeof(why)));
	assert_int_equal(n, 1);
	assert_int_equal(s[0].us, 100);
	assert_int_equal(s[0].ms, 20);
	assert_int_equal(s[0].cpu, LAB_STALL_ALL);
	assert_true(lab_stall_parse("5@0:3,1000000@600000", s, LAB_STALLS_MAX, &n, why,
				    sizeof(why)));
	assert_int_equal(n, 2);
	assert_int_equal(s[0].cpu, 3);
	assert_int_equal(s[1].us, 1000000);
	static const char *const bad[] = {
		"100", "@20", "100@", "0@5", "1000001@5", "5@600001", "5@5:256", "5@5:", "5@5x",
		"5@5,", "5@5,,6@6", "-5@5", "5@5:1:2", "1@1,1@2,1@3,1@4,1@5,1@6,1@7,1@8,1@9",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = 99;
		why[0] = '\0';
		assert_false(lab_stall_parse(bad[i], s, LAB_STALLS_MAX, &n, why, sizeof(why)));
		assert_int_equal(n, 99);
		assert_true(why[0] != '\0');
	}
}

static void test_cpulist(void **state)
{
	uint64_t m[4] = { 7, 7, 7, 7 };
	char why[160];

	(void)state;
	assert_true(lab_cpulist_parse("0,2-4,255", m, why, sizeof(why)));
	assert_int_equal(m[0], 0x1D);
	assert_int_equal(m[1], 0);
	assert_int_equal(m[3], 1ull << 63);
	assert_true(lab_cpulist_parse("all", m, why, sizeof(why)));
	assert_int_equal(m[2], ~0ull);
	static const char *const bad[] = { "", "256", "3-1", "1,", ",1", "1-", "a", "1 2", "alll" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m[0] = 5;
		assert_false(lab_cpulist_parse(bad[i], m, why, sizeof(why)));
		assert_int_equal(m[0], 5);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_staggered_within_bounds),
		cmocka_unit_test(test_touching),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_one_cpu_many),
		cmocka_unit_test(test_random_vs_model),
		cmocka_unit_test(test_percentile_vs_count),
		cmocka_unit_test(test_percentile_s64_vs_count),
		cmocka_unit_test(test_c2c_meaningful),
		cmocka_unit_test(test_log2_hist),
		cmocka_unit_test(test_stall_parse),
		cmocka_unit_test(test_cpulist),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
