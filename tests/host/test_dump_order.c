/*
 * What a dump tells its reader about the clocks, on the host (issue 30,
 * defects 1, 7 and 8):
 *   - a CPU trusted until an instant (TRUST frame): 'U' only on its events
 *     at or after it, the instant on its cpu= line and a "# U:" line;
 *   - per pair of CPUs, the ns within which their order is not decided
 *     (the two skew bounds added), and the adjacent events of two CPUs
 *     within it counted and, asked, marked;
 *   - a disputed calibration (CALIB frame) as "# clock:" lines;
 *   - all of it the same from the kernel's side and from the decoder's,
 *     and TRUST/CALIB frames the kernel cannot have sent refused by name.
 * The expected figures are worked out by hand in the comments, not taken
 * from the code under test.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dump_sim.h"
#include <trace/dump_read.h>

#define REC(kind, delta)	rb_record_word((kind), (uint32_t)(delta))
#define MARK(ctx, id)		trace_ent_pack(TEV_mark, trace_ent_ctx(ctx), 1), (id)
#define BASE			1000000000ull	/* every page's base: ns = cycles */

static void make_page(uint8_t *page, uint32_t cpu, const uint32_t *words, uint32_t nwords)
{
	struct rb_page_header *h = (struct rb_page_header *)page;

	memset(page, 0, 2048);
	h->base_ts = BASE;
	h->commit = 4 * nwords;
	h->cpu = (uint16_t)cpu;
	h->version = RB_FORMAT_VERSION;
	memcpy(page + RB_PAGE_HEADER_SIZE, words, 4 * nwords);
}

/*
 * Three CPUs on one 1 GHz clock (ns = cycles):
 *   cpu 0  the boot CPU: skew 0 +- 0                  bound 0 ns
 *   cpu 1  skew 100 +- 300: within its bound, not applied: 100 + 300 = 400 ns
 *   cpu 2  skew 1000 +- 50: applied                   bound 50 ns
 *          untrusted from 1.000002000 (the watchdog saw its skew change)
 * Windows: 0,1 400; 0,2 50; 1,2 450.  The events, merged, with the gap to
 * the one before and the verdict:
 *   A cpu0 1.000000000
 *   B cpu1 1.000000300   300 <= 400   undecided
 *   C cpu2 1.000000900   600 >  450
 *   D cpu0 1.000000951    51 >   50
 *   E cpu2 1.000001001    50 <=  50   undecided (the boundary)
 *   F cpu1 1.000001500   499 >  450
 *   f cpu1 1.000001600   one CPU's own order: never counted
 *   G cpu2 1.000002000   U (at the instant): not counted
 *   H cpu0 1.000002010   after a U: not counted
 */
static uint8_t p0[2048] __aligned(8), p1[2048] __aligned(8), p2[2048] __aligned(8);
static struct clock_conv conv;
static struct dump_clock fc[3];
static struct dump_trust trust2 = { .cpu = 2, .why = DUMP_TRUST_SKEW,
				    .from_ns = 1000002000, .found_ns = 1000003000 };
static struct dump_stats st[3];
static const void *pages[3][1] = { { p0 }, { p1 }, { p2 } };

static void setup_cpus(struct trace_text_cpu *tc)
{
	const uint32_t w0[] = { REC(2, 0), MARK(0, 1), REC(2, 951), MARK(0, 4),
				REC(2, 2010), MARK(0, 8) };
	const uint32_t w1[] = { REC(2, 300), MARK(0, 2), REC(2, 1500), MARK(0, 6),
				REC(2, 1600), MARK(0, 9) };
	const uint32_t w2[] = { REC(2, 900), MARK(0, 3), REC(2, 1001), MARK(0, 5),
				REC(2, 2000), MARK(0, 7) };
	const int64_t skew[3] = { 0, 100, 1000 }, uncert[3] = { 0, 300, 50 };

	assert_int_equal(clock_conv_init(&conv, 1000000000ull, 0, 0), 0);
	make_page(p0, 0, w0, sizeof(w0) / 4);
	make_page(p1, 1, w1, sizeof(w1) / 4);
	make_page(p2, 2, w2, sizeof(w2) / 4);
	for (uint32_t c = 0; c < 3; c++) {
		fc[c] = (struct dump_clock){ .cpu = c, .flags = c < 2 ? DUMP_CLOCK_TRUSTED : 0,
					     .conv = conv, .skew_cycles = skew[c],
					     .skew_uncert_cycles = uncert[c] };
		st[c] = (struct dump_stats){ .cpu = c, .state = DUMP_STATE_OFF,
					     .written = 3, .entries = 3, .read = 3 };
		tc[c] = (struct trace_text_cpu){
			.cpu = c, .clock_state = trace_clock_state(&fc[c]), .clock = &conv,
			.trust = c == 2 ? &trust2 : NULL, .clock_frame = &fc[c],
			.stats = &st[c], .page_size = 2048, .nr_pages = 1, .pages = pages[c],
		};
	}
}

static const char want_head[] =
	"# tracer: baretrace\n"
	"#\n"
	"# entries-in-buffer/entries-written: 9/9   #P:3\n"
	"# cpu=0 entries=0 overrun=0 dropped=0 commit_overrun=0 read=3 lost=0\n"
	"# cpu=1 entries=0 overrun=0 dropped=0 commit_overrun=0 read=3 lost=0\n"
	"# cpu=2 entries=0 overrun=0 dropped=0 commit_overrun=0 read=3 lost=0 clock=untrusted "
	"untrusted_from=1.000002000\n";

/* The built-in events, counted here: every one is enabled in these captures. */
static unsigned builtin_events(void)
{
	unsigned n = 0;

	for (uint32_t id = 0; id < trace_builtin_catalog.nr_ids; id++)
		n += trace_builtin_catalog.by_id[id] != NULL;
	return n;
}

static const char want_legend[] =
	"# U: clock=untrusted: the kernel could not bound this CPU's TSC skew, or its TSC went "
	"backwards, or the clock watchdog saw it drift or step; its times may be off against "
	"other CPUs'\n"
	"# U: cpu 2: trusted until 1.000002000, the clock watchdog's last good check before it "
	"found its TSC skew changed at 1.000003000: its events from then on carry U, earlier "
	"ones do not\n";

static const char want_order[] =
	"# order: events of CPUs a and b are in true order when their times differ by more "
	"than the figure for a,b (ns: the two skew bounds added); nearer, the order shown is "
	"not decided\n"
	"# order: cpu=0 1=400 2=50\n"
	"# order: cpu=1 2=450\n"
	"#\n"
	TRACE_TEXT_LEGEND;

static const char *const want_events[] = {
	"     task/0-1     [000] ....     1.000000000: mark: id=1\n",
	"CPU:1 [ORDER UNDECIDED: 300 ns after CPU:0, within 400 ns]\n",
	"     task/1-5     [001] ....     1.000000300: mark: id=2\n",
	"     task/2-9     [002] ....     1.000000900: mark: id=3\n",
	"     task/0-1     [000] ....     1.000000951: mark: id=4\n",
	"CPU:2 [ORDER UNDECIDED: 50 ns after CPU:0, within 50 ns]\n",
	"     task/2-9     [002] ....     1.000001001: mark: id=5\n",
	"     task/1-5     [001] ....     1.000001500: mark: id=6\n",
	"     task/1-5     [001] ....     1.000001600: mark: id=9\n",
	"     task/2-9     [002] ...U     1.000002000: mark: id=7\n",
	"     task/0-1     [000] ....     1.000002010: mark: id=8\n",
};

static void want_text(struct membuf *w, bool marks, const struct dump_calib *calib)
{
	char line[512];

	w->len = 0;
	membuf_puts(w, want_head);
	snprintf(line, sizeof(line), "# events: enabled=%u/%u all\n", builtin_events(),
		 builtin_events());
	membuf_puts(w, line);
	membuf_puts(w, want_legend);
	if (calib) {
		/* 10100.362 = 10100362 ppb; the figures of a vote two wrong references won. */
		snprintf(line, sizeof(line), "# clock: disputed freq_hz=1010000000 ref=cpuid "
			 "err_ppm=10100.362 tol_ppm=100.000 vote_err_ppm=0.000 used=pmtimer,cpuid "
			 "left_out=pit,hpet spread_ppm=9900.991\n"
			 "# clock: the calibration's references disagree; the vote assumes a "
			 "majority of them is right, which vote_err_ppm bounds; err_ppm covers "
			 "every reference\n");
		membuf_puts(w, line);
	}
	membuf_puts(w, want_order);
	for (size_t i = 0; i < sizeof(want_events) / sizeof(want_events[0]); i++)
		if (marks || strncmp(want_events[i], "CPU:", 4))
			membuf_puts(w, want_events[i]);
	membuf_write(w, "", 1);
}

static const struct dump_calib calib = {
	.flags = DUMP_CALIB_DISPUTED, .hz = 1010000000, .err_ppb = 10100362, .vote_err_ppb = 0,
	.tol_ppb = 100000, .spread_ppb = 9900991, .ref = "cpuid", .used = "pmtimer,cpuid",
	.left_out = "pit,hpet",
};

static void test_text(void **state)
{
	struct trace_text_cpu tc[3];
	struct trace_text_opts o = { .cpu = TRACE_TEXT_ALL_CPUS };
	struct membuf out = { 0 }, want = { 0 };
	struct trace_sink sink = { membuf_write, &out };
	struct trace_text_summary sum;
	uint64_t scratch[256];

	(void)state;
	setup_cpus(tc);
	for (int marks = 0; marks < 2; marks++) {
		out.len = 0;
		o.mark_order = marks;
		o.calib = marks ? &calib : NULL;
		assert_int_equal(trace_text_write(tc, 3, &o, scratch, sizeof(scratch), &sink,
						  &sum), 0);
		membuf_write(&out, "", 1);
		want_text(&want, marks, o.calib);
		assert_string_equal((char *)out.p, (char *)want.p);
		assert_int_equal(sum.undecided, 2);
		assert_int_equal(sum.printed, 9);
	}
	/* One CPU selected: no pair, no order lines. */
	out.len = 0;
	o.cpu = 2;
	assert_int_equal(trace_text_write(tc, 3, &o, scratch, sizeof(scratch), &sink, &sum), 0);
	membuf_write(&out, "", 1);
	assert_null(strstr((char *)out.p, "# order:"));
	assert_int_equal(sum.undecided, 0);
	/* Without its instant, cpu 2 is untrusted throughout, and unbounded. */
	out.len = 0;
	o.cpu = TRACE_TEXT_ALL_CPUS;
	tc[2].trust = NULL;
	assert_int_equal(trace_text_write(tc, 3, &o, scratch, sizeof(scratch), &sink, &sum), 0);
	membuf_write(&out, "", 1);
	assert_non_null(strstr((char *)out.p, "# order: cpu=0 1=400 2=unbounded\n"));
	assert_non_null(strstr((char *)out.p, "[002] ...U     1.000000900: mark: id=3\n"));
	assert_int_equal(sum.undecided, 1);	/* only A, B */
	membuf_free(&out);
	membuf_free(&want);
}

/* The bound itself: rounding up, a skew within its bound added, nothing usable. */
static void test_skew_bound(void **state)
{
	struct dump_clock c = { .conv = { .hz = 3000000000ull } };

	(void)state;
	c.skew_cycles = 0;
	c.skew_uncert_cycles = 0;
	assert_int_equal(trace_clock_skew_bound_ns(&c), 0);
	c.skew_cycles = 1000;			/* applied: 1 cycle at 3 GHz is 0.33 ns */
	c.skew_uncert_cycles = 1;
	assert_int_equal(trace_clock_skew_bound_ns(&c), 1);
	c.skew_uncert_cycles = 3;		/* exactly 1 ns: not rounded */
	assert_int_equal(trace_clock_skew_bound_ns(&c), 1);
	c.skew_cycles = -2;			/* within: 2 + 3 = 5 cycles, 1.67 ns */
	assert_int_equal(trace_clock_skew_bound_ns(&c), 2);
	c.skew_cycles = -4;			/* beyond: applied, 3 cycles */
	assert_int_equal(trace_clock_skew_bound_ns(&c), 1);
	c.skew_uncert_cycles = -1;
	assert_int_equal(trace_clock_skew_bound_ns(&c), UINT64_MAX);
	c.skew_uncert_cycles = 3;
	c.conv.hz = 0;
	assert_int_equal(trace_clock_skew_bound_ns(&c), UINT64_MAX);
}

/* Frames out of what setup_cpus() describes, as the kernel's dump sends them. */
static void write_dump(struct membuf *cap, const struct dump_trust *trusts, uint32_t ntrust,
		       const struct dump_calib *k)
{
	struct trace_sink sink = { membuf_write, cap };
	struct dump_begin b = { .nr_cpus = 3, .page_size = 2048, .tsc_hz = 1000000000ull };
	struct dump_writer w;
	const uint8_t *pg[3] = { p0, p1, p2 };

	membuf_puts(cap, "console text\r\n");
	dump_write_begin(&w, &sink, 5, &b);
	dump_write_events(&w, &trace_builtin_catalog, NULL);
	if (k)
		dump_write_calib(&w, k);
	for (uint32_t c = 0; c < 3; c++)
		dump_write_clock(&w, &fc[c]);
	for (uint32_t i = 0; i < ntrust; i++)
		dump_write_trust(&w, &trusts[i]);
	for (uint32_t c = 0; c < 3; c++)
		dump_write_page(&w, c, pg[c], 2048, 0, 0);
	for (uint32_t c = 0; c < 3; c++)
		dump_write_stats(&w, &st[c]);
	dump_write_end(&w);
}

/* The decoder's text of a dump of those pages is the kernel's, byte for byte. */
static void test_decoded(void **state)
{
	struct trace_text_cpu tc[3];
	struct trace_text_opts o = { .cpu = TRACE_TEXT_ALL_CPUS, .mark_order = true };
	struct membuf cap = { 0 }, text = { 0 }, rep = { 0 }, want = { 0 };
	struct trace_text_summary sum;
	struct dump_result r;
	void *arena = NULL;

	(void)state;
	setup_cpus(tc);
	write_dump(&cap, &trust2, 1, &calib);
	assert_int_equal(sim_decode(&cap, -1, &r, &arena, &text, &rep, &o, &sum), DUMP_READ_OK);
	assert_int_equal(rep.len, 0);
	assert_true(r.has_calib && r.cpus[2].has_trust && !r.cpus[1].has_trust);
	membuf_write(&text, "", 1);
	want_text(&want, true, &calib);
	assert_string_equal((char *)text.p, (char *)want.p);
	assert_int_equal(sum.undecided, 2);
	free(arena);
	membuf_free(&cap);
	membuf_free(&text);
	membuf_free(&rep);
	membuf_free(&want);
}

/*
 * TRUST and CALIB frames the kernel cannot have sent: refused by name,
 * and the CPU keeps what its CLOCK frame says of every event (U on all of
 * cpu 2's, none on cpu 1's).
 */
static void test_refused(void **state)
{
	static const struct {
		struct dump_trust t[2];
		uint32_t n;
		const char *says;
	} cases[] = {
		{ { { .cpu = 1, .why = 2, .from_ns = 5, .found_ns = 6 } }, 1,
		  "cpu 1: a TRUST frame for a clock that is trusted; ignored" },
		{ { { .cpu = 2, .why = 2, .from_ns = 7, .found_ns = 6 } }, 1,
		  "(TRUST): cpu 2's trust ends at 7 ns, after the fault was found at 6 ns; "
		  "ignored" },
		{ { { .cpu = 2, .why = 2, .from_ns = 1000002000, .found_ns = 1000003000 },
		    { .cpu = 2, .why = 2, .from_ns = 5, .found_ns = 6 } }, 2,
		  "(TRUST): second TRUST of cpu 2; ignored" },
		{ { { .cpu = 3, .why = 2, .from_ns = 5, .found_ns = 6 } }, 1,
		  "(TRUST): cpu 3 out of range (3 CPUs); ignored" },
	};
	struct trace_text_cpu tc[3];
	struct dump_calib bad = calib;

	(void)state;
	setup_cpus(tc);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct membuf cap = { 0 }, text = { 0 }, rep = { 0 };
		struct dump_result r;
		void *arena = NULL;

		write_dump(&cap, cases[i].t, cases[i].n, NULL);
		assert_int_equal(sim_decode(&cap, -1, &r, &arena, &text, &rep, NULL, NULL),
				 DUMP_READ_DAMAGED);
		membuf_write(&rep, "", 1);
		membuf_write(&text, "", 1);
		assert_non_null(strstr((char *)rep.p, cases[i].says));
		assert_true(i == 2 ? r.cpus[2].has_trust : !r.cpus[2].has_trust);
		if (i != 2)
			assert_non_null(strstr((char *)text.p, "[002] ...U     1.000000900"));
		assert_non_null(strstr((char *)text.p, "[001] ....     1.000000300"));
		free(arena);
		membuf_free(&cap);
		membuf_free(&text);
		membuf_free(&rep);
	}
	/* A reference name without its NUL, or not printable. */
	for (int k = 0; k < 2; k++) {
		struct membuf cap = { 0 }, text = { 0 }, rep = { 0 };
		struct dump_result r;
		void *arena = NULL;

		bad = calib;
		if (k)
			bad.used[3] = '\n';
		else
			memset(bad.left_out, 'x', sizeof(bad.left_out));
		write_dump(&cap, NULL, 0, &bad);
		assert_int_equal(sim_decode(&cap, -1, &r, &arena, &text, &rep, NULL, NULL),
				 DUMP_READ_DAMAGED);
		membuf_write(&rep, "", 1);
		membuf_write(&text, "", 1);
		assert_non_null(strstr((char *)rep.p, "(CALIB): a reference name is not printable "
					"text ending in NUL; ignored"));
		assert_false(r.has_calib);
		assert_null(strstr((char *)text.p, "# clock:"));
		free(arena);
		membuf_free(&cap);
		membuf_free(&text);
		membuf_free(&rep);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_skew_bound),
		cmocka_unit_test(test_decoded),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
