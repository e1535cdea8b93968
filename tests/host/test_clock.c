/*
 * Host tests of the cycles-to-ns conversion (trace/clock.c), built from
 * the kernel's own source under ASan and UBSan.
 *
 * The reference is exact rational arithmetic in 128 bits:
 *	ref_ns(d) = floor(d * 10^9 / hz)	(d = cycles since the epoch)
 * and the promise under test (the error bound derived in trace/clock.c,
 * 2^-32 of the elapsed time plus the floor, with margin):
 *	|converted - ref_ns| <= |ref_ns| / 10^9 + 1	(1 ppb plus 1 ns)
 * at any distance from the base on either side (128-bit evaluation: up
 * to 2^62 cycles and ns here), and across any chain of rebases.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "trace/clock.h"

typedef unsigned __int128 u128;
typedef __int128 s128;

#define NSEC	((s128)CLOCK_NSEC_PER_SEC)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define check(cond, ...)					\
	do {							\
		if (!(cond))					\
			fail_msg(__VA_ARGS__);			\
	} while (0)

/* xorshift64*: reproducible samples without libc's rand(). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/* In [lo, hi]; hi - lo < 2^64 - 1.  Bias is irrelevant here. */
static uint64_t rng_range(uint64_t lo, uint64_t hi)
{
	return lo + rng() % (hi - lo + 1);
}

/* ---------------------------------------------------------------------- */
/* Frequencies: a geometric sweep of 1 MHz..10 GHz, odd values, random.   */

#define HZ_LO		1000000ULL
#define HZ_HI		10000000000ULL
#define SWEEP_STEPS	400
#define RANDOM_FREQS	400

static const uint64_t odd_freqs[] = {
	1000000, 1000001, 1193182, 3579545, 14318180, 25000000, 33333333,
	100000000, 999999999, 1000000000, 1000000001, 1000000096,
	1193181667, 2099999999, 2100000000, 2147483648ULL, 2893453000ULL,
	4294967295ULL, 4294967296ULL, 4294967297ULL, 8589934593ULL,
	9999999999ULL, 10000000000ULL,
};

static uint64_t freqs[SWEEP_STEPS + 1 + ARRAY_SIZE(odd_freqs) + RANDOM_FREQS];
static size_t nr_freqs;

static void make_freqs(void)
{
	size_t i;

	if (nr_freqs)
		return;
	/* hz_i = 1 MHz * 10^(4 i / SWEEP_STEPS), in integers: ratio^i. */
	for (i = 0; i <= SWEEP_STEPS; i++) {
		long double x = (long double)HZ_LO;
		size_t j;

		for (j = 0; j < i; j++)
			x *= 1.02329299228075413L;	/* 10^(1/100) */
		if (x > (long double)HZ_HI)
			x = (long double)HZ_HI;
		freqs[nr_freqs++] = (uint64_t)x;
	}
	for (i = 0; i < ARRAY_SIZE(odd_freqs); i++)
		freqs[nr_freqs++] = odd_freqs[i];
	for (i = 0; i < RANDOM_FREQS; i++)
		freqs[nr_freqs++] = rng_range(HZ_LO, HZ_HI);
}

/* ---------------------------------------------------------------------- */
/* Exact references.                                                       */

/* round(to * 2^s / from), exactly. */
static u128 ref_mult(uint64_t from, uint64_t to, uint32_t s)
{
	return (((u128)to << s) + from / 2) / from;
}

/* floor(n / d) for d > 0 (C's / truncates toward zero). */
static s128 floor_div(s128 n, s128 d)
{
	s128 q = n / d;

	if ((n % d) != 0 && n < 0)
		q--;
	return q;
}

/* Exact ns for d cycles at hz. */
static s128 ref_ns(s128 d, uint64_t hz)
{
	return floor_div(d * NSEC, (s128)hz);
}

/* The 64-bit promise of the range: delta * mult + (2^s - 1) fits. */
static bool fits_64(uint64_t delta, uint32_t mult, uint32_t shift)
{
	return (u128)delta * mult + (((u128)1 << shift) - 1) <= (u128)UINT64_MAX;
}

static s128 s128_abs(s128 v)
{
	return v < 0 ? -v : v;
}

/* What clock_cycles_to_ns() promises for a result outside int64_t. */
static s128 saturate(s128 v)
{
	if (v > INT64_MAX)
		return INT64_MAX;
	if (v < INT64_MIN)
		return INT64_MIN;
	return v;
}

/* ---------------------------------------------------------------------- */
/* mult/shift choice.                                                      */

/*
 * For every frequency: mult is the correctly rounded to*2^s/from, it fits
 * 32 bits and the stated range in 64 bits, and no larger shift would.
 * range_s = 0 (the trace clock's choice, no range): then mult is in
 * [2^31, 2^32), which is what bounds its error by 2^-32.
 */
static void check_choice(uint64_t from, uint64_t to, uint64_t range_s)
{
	uint32_t mult = 0, shift = 0;
	uint64_t max_cycles = range_s * from;
	u128 next;

	check(clock_calc_mult_shift(&mult, &shift, from, to, range_s) == 0,
	      "calc failed: from=%llu to=%llu", (unsigned long long)from,
	      (unsigned long long)to);
	check(mult >= 1 && shift <= CLOCK_SHIFT_MAX, "bad mult/shift");
	check(ref_mult(from, to, shift) == mult,
	      "from=%llu: mult %u is not round(to*2^%u/from)",
	      (unsigned long long)from, mult, shift);
	check(fits_64(max_cycles, mult, shift),
	      "from=%llu: range end overflows 64 bits", (unsigned long long)from);
	if (shift < CLOCK_SHIFT_MAX) {
		next = ref_mult(from, to, shift + 1);
		check(next > UINT32_MAX ||
		      (u128)max_cycles * next + (((u128)1 << (shift + 1)) - 1) >
			      (u128)UINT64_MAX,
		      "from=%llu: shift %u is not the largest",
		      (unsigned long long)from, shift);
	}
	if (range_s == 0)
		check(mult >= 1U << 31, "from=%llu: mult %u below 2^31 with no range",
		      (unsigned long long)from, mult);
}

static void test_calc_sweep(void **state)
{
	size_t i;

	(void)state;
	make_freqs();
	for (i = 0; i < nr_freqs; i++) {
		struct clock_conv conv;
		uint32_t mult, shift;
		u128 exact;

		check_choice(freqs[i], CLOCK_NSEC_PER_SEC, 0);
		check_choice(freqs[i], CLOCK_NSEC_PER_SEC, 600);	/* Linux's rule */
		/*
		 * What clock_conv_init() chose, against the exact ratio:
		 * |mult * hz - 1e9 * 2^s| < 2^-32 of it (0.00024 ppm).
		 */
		assert_int_equal(clock_conv_init(&conv, freqs[i], 0, 0), 0);
		mult = conv.mult;
		shift = conv.shift;
		exact = (u128)CLOCK_NSEC_PER_SEC << shift;
		check((u128)s128_abs((s128)((u128)mult * freqs[i]) - (s128)exact) << 32 <= exact,
		      "hz=%llu: mult %u shift %u: error above 2^-32",
		      (unsigned long long)freqs[i], mult, shift);
	}
	/* The other direction (ns to cycles) and other ranges obey the rule too. */
	check_choice(CLOCK_NSEC_PER_SEC, 2099999999, 600);
	check_choice(CLOCK_NSEC_PER_SEC, 2099999999, 0);
	check_choice(1, CLOCK_NSEC_PER_SEC, 0);
	check_choice(CLOCK_HZ_MAX, CLOCK_NSEC_PER_SEC, 0);
	check_choice(CLOCK_NSEC_PER_SEC, 1000000096, 1);
	check_choice(32768, CLOCK_NSEC_PER_SEC, 3600);
	check_choice(1, CLOCK_NSEC_PER_SEC, 600);
	check_choice(3000000000ULL, CLOCK_NSEC_PER_SEC, 86400);
	check_choice(CLOCK_NSEC_PER_SEC, 1, 1);
}

/* A few values worth knowing by heart, worked out by hand in docs/clock.md. */
static void test_calc_known_values(void **state)
{
	uint32_t mult, shift;

	(void)state;
	/* 1 GHz: mult = 2^s; limit (2^64 - 2^s) / 6e11 ~ 3.07e7 => s = 24. */
	assert_int_equal(clock_calc_mult_shift(&mult, &shift, 1000000000,
					       CLOCK_NSEC_PER_SEC, 600), 0);
	assert_int_equal(shift, 24);
	assert_int_equal(mult, 1U << 24);
	/* 1 MHz: 32-bit bound binds: 1000 * 2^22 = 4194304000 < 2^32. */
	assert_int_equal(clock_calc_mult_shift(&mult, &shift, 1000000,
					       CLOCK_NSEC_PER_SEC, 600), 0);
	assert_int_equal(shift, 22);
	assert_int_equal(mult, 4194304000U);
	/* 10 GHz: range binds: 0.1 * 2^24 = 1677721.6 -> 1677722. */
	assert_int_equal(clock_calc_mult_shift(&mult, &shift, 10000000000ULL,
					       CLOCK_NSEC_PER_SEC, 600), 0);
	assert_int_equal(shift, 24);
	assert_int_equal(mult, 1677722);
	/*
	 * No range (the trace clock): the largest shift with a 32-bit mult.
	 * 1 GHz: 2^31.  10 GHz: 0.1 * 2^35 = 3435973836.8 -> 3435973837.
	 * 1 MHz: as above, (a) bound there already.
	 */
	assert_int_equal(clock_calc_mult_shift(&mult, &shift, 1000000000,
					       CLOCK_NSEC_PER_SEC, 0), 0);
	assert_int_equal(shift, 31);
	assert_int_equal(mult, 1U << 31);
	assert_int_equal(clock_calc_mult_shift(&mult, &shift, 10000000000ULL,
					       CLOCK_NSEC_PER_SEC, 0), 0);
	assert_int_equal(shift, 35);
	assert_int_equal(mult, 3435973837U);
	assert_int_equal(clock_calc_mult_shift(&mult, &shift, 1000000,
					       CLOCK_NSEC_PER_SEC, 0), 0);
	assert_int_equal(shift, 22);
	assert_int_equal(mult, 4194304000U);
}

static void test_calc_bad_input(void **state)
{
	uint32_t mult = 0xaaaa, shift = 0xbbbb;
	struct clock_conv conv, before;

	(void)state;
	assert_int_equal(clock_calc_mult_shift(&mult, &shift, 0, CLOCK_NSEC_PER_SEC, 600), -1);
	assert_int_equal(clock_calc_mult_shift(&mult, &shift, 1000, 0, 600), -1);
	/* Range in cycles does not fit 64 bits. */
	assert_int_equal(clock_calc_mult_shift(&mult, &shift, 1ULL << 40,
					       CLOCK_NSEC_PER_SEC, 1ULL << 24), -1);
	assert_int_equal(clock_calc_mult_shift(&mult, &shift, 2,
					       CLOCK_NSEC_PER_SEC, UINT64_MAX), -1);
	/* Ratio above 2^32: no shift gives a 32-bit mult. */
	assert_int_equal(clock_calc_mult_shift(&mult, &shift, 1, UINT64_MAX, 1),
			 -1);
	/* Ratio so small that mult rounds to 0 wherever the range allows. */
	assert_int_equal(clock_calc_mult_shift(&mult, &shift, UINT64_MAX, 1, 1),
			 -1);
	assert_int_equal(mult, 0xaaaa);
	assert_int_equal(shift, 0xbbbb);

	memset(&conv, 0x5a, sizeof(conv));
	before = conv;
	assert_int_equal(clock_conv_init(&conv, 0, 123, 0), -1);
	assert_int_equal(clock_conv_init(&conv, CLOCK_HZ_MAX + 1, 123, 0), -1);
	assert_int_equal(clock_conv_init(&conv, UINT64_MAX, 123, 0), -1);
	assert_memory_equal(&conv, &before, sizeof(conv));
	/* The ends of the accepted interval work. */
	assert_int_equal(clock_conv_init(&conv, 1, 0, 0), 0);
	assert_int_equal(clock_conv_init(&conv, CLOCK_HZ_MAX, 0, 0), 0);
}

/* ---------------------------------------------------------------------- */
/* Conversion error against the exact reference.                           */

/*
 * Worst figures seen: the rate part (|err| - 1 ns) / T, the part the
 * 1 ppb promise covers, and the absolute |err| in ns.
 */
static double worst_ppm;
static int64_t worst_ns;
static uint64_t worst_ppm_hz;

static void check_point(const struct clock_conv *conv, uint64_t epoch,
			uint64_t cycles)
{
	s128 d = (s128)cycles - (s128)epoch;
	s128 ref = ref_ns(d, conv->hz);
	s128 got = clock_cycles_to_ns(conv, cycles);
	s128 err = s128_abs(got - ref), t = s128_abs(ref);

	check(err * NSEC <= t + NSEC,
	      "hz=%llu d=%lld: got %lld want %lld (err %lld ns)",
	      (unsigned long long)conv->hz, (long long)d, (long long)got,
	      (long long)ref, (long long)err);
	if (err > worst_ns)
		worst_ns = (int64_t)err;
	if (err > 1 && (double)(err - 1) * 1e6 / (double)t > worst_ppm) {
		worst_ppm = (double)(err - 1) * 1e6 / (double)t;
		worst_ppm_hz = conv->hz;
	}
}

/* Both signs of a distance d from the base. */
static void check_both(const struct clock_conv *conv, uint64_t d)
{
	check_point(conv, conv->cycle_base, conv->cycle_base + d);
	check_point(conv, conv->cycle_base, conv->cycle_base - d);
}

/* Largest distance tried: cycles and ns both within 2^62. */
static uint64_t far_limit(uint64_t hz)
{
	u128 by_ns = ((u128)1 << 62) * hz / CLOCK_NSEC_PER_SEC;

	return by_ns < ((u128)1 << 62) ? (uint64_t)by_ns : 1ULL << 62;
}

static void test_error_whole_range(void **state)
{
	size_t i;
	unsigned int j;

	(void)state;
	make_freqs();
	for (i = 0; i < nr_freqs; i++) {
		struct clock_conv conv;
		uint64_t hz = freqs[i], max, far = far_limit(hz);

		/* Base well inside the counter so both signs are in reach. */
		assert_int_equal(clock_conv_init(&conv, hz, rng_range(1ULL << 62,
				 1ULL << 63), 0), 0);
		/* max_cycles: the 64-bit-exact distance, exactly. */
		max = conv.max_cycles;
		check(fits_64(max, conv.mult, conv.shift) &&
		      !fits_64(max + 1, conv.mult, conv.shift), "max_cycles");
		for (j = 0; j < 64; j++)
			check_both(&conv, j);
		for (j = 0; j < 63 && (1ULL << j) <= far; j++) {
			check_both(&conv, 1ULL << j);
			check_both(&conv, (1ULL << j) - 1);
		}
		/* 1 s .. 2^31 s (68 years) of cycles, where they fit. */
		for (j = 0; j <= 31 && ((u128)hz << j) <= far; j++)
			check_both(&conv, hz << j);
		check_both(&conv, hz - 1);
		check_both(&conv, max - 1);
		check_both(&conv, max);
		check_both(&conv, max + 1);
		check_both(&conv, far);
		for (j = 0; j < 100; j++)
			check_both(&conv, rng_range(0, max));
		for (j = 0; j < 100; j++)
			check_both(&conv, rng_range(0, far));
	}
	print_message("  worst error over %zu frequencies, up to 2^62 cycles or ns: %.6f ppm"
		      " + 1 ns (at %llu Hz), %lld ns absolute\n", nr_freqs, worst_ppm,
		      (unsigned long long)worst_ppm_hz, (long long)worst_ns);
	assert_true(worst_ppm < 0.001);
}

/*
 * Thirty days in REBASE_STEP_SEC steps: rebasing is exact, so the error
 * against the epoch stays within 1 ppb + 1 ns however many rebases (the
 * AP anchoring rebases once; nothing needs more, but any chain is safe).
 */
#define REBASE_STEP_SEC	300
static void test_error_long_span_rebased(void **state)
{
	static const uint64_t hzs[] = {
		1000000, 1000000096, 2099999999, 3579545, 10000000000ULL,
	};
	size_t i;

	(void)state;
	worst_ppm = 0;
	worst_ns = 0;
	for (i = 0; i < ARRAY_SIZE(hzs); i++) {
		struct clock_conv orig, conv;
		uint64_t epoch = rng_range(0, 1ULL << 40), x, step;
		unsigned int k, steps = 30 * 86400 / REBASE_STEP_SEC;

		assert_int_equal(clock_conv_init(&orig, hzs[i], epoch, 0), 0);
		conv = orig;
		step = REBASE_STEP_SEC * hzs[i];
		x = epoch;
		for (k = 0; k < steps; k++) {
			uint64_t probe;

			x += step + rng_range(1, hzs[i]);
			assert_int_equal(clock_conv_rebase(&conv, x), 0);
			check(clock_conv_check(&conv) == 0, "rebased conv invalid");
			probe = x + rng_range(0, step);
			check_point(&conv, epoch, x);
			check_point(&conv, epoch, probe);
			check(clock_cycles_to_ns(&conv, probe) ==
			      clock_cycles_to_ns(&orig, probe),
			      "rebase changed the conversion");
		}
	}
	print_message("  30 days in %llu s steps: worst %.6f ppm + 1 ns (at %llu"
		      " Hz), %lld ns absolute\n",
		      (unsigned long long)REBASE_STEP_SEC, worst_ppm,
		      (unsigned long long)worst_ppm_hz, (long long)worst_ns);
	assert_true(worst_ppm < 0.001);
}

/* ---------------------------------------------------------------------- */
/* Rebasing: exact, hence monotonic across the switch of copies.           */

static void test_rebase_monotonic(void **state)
{
	size_t i;

	(void)state;
	make_freqs();
	for (i = 0; i < nr_freqs; i += 7) {
		struct clock_conv a, b;
		uint64_t c, x;
		int64_t prev;

		assert_int_equal(clock_conv_init(&a, freqs[i], 1ULL << 50, 0), 0);
		c = a.cycle_base + rng_range(1, a.max_cycles);
		b = a;
		assert_int_equal(clock_conv_rebase(&b, c), 0);
		assert_int_equal(clock_conv_check(&b), 0);
		/*
		 * Around the rebase point: old and new copies agree exactly,
		 * so any interleaving of them is non-decreasing, e.g. a reader
		 * that converted x with the old copy and x + 1 with the new.
		 */
		prev = clock_cycles_to_ns(&a, c - 2001);
		for (x = c - 2000; x != c + 2000; x++) {
			int64_t old_ns = clock_cycles_to_ns(&a, x);
			int64_t new_ns = clock_cycles_to_ns(&b, x);

			check(old_ns == new_ns, "hz=%llu x=c%+lld: old %lld new %lld",
			      (unsigned long long)freqs[i],
			      (long long)(x - c), (long long)old_ns,
			      (long long)new_ns);
			check(prev <= old_ns, "not monotonic");
			prev = new_ns;
		}
	}
}

/* A random walk of rebases (both directions) never changes any result. */
static void test_rebase_chain(void **state)
{
	struct clock_conv orig, conv;
	unsigned int k, j;

	(void)state;
	assert_int_equal(clock_conv_init(&orig, 2099999999, 1ULL << 45, 0), 0);
	orig.offset_ns = -12345;
	conv = orig;
	for (k = 0; k < 2000; k++) {
		uint64_t to = conv.cycle_base - conv.max_cycles +
			      rng_range(0, 2 * conv.max_cycles);

		assert_int_equal(clock_conv_rebase(&conv, to), 0);
		assert_int_equal(clock_conv_check(&conv), 0);
		for (j = 0; j < 4; j++) {
			uint64_t x = rng_range(orig.cycle_base - (1ULL << 44),
					       orig.cycle_base + (1ULL << 44));

			check(clock_cycles_to_ns(&conv, x) ==
			      clock_cycles_to_ns(&orig, x), "chain drifted");
		}
	}
}

/* ---------------------------------------------------------------------- */
/* Epoch, offset and the range's edges.                                    */

static void test_epoch_and_offset(void **state)
{
	struct clock_conv conv;
	uint64_t b = 987654321;

	(void)state;
	/* Under QEMU -icount shift=0 the TSC is exactly 1 GHz: exact results. */
	assert_int_equal(clock_conv_init(&conv, 1000000000, b, 0), 0);
	assert_int_equal(clock_cycles_to_ns(&conv, b), 0);
	assert_int_equal(clock_cycles_to_ns(&conv, b + 1), 1);
	assert_int_equal(clock_cycles_to_ns(&conv, b + 1000000000), 1000000000);
	assert_true(clock_cycles_to_ns(&conv, b - 1) == -1);
	assert_true(clock_cycles_to_ns(&conv, 0) == -(int64_t)b);
	conv.offset_ns = -5;
	assert_true(clock_cycles_to_ns(&conv, b) == -5);
	conv.offset_ns = 1000;
	assert_true(clock_cycles_to_ns(&conv, b + 7) == 1007);
	/* Rebase leaves the offset alone. */
	assert_int_equal(clock_conv_rebase(&conv, b + 500), 0);
	assert_true(conv.offset_ns == 1000);
	assert_true(conv.ns_base == 500);
	assert_true(clock_cycles_to_ns(&conv, b + 7) == 1007);
}

/*
 * At the range's end the 64-bit promise holds with the worst ns_frac, and
 * a plain 64-bit evaluation (what a tool without 128-bit integers would
 * do) agrees with the library.  Far outside the range nothing overflows:
 * results are exact or saturate (UBSan would catch signed overflow).
 */
static void test_range_end_no_overflow(void **state)
{
	size_t i;

	(void)state;
	make_freqs();
	for (i = 0; i < nr_freqs; i++) {
		struct clock_conv conv;
		uint64_t b = 1ULL << 62, sum;
		int64_t got;

		assert_int_equal(clock_conv_init(&conv, freqs[i], b, 0), 0);
		conv.ns_frac = (1ULL << conv.shift) - 1;
		check(fits_64(conv.max_cycles, conv.mult, conv.shift), "fits");
		sum = conv.max_cycles * conv.mult + conv.ns_frac;
		got = clock_cycles_to_ns(&conv, b + conv.max_cycles);
		check(got == (int64_t)(sum >> conv.shift),
		      "64-bit path disagrees at the range end");
		check_point(&conv, b, b + conv.max_cycles);

		/* Whole counter on either side: exact in 128 bits. */
		got = clock_cycles_to_ns(&conv, UINT64_MAX);
		check((s128)got == saturate(((s128)(UINT64_MAX - b) * conv.mult +
					     conv.ns_frac) >> conv.shift),
		      "far end");
		got = clock_cycles_to_ns(&conv, 0);
		check((s128)got == saturate(floor_div((s128)conv.ns_frac -
						      (s128)b * conv.mult,
						      (s128)1 << conv.shift)),
		      "far start");
	}
}

static void test_saturation(void **state)
{
	struct clock_conv conv, before;

	(void)state;
	assert_int_equal(clock_conv_init(&conv, 1000000, 0, INT64_MAX - 10), 0);
	assert_true(clock_cycles_to_ns(&conv, UINT64_MAX) == INT64_MAX);
	conv.offset_ns = INT64_MAX;
	assert_true(clock_cycles_to_ns(&conv, 1000) == INT64_MAX);
	conv.offset_ns = 0;
	before = conv;
	assert_int_equal(clock_conv_rebase(&conv, UINT64_MAX), -1);
	assert_memory_equal(&conv, &before, sizeof(conv));

	assert_int_equal(clock_conv_init(&conv, 10000000000ULL, UINT64_MAX,
					 INT64_MIN + 10), 0);
	assert_true(clock_cycles_to_ns(&conv, 0) == INT64_MIN);
	conv.offset_ns = INT64_MIN;
	assert_true(clock_cycles_to_ns(&conv, UINT64_MAX) == INT64_MIN);
	conv.offset_ns = 0;
	before = conv;
	assert_int_equal(clock_conv_rebase(&conv, 0), -1);
	assert_memory_equal(&conv, &before, sizeof(conv));
	/* Monotonic right up to the saturation point. */
	assert_true(clock_cycles_to_ns(&conv, 1) >= clock_cycles_to_ns(&conv, 0));
}

static void test_conv_check(void **state)
{
	struct clock_conv conv, zero, before;
	unsigned int k;

	(void)state;
	memset(&zero, 0, sizeof(zero));
	assert_int_equal(clock_conv_check(&zero), -1);
	for (k = 0; k < 10; k++)
		assert_true(clock_cycles_to_ns(&zero, rng()) == 0);
	assert_int_equal(clock_conv_init(&conv, 2099999999, 77, 0), 0);
	assert_int_equal(clock_conv_check(&conv), 0);
	conv.ns_frac = 1ULL << conv.shift;
	assert_int_equal(clock_conv_check(&conv), -1);
	conv.ns_frac = 0;
	conv.shift = 64;
	assert_int_equal(clock_conv_check(&conv), -1);
	/* Corrupt shifts stay defined (UBSan watches) and change nothing. */
	conv.shift = 200;
	assert_true(clock_cycles_to_ns(&conv, conv.cycle_base + 1000) == 0);
	before = conv;
	assert_int_equal(clock_conv_rebase(&conv, 1000), -1);
	assert_memory_equal(&conv, &before, sizeof(conv));
	conv.shift = 24;
	conv.mult = 0;
	assert_int_equal(clock_conv_check(&conv), -1);
}

/* ---------------------------------------------------------------------- */
/* The latch.                                                              */

static void test_latch_basic(void **state)
{
	static struct clock_latch latch;	/* zero-initialised: valid */
	struct clock_conv conv, got;
	int64_t ns = 1;

	(void)state;
	assert_int_equal(clock_latch_read(&latch, &got), 0);
	assert_int_equal(got.mult, 0);
	assert_int_equal(clock_latch_cycles_to_ns(&latch, 12345, &ns), 0);
	assert_true(ns == 0);

	assert_int_equal(clock_conv_init(&conv, 1000000096, 5000, 0), 0);
	clock_latch_write(&latch, &conv);
	assert_int_equal(latch.seq, 2);				/* at rest: even */
	assert_memory_equal(&latch.copy[0], &conv, sizeof(conv));	/* C2 */
	assert_memory_equal(&latch.copy[1], &conv, sizeof(conv));
	assert_int_equal(clock_latch_read(&latch, &got), 0);
	assert_memory_equal(&got, &conv, sizeof(conv));

	assert_int_equal(clock_latch_rebase(&latch, 5000 + 123456789), 0);
	assert_int_equal(latch.seq, 4);
	assert_int_equal(clock_latch_cycles_to_ns(&latch, 999999999, &ns), 0);
	assert_true(ns == clock_cycles_to_ns(&conv, 999999999));
	assert_memory_equal(&latch.copy[0], &latch.copy[1], sizeof(conv));
}

/*
 * Version k of a conversion: every field a different function of k, so a
 * copy mixing two versions is caught.
 */
static void pattern(struct clock_conv *c, uint64_t k)
{
	c->cycle_base = k * 0x9e3779b97f4a7c15ULL;
	c->ns_base = (int64_t)(k * 3);
	c->ns_frac = ~k;
	c->offset_ns = -(int64_t)k;
	c->hz = k ^ 0xdeadbeefULL;
	c->max_cycles = k * 5 + 1;
	c->mult = (uint32_t)(k * 7);
	c->shift = (uint32_t)(k >> 3);
}

/*
 * Version of *c (0 for the zero-initialised latch's copies), or
 * UINT64_MAX if it is a mixture.
 */
static uint64_t pattern_version(const struct clock_conv *c)
{
	static const struct clock_conv zero;
	struct clock_conv want;
	uint64_t k = 0 - (uint64_t)c->offset_ns;

	if (k == 0)
		return memcmp(&zero, c, sizeof(zero)) ? UINT64_MAX : 0;
	pattern(&want, k);
	return memcmp(&want, c, sizeof(want)) ? UINT64_MAX : k;
}

/*
 * One writer thread rewrites the latch as fast as it can while this
 * thread reads it; on two or more CPUs the two really overlap.  Bounded:
 * HAMMER_READS reads, then the writer is told to stop.
 */
#define HAMMER_READS		400000
#define HAMMER_MAX_WRITES	100000000ULL

static struct clock_latch hammer_latch;
static int hammer_stop;
static uint64_t hammer_writes;

static void *hammer_writer(void *arg)
{
	struct clock_conv c;
	uint64_t k;

	(void)arg;
	for (k = 1; k <= HAMMER_MAX_WRITES; k++) {
		if (__atomic_load_n(&hammer_stop, __ATOMIC_ACQUIRE))
			break;
		pattern(&c, k);
		clock_latch_write(&hammer_latch, &c);
	}
	__atomic_store_n(&hammer_writes, k - 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_latch_hammer(void **state)
{
	pthread_t w;
	struct clock_conv c;
	uint64_t ok = 0, out_of_tries = 0, torn = 0, backwards = 0;
	uint64_t distinct = 0, last = 0, v, writes;
	unsigned long i;

	(void)state;
	memset(&hammer_latch, 0, sizeof(hammer_latch));
	hammer_stop = 0;
	assert_int_equal(pthread_create(&w, NULL, hammer_writer, NULL), 0);
	/* Start reading once the writer runs (bounded wait). */
	for (i = 0; i < 100000000UL; i++)
		if (__atomic_load_n(&hammer_latch.seq, __ATOMIC_RELAXED))
			break;
	for (i = 0; i < HAMMER_READS; i++) {
		if (clock_latch_read(&hammer_latch, &c)) {
			out_of_tries++;
		} else if ((v = pattern_version(&c)) == UINT64_MAX) {
			torn++;
		} else {
			if (v < last)
				backwards++;
			if (v != last)
				distinct++;
			last = v;
			ok++;
		}
	}
	__atomic_store_n(&hammer_stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(w, NULL), 0);
	writes = __atomic_load_n(&hammer_writes, __ATOMIC_ACQUIRE);
	/* After the writer is gone a read returns its last version. */
	assert_int_equal(clock_latch_read(&hammer_latch, &c), 0);
	assert_int_equal(pattern_version(&c), writes);
	print_message("  %llu writes; %llu consistent reads seeing %llu versions,"
		      " %llu out of tries\n", (unsigned long long)writes,
		      (unsigned long long)ok, (unsigned long long)distinct,
		      (unsigned long long)out_of_tries);
	assert_int_equal(torn, 0);
	assert_int_equal(backwards, 0);
	assert_true(ok > 0);
}

/*
 * NMI stand-in: a signal interrupts the writer thread wherever it is, and
 * the handler reads the latch on the writer's own stack.  The writer
 * cannot move while the handler runs, so every such read must succeed
 * (at its first try: a retry could not help) and be consistent.
 */
#define NMI_SIGNALS	3000

static struct clock_latch nmi_latch;
static pthread_t nmi_writer_thread;
static int nmi_stop;
static int nmi_handled, nmi_failed, nmi_torn, nmi_mid_update;

static void nmi_handler(int sig)
{
	struct clock_conv c;

	(void)sig;
	if (__atomic_load_n(&nmi_latch.seq, __ATOMIC_RELAXED) & 1)
		__atomic_fetch_add(&nmi_mid_update, 1, __ATOMIC_RELAXED);
	if (clock_latch_read(&nmi_latch, &c))
		__atomic_fetch_add(&nmi_failed, 1, __ATOMIC_RELAXED);
	else if (pattern_version(&c) == UINT64_MAX)
		__atomic_fetch_add(&nmi_torn, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&nmi_handled, 1, __ATOMIC_RELEASE);
}

static void *nmi_writer(void *arg)
{
	struct clock_conv c;
	uint64_t k;

	(void)arg;
	for (k = 1; !__atomic_load_n(&nmi_stop, __ATOMIC_ACQUIRE); k++) {
		pattern(&c, k);
		clock_latch_write(&nmi_latch, &c);
	}
	return NULL;
}

static void test_latch_nmi_reader(void **state)
{
	struct sigaction sa, old;
	int sent, spins;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = nmi_handler;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	memset(&nmi_latch, 0, sizeof(nmi_latch));
	nmi_stop = nmi_handled = nmi_failed = nmi_torn = nmi_mid_update = 0;
	assert_int_equal(pthread_create(&nmi_writer_thread, NULL, nmi_writer,
					NULL), 0);
	for (sent = 0; sent < NMI_SIGNALS; sent++) {
		assert_int_equal(pthread_kill(nmi_writer_thread, SIGUSR1), 0);
		/* One at a time: pending signals of one kind would merge. */
		for (spins = 0; spins < 10000000; spins++) {
			if (__atomic_load_n(&nmi_handled, __ATOMIC_ACQUIRE) > sent)
				break;
			sched_yield();
		}
	}
	__atomic_store_n(&nmi_stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(nmi_writer_thread, NULL), 0);
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
	print_message("  %d interrupts of the writer, %d of them between /A/"
		      " and /C/\n", nmi_handled, nmi_mid_update);
	assert_int_equal(nmi_handled, NMI_SIGNALS);
	assert_int_equal(nmi_failed, 0);
	assert_int_equal(nmi_torn, 0);
	assert_true(nmi_mid_update > 0);
}

/*
 * Rebase while readers convert: every result equals the unrebased
 * conversion (C5), so a reader's results for increasing readings never
 * go down, whichever copy each read used.
 */
#define REBASE_WRITES	20000

static struct clock_latch rb_latch;
static struct clock_conv rb_orig;
static int rb_done;

static void *rb_writer(void *arg)
{
	uint64_t step = rb_orig.max_cycles / 2, x = rb_orig.cycle_base;
	unsigned int k;

	(void)arg;
	for (k = 0; k < REBASE_WRITES; k++) {
		x += step;
		if (clock_latch_rebase(&rb_latch, x))
			break;
	}
	__atomic_store_n(&rb_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_latch_rebase_concurrent(void **state)
{
	pthread_t w;
	uint64_t x, step, reads = 0, bad = 0, backwards = 0;
	int64_t prev = INT64_MIN, ns;
	unsigned long spins;

	(void)state;
	assert_int_equal(clock_conv_init(&rb_orig, 2099999999, 1ULL << 40, 0),
			 0);
	memset(&rb_latch, 0, sizeof(rb_latch));
	clock_latch_write(&rb_latch, &rb_orig);
	rb_done = 0;
	assert_int_equal(pthread_create(&w, NULL, rb_writer, NULL), 0);
	/* The reader walks the same span as the writer, finer. */
	step = rb_orig.max_cycles / 2 * REBASE_WRITES / 4000000;
	x = rb_orig.cycle_base;
	for (spins = 0; spins < 4000000; spins++) {
		if (__atomic_load_n(&rb_done, __ATOMIC_ACQUIRE) && reads > 1000)
			break;
		x += step;
		if (clock_latch_cycles_to_ns(&rb_latch, x, &ns))
			continue;
		reads++;
		if (ns != clock_cycles_to_ns(&rb_orig, x))
			bad++;
		if (ns < prev)
			backwards++;
		prev = ns;
	}
	assert_int_equal(pthread_join(w, NULL), 0);
	assert_true(reads > 0);
	assert_int_equal(bad, 0);
	assert_int_equal(backwards, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calc_sweep),
		cmocka_unit_test(test_calc_known_values),
		cmocka_unit_test(test_calc_bad_input),
		cmocka_unit_test(test_error_whole_range),
		cmocka_unit_test(test_error_long_span_rebased),
		cmocka_unit_test(test_rebase_monotonic),
		cmocka_unit_test(test_rebase_chain),
		cmocka_unit_test(test_epoch_and_offset),
		cmocka_unit_test(test_range_end_no_overflow),
		cmocka_unit_test(test_saturation),
		cmocka_unit_test(test_conv_check),
		cmocka_unit_test(test_latch_basic),
		cmocka_unit_test(test_latch_hammer),
		cmocka_unit_test(test_latch_nmi_reader),
		cmocka_unit_test(test_latch_rebase_concurrent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
