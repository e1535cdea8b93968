/*
 * CLOCK frames the kernel never sends, on the host.  A CPU whose frame
 * fails trace_clock_check() must come out of the decoder as clock=invalid
 * with what is wrong in its "# U:" line and 'U' on its lines, its stamps
 * converted by a stand-in so that the merge still follows them, every
 * other CPU's lines exactly as with a valid frame, and no damage reported
 * (the frames are intact).  The check itself is measured at its
 * boundaries against 128-bit references, and the kernel's own clocks must
 * all pass it.
 *
 * The times a stand-in gives are computed here from the raw stamps of the
 * simulated machine's pages, not from the decoder's conversion: CPU 0
 * counts at exactly 1 GHz with ns_base 0 and no offset, so its conversion
 * (the first stand-in) maps cycles c to c - cycle_base_0, and BEGIN's
 * tsc_hz is 1 GHz too, so "cycles since reset" maps c to c.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dump_sim.h"

static const struct sim_cfg cfg = {
	.seed = 3, .nr_cpus = 4, .events = 3000, .page_size = 2048, .nr_pages = 6,
	.odd_events = true,
};

/* ---- reading the text ---- */

struct ev_line {
	uint32_t cpu;		/* from "[nnn]" */
	char trust;		/* fourth flag: '.' or 'U' */
	int64_t ns;		/* the timestamp */
};

/* Parse an event line ("<ctx>-<cpu> [<cpu>] <flags> <s>.<ns>: ..."). */
static bool parse_event(const char *line, size_t ll, struct ev_line *e)
{
	char buf[400];
	const char *t;
	long long s;
	unsigned long long ns;
	unsigned cpu;
	bool neg;

	if (ll < 40 || ll >= sizeof(buf) || line[0] == '#' || line[0] == 'C')
		return false;
	memcpy(buf, line, ll);
	buf[ll] = 0;
	assert_int_equal(sscanf(buf + 18, "[%3u]", &cpu), 1);
	e->cpu = cpu;
	e->trust = buf[27];
	for (t = buf + 29; *t == ' '; t++)
		;
	neg = *t == '-';
	assert_int_equal(sscanf(t + neg, "%lld.%llu", &s, &ns), 2);
	e->ns = (int64_t)(s * 1000000000ll + (long long)ns) * (neg ? -1 : 1);
	return true;
}

/* Next line of t from *at: its start and length, or NULL at the end. */
static const char *next_line(const struct membuf *t, size_t *at, size_t *ll)
{
	const char *line = (const char *)t->p + *at, *end;

	if (*at >= t->len)
		return NULL;
	end = memchr(line, '\n', t->len - *at);
	*ll = end ? (size_t)(end - line) : t->len - *at;
	*at += *ll + 1;
	return line;
}

/* Lines (events and LOST markers) of every CPU but skip, in order. */
static void lines_but(const struct membuf *t, uint32_t skip, struct membuf *out)
{
	char tag[8], mark[16];
	const char *line;
	size_t at = 0, ll;

	snprintf(tag, sizeof(tag), "[%03u] ", skip);
	snprintf(mark, sizeof(mark), "CPU:%u ", skip);
	while ((line = next_line(t, &at, &ll))) {
		if (line[0] == '#' || memmem(line, ll, tag, strlen(tag)) ||
		    (ll >= strlen(mark) && !memcmp(line, mark, strlen(mark))))
			continue;
		membuf_write(out, line, ll);
		membuf_write(out, "\n", 1);
	}
}

/* Lines of t that start with prefix and contain needle. */
static size_t count(const struct membuf *t, const char *prefix, const char *needle)
{
	const char *line;
	size_t at = 0, ll, n = 0;

	while ((line = next_line(t, &at, &ll)))
		n += ll >= strlen(prefix) && !memcmp(line, prefix, strlen(prefix)) &&
		     memmem(line, ll, needle, strlen(needle));
	return n;
}

/* The raw stamps of a CPU's events, in buffer order. */
static size_t raw_stamps(const struct sim *s, uint32_t ci, uint64_t *ts, size_t max)
{
	const struct sim_cpu *c = &s->cpu[ci];
	struct rb_page_iter it;
	struct rb_event ev;
	size_t n = 0;
	uint32_t i;

	for (i = 0; i < c->nr_taken; i++) {
		assert_int_equal(rb_page_iter_init(&it, c->taken[i], s->cfg.page_size),
				 RB_ITER_END);
		while (rb_page_iter_next(&it, &ev) == RB_ITER_EVENT) {
			assert_true(n < max);
			ts[n++] = ev.ts;
		}
	}
	return n;
}

/*
 * The event lines of t: times never go back; CPU bad's lines carry 'U'
 * and the times want[] (in its buffer order), the others 'U' only on the
 * simulated untrusted CPU 2.  Returns how often the merged order switches
 * between CPU bad and the others.
 */
static size_t check_events(const struct membuf *t, uint32_t bad, const int64_t *want,
			   size_t nwant)
{
	struct ev_line e;
	const char *line;
	size_t at = 0, ll, k = 0, switches = 0;
	int64_t prev = INT64_MIN;
	bool first = true, was_bad = false;

	while ((line = next_line(t, &at, &ll))) {
		if (!parse_event(line, ll, &e))
			continue;
		assert_true(e.ns >= prev);
		prev = e.ns;
		if (!first && (e.cpu == bad) != was_bad)
			switches++;
		first = false;
		was_bad = e.cpu == bad;
		if (e.cpu == bad || bad == UINT32_MAX) {
			assert_int_equal(e.trust, 'U');
			assert_true(k < nwant);
			assert_int_equal(e.ns, want[k]);
			k++;
		} else {
			assert_int_equal(e.trust, e.cpu == 2 ? 'U' : '.');
		}
	}
	assert_int_equal(k, nwant);
	return switches;
}

/* ---- one CPU's frame made invalid ---- */

enum edit {
	E_SHIFT64, E_FRAC, E_ZERO_TRUSTED, E_ZERO, E_MULT0, E_HZ0, E_HZ_HIGH, E_MULT_OFF,
	E_UNCERT_NEG, E_OFFSET_MIN, E_OFFSET_MAX, E_OFFSET_UNEXPLAINED,
};

static const struct {
	enum edit edit;		/* what is done to the frame */
	const char *why;	/* how its note must start */
} cases[] = {
	{ E_SHIFT64, "shift=64 is above 63; " },
	{ E_FRAC, "ns_frac=2^shift is not below 2^shift" },	/* made with the shift */
	{ E_ZERO_TRUSTED, "no conversion (all zero), yet flagged trusted; " },
	{ E_ZERO, "no conversion (all zero); " },
	{ E_MULT0, "mult=0: no conversion; " },
	{ E_HZ0, "hz=0 with mult=" },
	{ E_HZ_HIGH, "hz=20000000001 with mult=" },
	{ E_MULT_OFF, "mult=" },
	{ E_UNCERT_NEG, "skew_uncert_cycles=-1 is negative; " },
	{ E_OFFSET_MIN, "offset_ns=-9223372036854775808 is more than the measured skew" },
	{ E_OFFSET_MAX, "offset_ns=9223372036854775807 is more than the measured skew" },
	{ E_OFFSET_UNEXPLAINED, "offset_ns=1000000 is more than the measured skew" },
};

static void apply(struct dump_clock *c, enum edit e)
{
	switch (e) {
	case E_SHIFT64: c->conv.shift = 64; break;
	case E_FRAC: c->conv.ns_frac = 1ull << c->conv.shift; break;
	case E_ZERO_TRUSTED: memset(&c->conv, 0, sizeof(c->conv)); c->flags = DUMP_CLOCK_TRUSTED;
		break;
	case E_ZERO: memset(&c->conv, 0, sizeof(c->conv)); c->flags = 0; break;
	case E_MULT0: c->conv.mult = 0; break;
	case E_HZ0: c->conv.hz = 0; break;
	case E_HZ_HIGH: c->conv.hz = CLOCK_HZ_MAX + 1; break;
	case E_MULT_OFF: c->conv.mult += 2; break;
	case E_UNCERT_NEG: c->skew_uncert_cycles = -1; break;
	case E_OFFSET_MIN: c->conv.offset_ns = INT64_MIN; break;
	case E_OFFSET_MAX: c->conv.offset_ns = INT64_MAX; break;
	case E_OFFSET_UNEXPLAINED: c->conv.offset_ns = 1000000; break;
	}
}

static void test_invalid_clock(void **state)
{
	static uint64_t ts[4000];
	static int64_t want[4000];
	struct sim s;
	struct membuf cap = { 0 }, direct = { 0 }, text = { 0 }, ktext = { 0 }, rep = { 0 };
	struct membuf a = { 0 }, b = { 0 };
	struct trace_text_opts o = { .cpu = TRACE_TEXT_ALL_CPUS };
	struct dump_clock orig;
	struct dump_result r;
	void *arena = NULL;
	size_t n, i, k;
	char u_line[128], frac_why[96];
	const char *why;

	(void)state;
	sim_run(&s, &cfg);
	assert_int_equal(sim_text(&s, &o, &direct, NULL), 0);
	orig = s.cpu[1].clock;
	/* The stand-in's times, from the raw stamps (see the top). */
	assert_true(s.cpu[0].clock.conv.hz == CLOCK_NSEC_PER_SEC && s.cpu[0].clock.conv.offset_ns == 0 &&
		    s.cpu[0].clock.conv.ns_base == 0 && s.cpu[0].clock.conv.ns_frac == 0);
	n = raw_stamps(&s, 1, ts, 4000);
	assert_true(n > 300);
	for (i = 0; i < n; i++)
		want[i] = (int64_t)(ts[i] - s.cpu[0].cycle_base);

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct dump_cpu *dc;

		s.cpu[1].clock = orig;
		apply(&s.cpu[1].clock, cases[k].edit);
		cap.len = text.len = ktext.len = rep.len = a.len = b.len = 0;
		sim_capture(&s, (uint16_t)(50 + k), &cap);
		assert_int_equal(sim_decode(&cap, -1, &r, &arena, &text, &rep, NULL, NULL),
				 DUMP_READ_OK);
		print_message("case %zu: %s\n", k, r.cpus[1].clock_note);

		/* Marked, with its reason and stand-in, and not called damage. */
		assert_int_equal(rep.len, 0);
		assert_true(r.complete);
		assert_int_equal(r.bad_clocks, 1);
		dc = &r.cpus[1];
		assert_int_equal(dc->clock_state, TRACE_CLOCK_INVALID);
		assert_int_equal(r.cpus[0].clock_state, TRACE_CLOCK_TRUSTED);
		assert_int_equal(r.cpus[2].clock_state, TRACE_CLOCK_UNTRUSTED);
		assert_int_equal(r.cpus[3].clock_state, TRACE_CLOCK_TRUSTED);
		why = cases[k].why;
		if (cases[k].edit == E_FRAC) {	/* the values follow the shift chosen */
			snprintf(frac_why, sizeof(frac_why),
				 "ns_frac=%llu is not below 2^shift (shift=%u); ",
				 1ull << orig.conv.shift, orig.conv.shift);
			why = frac_why;
		}
		assert_memory_equal(dc->clock_note, why, strlen(why));
		assert_non_null(strstr(dc->clock_note,
				       "; its times use cpu 0's conversion without offset"));
		assert_int_equal(count(&text, "# cpu=1 ", " clock=invalid"), 1);
		assert_int_equal(count(&text, "# cpu=", " clock=invalid"), 1);
		snprintf(u_line, sizeof(u_line), "# U: clock=invalid: cpu 1: %s", why);
		assert_int_equal(count(&text, u_line, ""), 1);
		assert_int_equal(count(&text, "# U: clock=invalid: ", ""), 1);
		assert_int_equal(count(&text, "# U: clock=untrusted: ", ""), 1);

		/* Its times are the stand-in's, merged in order and among the others'. */
		assert_true(check_events(&text, 1, want, n) > 10);

		/* Every other CPU's lines are what a valid frame gives. */
		lines_but(&direct, 1, &a);
		lines_but(&text, 1, &b);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.p, b.p, a.len);

		/* The kernel's formatter applies the same rule (and has no stand-in). */
		assert_int_equal(sim_text(&s, &o, &ktext, NULL), 0);
		assert_int_equal(count(&ktext, "# cpu=1 ", " clock=invalid"), 1);
		assert_int_equal(count(&ktext, "# U: clock=invalid: the conversion in this CPU's "
				       "CLOCK is unusable", ""), 1);
		assert_int_equal(count(&ktext, "     task/1-5     [001] ...U", ""),
				 count(&text, "     task/1-5     [001] ...U", ""));
		free(arena);
		arena = NULL;
	}
	membuf_free(&cap);
	membuf_free(&direct);
	membuf_free(&text);
	membuf_free(&ktext);
	membuf_free(&rep);
	membuf_free(&a);
	membuf_free(&b);
	sim_free(&s);
}

/*
 * A kernel without a TSC frequency sends every conversion all zero: no
 * CPU has one to lend, so each counts cycles since reset at BEGIN's
 * tsc_hz, and the merge is by raw stamp.
 */
static void test_no_conversion_anywhere(void **state)
{
	static uint64_t ts[4000];
	static int64_t want[4000];
	struct sim s;
	struct membuf cap = { 0 }, text = { 0 }, rep = { 0 };
	struct dump_result r;
	void *arena = NULL;
	size_t n, i;
	uint32_t ci;

	(void)state;
	sim_run(&s, &cfg);
	for (ci = 0; ci < 4; ci++)
		memset(&s.cpu[ci].clock.conv, 0, sizeof(s.cpu[ci].clock.conv));
	sim_capture(&s, 77, &cap);
	assert_int_equal(sim_decode(&cap, -1, &r, &arena, &text, &rep, NULL, NULL), DUMP_READ_OK);
	assert_int_equal(rep.len, 0);
	assert_int_equal(r.bad_clocks, 4);
	assert_int_equal(r.begin.tsc_hz, CLOCK_NSEC_PER_SEC);
	for (ci = 0; ci < 4; ci++) {
		assert_int_equal(r.cpus[ci].clock_state, TRACE_CLOCK_INVALID);
		assert_non_null(strstr(r.cpus[ci].clock_note,
				       "; its times are cycles since reset at 1000000000 Hz"));
	}
	assert_int_equal(count(&text, "# U: clock=invalid: cpu ", "no conversion (all zero)"), 4);
	/* All CPUs: raw stamps at 1 GHz are ns, and the merge follows them. */
	for (n = 0, ci = 0; ci < 4; ci++)
		n += raw_stamps(&s, ci, ts + n, 4000 - n);
	/* check_events() walks the merged order: sort the stamps to match. */
	for (i = 0; i < n; i++)
		want[i] = (int64_t)ts[i];
	for (i = 1; i < n; i++) {
		int64_t v = want[i];
		size_t j = i;

		for (; j > 0 && want[j - 1] > v; j--)
			want[j] = want[j - 1];
		want[j] = v;
	}
	check_events(&text, UINT32_MAX, want, n);
	free(arena);
	membuf_free(&cap);
	membuf_free(&text);
	membuf_free(&rep);
	sim_free(&s);
}

/* A stand-in is only ever a valid conversion: never another invalid one. */
static void test_stand_in_source(void **state)
{
	struct sim s;
	struct membuf cap = { 0 }, rep = { 0 };
	struct dump_result r;
	void *arena = NULL;

	(void)state;
	sim_run(&s, &cfg);
	s.cpu[0].clock.conv.shift = 64;			/* mult still nonzero */
	s.cpu[1].clock.conv.offset_ns = INT64_MIN;	/* a usable shape */
	sim_capture(&s, 78, &cap);
	assert_int_equal(sim_decode(&cap, -1, &r, &arena, NULL, &rep, NULL, NULL), DUMP_READ_OK);
	assert_int_equal(r.bad_clocks, 2);
	/* CPU 2 is untrusted but valid: the first CPU that can lend its rate. */
	assert_non_null(strstr(r.cpus[0].clock_note, "; its times use cpu 2's conversion"));
	assert_non_null(strstr(r.cpus[1].clock_note, "; its times use cpu 2's conversion"));
	assert_int_equal(r.cpus[1].clock.conv.offset_ns, 0);
	assert_int_equal(clock_conv_check(&r.cpus[0].clock.conv), 0);
	free(arena);
	membuf_free(&cap);
	membuf_free(&rep);
	sim_free(&s);
}

/* ---- the check at its boundaries ---- */

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t rnd64(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

static struct dump_clock make_clock(uint64_t hz, int64_t skew, int64_t uncert, int64_t off)
{
	struct dump_clock c = { .cpu = 1, .flags = DUMP_CLOCK_TRUSTED, .skew_cycles = skew,
				.skew_uncert_cycles = uncert };

	assert_int_equal(clock_conv_init(&c.conv, hz, 12345, 678), 0);
	c.conv.offset_ns = off;
	return c;
}

static bool valid(uint64_t hz, int64_t skew, int64_t uncert, int64_t off)
{
	struct dump_clock c = make_clock(hz, skew, uncert, off);

	return trace_clock_check(&c, NULL, 0) == 0;
}

/* The largest |offset| allowed, by the documented formula in 128 bits. */
static unsigned __int128 allowed_ref(uint64_t hz, int64_t skew, int64_t uncert)
{
	unsigned __int128 mag = skew < 0 ? -(__int128)skew : skew;
	unsigned __int128 span = (mag + (unsigned __int128)uncert) * CLOCK_NSEC_PER_SEC / hz;

	return span + span * TRACE_CLOCK_OFFSET_SLACK_PPM / 1000000u + TRACE_CLOCK_OFFSET_SLACK_NS;
}

static void test_offset_bound(void **state)
{
	uint32_t i, tested = 0;

	(void)state;
	/* By hand: 1 GHz, 5000 +- 300 cycles are 5300 ns, plus 1000 of slack. */
	assert_true(valid(1000000000ull, 5000, 300, 6300));
	assert_true(valid(1000000000ull, 5000, 300, -6300));
	assert_false(valid(1000000000ull, 5000, 300, 6301));
	assert_false(valid(1000000000ull, -5000, 300, -6301));
	assert_true(valid(1000000000ull, 0, 0, 1000));
	assert_false(valid(1000000000ull, 0, 0, 1001));
	/* 3 GHz, 1000 s of skew: 10^12 ns, + 1 ppm (10^6) + 1000. */
	assert_true(valid(3000000000ull, 3000000000000ll, 0, 1000001001000ll));
	assert_false(valid(3000000000ull, 3000000000000ll, 0, 1000001001001ll));
	/* Extremes: a span past 2^64 ns saturates, so any offset is explained. */
	assert_true(valid(1, INT64_MIN, INT64_MAX, INT64_MIN));
	assert_false(valid(1000000000ull, 0, 0, INT64_MIN));
	assert_false(valid(1000000000ull, 0, 0, INT64_MAX));

	/* Random rates and skews: the boundary is where the reference puts it. */
	for (i = 0; i < 20000; i++) {
		uint64_t hz = 1 + rnd64() % CLOCK_HZ_MAX;
		int64_t skew = (int64_t)(rnd64() >> (rnd64() % 64));
		int64_t uncert = (int64_t)(rnd64() >> (1 + rnd64() % 63));
		unsigned __int128 lim;

		if (i % 4 == 0)
			hz = 1000000ull * (1 + rnd64() % 20000);	/* realistic rates */
		if (i & 1)
			skew = skew == INT64_MIN ? skew : -skew;
		lim = allowed_ref(hz, skew, uncert);
		if (lim >= INT64_MAX)
			continue;
		tested++;
		assert_true(valid(hz, skew, uncert, (int64_t)lim));
		assert_true(valid(hz, skew, uncert, -(int64_t)lim));
		assert_false(valid(hz, skew, uncert, (int64_t)lim + 1));
		assert_false(valid(hz, skew, uncert, -(int64_t)lim - 1));
	}
	assert_true(tested > 5000);
}

/* mult must be 10^9 * 2^shift / hz rounded down or up, nothing else. */
static void test_mult_bound(void **state)
{
	/* Rates that divide 10^9 * 2^shift (floor = ceil), then random ones. */
	static const uint64_t exact_hz[] = { 1, 1024, 1000000, 500000000, 1000000000,
					     2000000000, 4000000000 };
	const uint32_t n_exact = sizeof(exact_hz) / sizeof(exact_hz[0]);
	uint32_t i;

	(void)state;
	for (i = 0; i < 20000; i++) {
		uint64_t hz = i < n_exact ? exact_hz[i] : 1 + rnd64() % CLOCK_HZ_MAX;
		struct dump_clock c = make_clock(hz, 0, 0, 0);
		unsigned __int128 exact = (unsigned __int128)CLOCK_NSEC_PER_SEC << c.conv.shift;
		uint64_t lo = (uint64_t)(exact / hz), hi = lo + (exact % hz != 0);

		assert_true(c.conv.mult == lo || c.conv.mult == hi);
		c.conv.mult = (uint32_t)lo;
		assert_int_equal(trace_clock_check(&c, NULL, 0), 0);
		c.conv.mult = (uint32_t)hi;
		assert_int_equal(trace_clock_check(&c, NULL, 0), 0);
		if (lo > 1) {
			c.conv.mult = (uint32_t)(lo - 1);
			assert_int_equal(trace_clock_check(&c, NULL, 0), -1);
		}
		if (hi < UINT32_MAX) {
			c.conv.mult = (uint32_t)(hi + 1);
			assert_int_equal(trace_clock_check(&c, NULL, 0), -1);
		}
	}
}

/* c passes the check, and its flag alone decides trusted or untrusted. */
static void assert_passes(struct dump_clock c, uint64_t hz, int64_t skew)
{
	char why[DUMP_CLOCK_NOTE_MAX];

	if (trace_clock_check(&c, why, sizeof(why)))
		fail_msg("hz=%llu skew=%lld: %s", (unsigned long long)hz, (long long)skew, why);
	assert_int_equal(trace_clock_state(&c), TRACE_CLOCK_TRUSTED);
	c.flags = 0;
	assert_int_equal(trace_clock_state(&c), TRACE_CLOCK_UNTRUSTED);
}

/*
 * What the kernel sends passes: clock_conv_init() at any rate, and an AP's
 * conversion as arch/x86/smp.c (set_cpu_clock()) builds it from a skew up
 * to 2^62 cycles with its uncertainty: offset_ns = 0, the boot CPU's
 * conversion rebased to the boot CPU's reading and anchored at the AP's
 * (cycle_base = the AP's reading, the skew away). Captures from earlier
 * kernels, which put the skew in offset_ns as -skew * 10^9 / hz, pass too.
 */
static void test_kernel_clocks_pass(void **state)
{
	uint32_t i;

	(void)state;
	for (i = 0; i < 20000; i++) {
		uint64_t hz = i < 1000 ? 1000000ull * (i + 1) : 1 + rnd64() % CLOCK_HZ_MAX;
		int64_t skew = (int64_t)(rnd64() >> (2 + rnd64() % 62)) * (i & 1 ? -1 : 1);
		int64_t uncert = (int64_t)(rnd64() % 100000);
		__int128 off = -(__int128)skew * 1000000000 / (__int128)hz;
		struct dump_clock c = make_clock(hz, skew, uncert, 0);
		uint64_t bsp_tsc = 12345 + 10 * hz;	/* the BSP's reading, 10 s on */

		/* Today's kernel: the skew is in cycle_base, none in offset_ns. */
		assert_int_equal(clock_conv_rebase(&c.conv, bsp_tsc), 0);
		c.conv.cycle_base = bsp_tsc + (uint64_t)skew;
		assert_passes(c, hz, skew);
		/* Earlier kernels: the skew converted into offset_ns. */
		if (off > INT64_MAX || off < INT64_MIN)
			continue;	/* their offset could not hold it either */
		assert_passes(make_clock(hz, skew, uncert, (int64_t)off), hz, skew);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invalid_clock),
		cmocka_unit_test(test_no_conversion_anywhere),
		cmocka_unit_test(test_stand_in_source),
		cmocka_unit_test(test_offset_bound),
		cmocka_unit_test(test_mult_bound),
		cmocka_unit_test(test_kernel_clocks_pass),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
