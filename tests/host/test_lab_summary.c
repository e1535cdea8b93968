/*
 * Host tests of baretrace-decode --lab (tools/lab_summary.c, lab_plot.c):
 * the figures computed from events, checked against values worked out by
 * hand or counted independently, and the lines' exact forms (docs/output.md).
 *
 *   - skew bounds from a CLOCK frame's cycles: the merge's (floor, +1, as
 *     the kernel's hwlat) and c2c's (rounded up, |skew| added for an AP
 *     whose skew was not applied);
 *   - hwlat: two CPUs' gaps merged with the widening the CLOCK frames give
 *     (an all-CPU stall is one coincident machine gap; gaps 81 ns apart
 *     with bounds of 40 ns are two, 80 ns apart are one), SMIs unknown as
 *     soon as one CPU does not know;
 *   - timerlat: p99 and p50 against a count of the samples at or below;
 *   - c2c: meaningful= and clock_bound_ns=, the matrix rows;
 *   - the pictures: the files of the jobs present, and only those.
 *
 * Mutations seen to fail here: the widening left out of lab_add_gap()
 * (test_hwlat_merge_uses_the_clock_bounds), the +1 left out of
 * lab_merge_uncert_ns() (test_bounds, test_hwlat_merge_uses_the_clock_bounds),
 * c2c's bound rounded down (test_bounds), the nearest rank rounded down
 * (test_timerlat_percentiles_vs_count), smi_in_gaps not set unknown by
 * a gap of unknown count (test_hwlat_lines).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../tools/lab_summary.h"

/* d's lines, as lab_print() writes them. */
static char *printed(struct lab_data *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(lab_print(d, f), 0);
	fclose(f);
	return buf;
}

static void test_bounds(void **state)
{
	(void)state;
	assert_int_equal(lab_merge_uncert_ns(39, 1000000000), 40);
	assert_int_equal(lab_merge_uncert_ns(39, 2000000000), 20);	/* 19.5: floor, +1 */
	assert_int_equal(lab_merge_uncert_ns(0, 1000000000), 1);
	assert_int_equal(lab_merge_uncert_ns(5, 0), -1);
	assert_int_equal(lab_c2c_cpu_bound_ns(1, 100, 39, true, 1000000000), 39);
	assert_int_equal(lab_c2c_cpu_bound_ns(1, -100, 39, false, 1000000000), 139);
	assert_int_equal(lab_c2c_cpu_bound_ns(0, 100, 39, false, 1000000000), 39);
	assert_int_equal(lab_c2c_cpu_bound_ns(2, 0, 10, true, 3000000000), 4);	/* 3.33 up */
	assert_int_equal(lab_c2c_cpu_bound_ns(2, 0, 10, true, 0), -1);
}

/* Two CPUs, bounds of 40 ns, both sampled; gaps as given. */
static void two_cpus(struct lab_data *d)
{
	assert_true(lab_data_init(d, 2));
	d->uncert_ns[0] = d->uncert_ns[1] = lab_merge_uncert_ns(39, 1000000000);
	assert_true(lab_add_hwlat_cpu(d, 0, 1000, 24, -1, -1, 1, 1));
	assert_true(lab_add_hwlat_cpu(d, 1, 1000, 24, -1, -1, 2, 2));
}

static void test_hwlat_lines(void **state)
{
	struct lab_data d;
	char *out;

	(void)state;
	two_cpus(&d);
	/* An all-CPU stall seen 50 ns apart, and a one-CPU stall later. */
	assert_true(lab_add_gap(&d, 0, 1000, 100000, -1, -1));
	assert_true(lab_add_gap(&d, 1, 1050, 99980, -1, -1));
	assert_true(lab_add_gap(&d, 1, 500000, 40000, -1, -1));
	assert_false(lab_add_gap(&d, 2, 0, 1, -1, -1));	/* no such CPU */
	out = printed(&d);
	assert_string_equal(out,
		"hwlat: cpu=0 gaps=1 max_ns=100000 threshold_ns=1000 resolution_ns=24 "
		"injected=1 smi=unknown smi_in_gaps=unknown\n"
		"hwlat: cpu=0 hist 16:1\n"
		"hwlat: cpu=1 gaps=2 max_ns=99980 threshold_ns=1000 resolution_ns=24 "
		"injected=2 smi=unknown smi_in_gaps=unknown\n"
		"hwlat: cpu=1 hist 15:1 16:1\n"
		"hwlat: machine gaps=2 coincident=1 max_ns=100030 smi=unknown all_cpus=1 cpus=2\n");
	free(out);
	lab_data_free(&d);

	/* SMI counts known: per CPU end - start, the machine's the most any CPU took. */
	assert_true(lab_data_init(&d, 2));
	assert_true(lab_add_hwlat_cpu(&d, 0, 40, 12, 647, 648, 0, 1));
	assert_true(lab_add_hwlat_cpu(&d, 1, 40, 12, 10, 10, 0, 0));
	assert_true(lab_add_gap(&d, 0, 5000, 88, 647, 648));
	out = printed(&d);
	assert_non_null(strstr(out, "hwlat: cpu=0 gaps=1 max_ns=88 threshold_ns=40 "
				    "resolution_ns=12 injected=0 smi=1 smi_in_gaps=1\n"));
	assert_non_null(strstr(out, "hwlat: cpu=1 gaps=0 max_ns=0 threshold_ns=40 "
				    "resolution_ns=12 injected=0 smi=0 smi_in_gaps=0\n"));
	assert_non_null(strstr(out, "hwlat: machine gaps=1 coincident=0 max_ns=88 smi=1 "
				    "all_cpus=0 cpus=2\n"));
	free(out);
	/* One gap of unknown count makes the sum unknown; a count the capture lacks is said. */
	assert_true(lab_add_gap(&d, 0, 9000, 90, -1, 648));
	assert_true(lab_add_hwlat_cpu(&d, 1, 40, 12, 10, 10, 0, 3));
	out = printed(&d);
	assert_non_null(strstr(out, "smi=1 smi_in_gaps=unknown\n"));
	assert_non_null(strstr(out, "hwlat: cpu=1 counted 3 gaps, the capture holds 0 of them"));
	free(out);
	lab_data_free(&d);
}

/* The machine gaps of one gap on each CPU, the second apart ns after the first ends. */
static uint64_t groups_apart(int64_t apart)
{
	struct lab_data d;
	struct lab_merge m;
	unsigned ncpus;
	int64_t smi;

	two_cpus(&d);
	assert_true(lab_add_gap(&d, 0, 10000, 2000, -1, -1));
	assert_true(lab_add_gap(&d, 1, 12000 + apart, 2000, -1, -1));
	lab_hwlat_machine(&d, &m, &ncpus, &smi);
	assert_int_equal(ncpus, 2);
	assert_int_equal(smi, -1);
	lab_data_free(&d);
	return m.groups;
}

static void test_hwlat_merge_uses_the_clock_bounds(void **state)
{
	(void)state;
	/* Bounds of 40 ns each (39 cycles at 1 GHz, +1): ends within 80 ns may be one instant. */
	assert_int_equal(groups_apart(0), 1);
	assert_int_equal(groups_apart(80), 1);
	assert_int_equal(groups_apart(81), 2);
	assert_int_equal(groups_apart(-500), 1);	/* overlapping outright */
}

static void test_timerlat_percentiles_vs_count(void **state)
{
	uint64_t x = 88172645463325252ull;

	(void)state;
	for (size_t n = 1; n <= 300; n += 7) {
		struct lab_data d;
		struct lab_tl_figures f;
		size_t le99 = 0, lt99 = 0, le50 = 0, lt50 = 0, hist = 0;
		uint64_t max = 0;

		assert_true(lab_data_init(&d, 1));
		for (size_t i = 0; i < n; i++) {
			uint64_t v;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			v = x % 50 + (i % 3 ? 100 : 5000);	/* ties and a tail */
			max = v > max ? v : max;
			assert_true(lab_add_timerlat(&d, 0, v));
		}
		lab_timerlat_figures(&d.tl[0], &f);
		for (size_t i = 0; i < n; i++) {
			le99 += d.tl[0].lat[i] <= f.p99_ns;
			lt99 += d.tl[0].lat[i] < f.p99_ns;
			le50 += d.tl[0].lat[i] <= f.p50_ns;
			lt50 += d.tl[0].lat[i] < f.p50_ns;
		}
		for (unsigned k = 0; k < LAB_HIST_BUCKETS; k++)
			hist += f.hist[k];
		/* Nearest rank: at least pct% at or below it, fewer strictly below. */
		assert_true(le99 * 100 >= n * 99 && lt99 * 100 < n * 99);
		assert_true(le50 * 100 >= n * 50 && lt50 * 100 < n * 50);
		assert_int_equal(f.samples, n);
		assert_int_equal(f.max_ns, max);
		assert_int_equal(hist, n);
		lab_data_free(&d);
	}
}

static void test_c2c_lines(void **state)
{
	struct lab_data d;
	struct lab_c2c a = { 0, 1, 52, 40, 52, 64 }, b = { 1, 0, -30, 40, 52, 64 };
	struct lab_c2c bad = { 0, 3, 1, 1, 1, 1 };
	char *out;

	(void)state;
	assert_true(lab_data_init(&d, 3));
	d.bound_ns[0] = 19;
	d.bound_ns[1] = 21;
	assert_true(lab_add_c2c(&d, &a));
	assert_true(lab_add_c2c(&d, &b));
	assert_false(lab_add_c2c(&d, &bad));
	out = printed(&d);
	assert_string_equal(out,
		"c2c: from=0 to=1 one_way_ns=52 bound_ns=40 rtt_half_ns=52 samples=64 "
		"meaningful=yes clock_bound_ns=40\n"
		"c2c: from=1 to=0 one_way_ns=-30 bound_ns=40 rtt_half_ns=52 samples=64 "
		"meaningful=no clock_bound_ns=40\n"
		"c2c: matrix from=0 one_way_ns=-,52,- bound_ns=-,40,- rtt_half_ns=-,52,-\n"
		"c2c: matrix from=1 one_way_ns=-30,-,- bound_ns=40,-,- rtt_half_ns=52,-,-\n"
		"c2c: matrix from=2 one_way_ns=-,-,- bound_ns=-,-,- rtt_half_ns=-,-,-\n");
	free(out);
	lab_data_free(&d);
}

static void test_plots(void **state)
{
	char dir[] = "/tmp/test_lab_summary.XXXXXX", path[128];
	struct lab_data d;
	struct lab_c2c a = { 0, 1, 52, 40, 52, 64 };
	struct stat st;
	FILE *null = fopen("/dev/null", "w");
	char head[6] = { 0 };
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	two_cpus(&d);
	assert_true(lab_add_gap(&d, 0, 1000, 100000, -1, -1));
	assert_true(lab_add_c2c(&d, &a));
	assert_int_equal(lab_plot(&d, dir, "test", null, null), 0);
	snprintf(path, sizeof(path), "%s/hwlat_gaps.svg", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fread(head, 1, 5, f), 5);
	assert_string_equal(head, "<?xml");
	fclose(f);
	unlink(path);
	snprintf(path, sizeof(path), "%s/c2c.svg", dir);
	assert_int_equal(stat(path, &st), 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/timerlat.svg", dir);	/* no timerlat events: none */
	assert_int_not_equal(stat(path, &st), 0);
	assert_int_not_equal(lab_plot(&d, "/proc/no/such/dir", "test", null, null), 0);
	rmdir(dir);
	fclose(null);
	lab_data_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_hwlat_lines),
		cmocka_unit_test(test_hwlat_merge_uses_the_clock_bounds),
		cmocka_unit_test(test_timerlat_percentiles_vs_count),
		cmocka_unit_test(test_c2c_lines),
		cmocka_unit_test(test_plots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
