/*
 * Binary dumps and trace text, on the host: CRC-32, the exact text layout,
 * and the round trip ring buffers -> dump -> decoder -> text, which must
 * give byte for byte the text the kernel would print straight from its
 * ring buffers.  The machine is simulated by dump_sim.c (real ring buffers,
 * several CPUs with their own clocks, overwrite and discard losses).
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
#include <lib/crc32.h>
#include <trace/dump_pack.h>
#include <trace/dump_read.h>
#include <trace/events.h>

#include "../../trace/dump_scan.h"

/* ---- helpers ---- */

static const struct sim_cfg big_cfg = {
	.seed = 1, .nr_cpus = 4, .events = 6000, .page_size = 2048, .nr_pages = 6,
	.drain_every = 0, .odd_events = true,
};

/* Number of lines of t that start with prefix / contain needle. */
static size_t count_lines(const struct membuf *t, const char *needle, bool prefix)
{
	size_t n = 0, i = 0, nl = strlen(needle);

	while (i < t->len) {
		const char *line = (const char *)t->p + i;
		const char *end = memchr(line, '\n', t->len - i);
		size_t ll = end ? (size_t)(end - line) : t->len - i;

		if (prefix ? (ll >= nl && !memcmp(line, needle, nl))
			   : memmem(line, ll, needle, nl) != NULL)
			n++;
		i += ll + 1;
	}
	return n;
}

/* ---- CRC-32 ---- */

static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	int k;

	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}

static void test_crc32(void **state)
{
	uint8_t buf[1000];
	uint32_t i, c;

	(void)state;
	assert_int_equal(crc32("123456789", 9), 0xcbf43926u);
	assert_int_equal(crc32("", 0), 0);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131u + (i >> 3));
	for (i = 0; i < sizeof(buf); i += 37) {
		assert_int_equal(crc32(buf, i), crc_bitwise(buf, i));
		c = crc32_update(CRC32_INIT, buf, i / 3);
		c = crc32_final(crc32_update(c, buf + i / 3, i - i / 3));
		assert_int_equal(c, crc_bitwise(buf, i));
	}
}

/* ---- exact text ---- */

/* A hand-made page: header plus the given records. */
static void make_page(uint8_t *page, uint32_t size, uint32_t cpu, uint64_t pos,
		      uint64_t base, const uint32_t *words, uint32_t nwords, uint32_t lost)
{
	struct rb_page_header *h = (struct rb_page_header *)page;

	memset(page, 0, size);
	h->base_ts = base;
	h->pos = pos;
	h->commit = 4 * nwords;
	h->cpu = (uint16_t)cpu;
	h->version = RB_FORMAT_VERSION;
	h->lost = lost;
	memcpy(page + RB_PAGE_HEADER_SIZE, words, 4 * nwords);
}

#define REC(kind, delta)	rb_record_word((kind), (uint32_t)(delta))
#define HDR(id, ctx, n)		trace_ent_pack((id), trace_ent_ctx(ctx), (n))

/* A stop hook that says stop once it has been asked `left` times. */
struct stop_after {
	int left;
};

static bool stop_after_fn(void *ctx)
{
	struct stop_after *sa = ctx;

	return sa->left-- <= 0;
}

static void test_text_exact(void **state)
{
	static uint8_t p0[2048] __aligned(8), p1[2048] __aligned(8), p2[2048] __aligned(8);
	const uint32_t w0[] = {
		REC(3, 10), HDR(TEV_producer, 0, 2), 1, 7,	/* 1.000000010 */
		REC(2, 2000), HDR(TEV_lapic_tick, 2, 1), 4,		/* 1.000002000 */
		REC(2, 3000), HDR(99, 1, 1), 5,			/* unknown id */
	};
	const uint32_t w1[] = {
		REC(2, 500), HDR(TEV_nmi, 3, 1), 9,		/* 0.999999551 (offset -49) */
		REC(2, 2000), HDR(TEV_mark, 1, 1), 3,		/* 1.000001051 */
	};
	const uint32_t w2[] = {
		REC(2, 1), HDR(TEV_mark, 0, 1), 42,
		REC(31, 0),					/* invalid record */
	};
	struct clock_conv c0, c1;
	struct dump_stats st0 = { .cpu = 0, .state = DUMP_STATE_OFF, .written = 5,
				  .entries = 3, .overrun = 2, .read = 3, .lost = 2,
				  .in_buffer = 1 };	/* "entries=": unread, as ftrace */
	const void *pages0[] = { p0, p2 }, *pages1[] = { p1 };
	const uint64_t lost0[] = { 2, 0 };
	struct trace_text_cpu tc[2] = {
		{ .cpu = 0, .clock = &c0, .stats = &st0, .page_size = 2048, .nr_pages = 2,
		  .pages = pages0, .lost = lost0 },
		{ .cpu = 1, .clock_state = TRACE_CLOCK_UNTRUSTED, .clock = &c1,
		  .page_size = 2048, .nr_pages = 1, .pages = pages1 },
	};
	struct trace_text_opts o = { .cpu = TRACE_TEXT_ALL_CPUS };
	struct membuf out = { 0 };
	struct trace_sink sink = { membuf_write, &out };
	struct trace_text_summary sum;
	uint64_t scratch[256];
	const char *want =
		"# tracer: baretrace\n"
		"#\n"
		"# entries-in-buffer/entries-written: 6/7   #P:2\n"
		"# cpu=0 entries=1 overrun=2 dropped=0 commit_overrun=0 read=3 lost=2\n"
		"# cpu=1 stats=missing clock=untrusted\n"
		"# events: enabled=18/18 all\n"
		"# U: clock=untrusted: the kernel could not bound this CPU's TSC skew, or its "
		"TSC went backwards, or the clock watchdog saw it drift or step; its times may be "
		"off against other CPUs'\n"
		"# order: events of CPUs a and b are in true order when their times differ by more "
		"than the figure for a,b (ns: the two skew bounds added); nearer, the order shown "
		"is not decided\n"
		"# order: cpu=0 1=unbounded\n"
		"#\n"
		TRACE_TEXT_LEGEND
		"      nmi/1-8     [001] ..zU     0.999999551: nmi: count=9\n"
		"CPU:0 [LOST 2 EVENTS]\n"
		"     task/0-1     [000] ....     1.000000010: producer: seq=1 value=7\n"
		"  softirq/1-6     [001] ..sU     1.000001051: mark: id=3\n"
		"      irq/0-3     [000] ..h.     1.000002000: lapic_tick: tick=4\n"
		"  softirq/0-2     [000] ..s.     1.000003000: unknown: id=99 bytes=8\n"
		"     task/0-1     [000] ....     2.000000001: mark: id=42\n"
		"CPU:0 [MALFORMED PAGE pos=1 at offset 12]\n";

	(void)state;
	/* 1 GHz counters; cpu 1 reads 1e9 cycles ahead and has offset -49 ns. */
	assert_int_equal(clock_conv_init(&c0, 1000000000ull, 0, 0), 0);
	assert_int_equal(clock_conv_init(&c1, 1000000000ull, 1000000000ull, 0), 0);
	c1.offset_ns = -49;
	make_page(p0, 2048, 0, 0, 1000000000ull, w0, 10, 0);
	/* cpu 1: base + 500 - 1e9 - 49 = 999999551 ns. */
	make_page(p1, 2048, 1, 0, 1999999100ull, w1, 6, 0);
	make_page(p2, 2048, 0, 1, 2000000000ull, w2, 4, 0);
	assert_int_equal(trace_text_write(tc, 2, &o, scratch, sizeof(scratch), &sink, &sum), 0);
	membuf_write(&out, "", 1);
	assert_string_equal((char *)out.p, want);
	assert_int_equal(sum.events, 6);
	assert_int_equal(sum.printed, 6);
	assert_int_equal(sum.unknown, 1);
	assert_int_equal(sum.lost_lines, 1);
	assert_int_equal(sum.malformed, 1);
	assert_int_equal(sum.shown, 6);
	assert_false(sum.cut);

	/* A stop after k lines (Ctrl-C in the kernel): exactly the first k lines. */
	const uint64_t all = sum.printed + sum.lost_lines + sum.malformed;	/* 8 */
	for (int after = 0; after <= 9; after++) {
		struct stop_after sa = { .left = after };
		struct trace_text_opts so = o;
		const char *end = strstr(want, "#         | |");

		so.stop = stop_after_fn;
		so.stop_ctx = &sa;
		out.len = 0;
		assert_int_equal(trace_text_write(tc, 2, &so, scratch, sizeof(scratch), &sink,
						  &sum), 0);
		end = strchr(end, '\n') + 1;	/* the header, then `after` lines */
		for (int i = 0; i < after && *end; i++)
			end = strchr(end, '\n') + 1;
		assert_int_equal(out.len, (size_t)(end - want));
		assert_memory_equal(out.p, want, out.len);
		assert_int_equal(sum.cut, after < (int)all);
		assert_int_equal(sum.printed + sum.lost_lines + sum.malformed,
				 after < (int)all ? (uint64_t)after : all);
		/* Events among those lines: all but the LOST (2nd) and MALFORMED (8th). */
		assert_int_equal(sum.shown, after < 2 ? after : after < 8 ? after - 1 : 6);
	}

	/* Negative times, and scratch too small. */
	out.len = 0;
	c0.offset_ns = -3000000000ll;
	o.cpu = 0;
	o.last = 1;
	assert_int_equal(trace_text_write(tc, 2, &o, scratch, sizeof(scratch), &sink, &sum), 0);
	membuf_write(&out, "", 1);
	assert_non_null(strstr((char *)out.p,
			       "     task/0-1     [000] ....    -0.999999999: mark: id=42\n"));
	assert_null(strstr((char *)out.p, "producer"));
	assert_int_equal(sum.printed, 1);
	assert_int_equal(trace_text_write(tc, 2, &o, scratch, 8, &sink, &sum), -1);
	membuf_free(&out);
}

static void test_text_parse_arg(void **state)
{
	struct trace_text_opts o = { .cpu = TRACE_TEXT_ALL_CPUS };

	(void)state;
	assert_int_equal(trace_text_parse_arg("last=25", &o), 0);
	assert_int_equal(o.last, 25);
	assert_int_equal(trace_text_parse_arg("cpu=3", &o), 0);
	assert_int_equal(o.cpu, 3);
	assert_int_equal(trace_text_parse_arg("last=18446744073709551615", &o), 0);
	assert_int_equal(o.last, UINT64_MAX);
	assert_int_equal(trace_text_parse_arg("last=18446744073709551616", &o), -1);
	assert_int_equal(trace_text_parse_arg("last=", &o), -1);
	assert_int_equal(trace_text_parse_arg("last=1x", &o), -1);
	assert_int_equal(trace_text_parse_arg("cpu=-1", &o), -1);
	assert_int_equal(trace_text_parse_arg("cpu=4096", &o), -1);
	assert_int_equal(o.last, UINT64_MAX);
	assert_int_equal(o.cpu, 3);
	assert_int_equal(trace_text_parse_arg("text", &o), 1);
	assert_int_equal(trace_text_parse_arg("", &o), 1);
	assert_int_equal(trace_text_parse_arg("last=0", &o), 0);	/* all, as dump.last=0 */
	assert_int_equal(o.last, 0);
}

/* ---- round trip ---- */

static void assert_nondecreasing(const struct membuf *t)
{
	size_t i = 0;
	long long prev = LLONG_MIN;

	while (i < t->len) {
		const char *line = (const char *)t->p + i;
		const char *end = memchr(line, '\n', t->len - i);
		size_t ll = end - line;
		char buf[400];
		const char *t = buf + 29;
		long long s, v;
		unsigned long long ns;
		bool neg;

		i += ll + 1;
		if (ll >= sizeof(buf) || line[0] == '#' || line[0] == 'C')
			continue;
		memcpy(buf, line, ll);
		buf[ll] = 0;
		while (*t == ' ')
			t++;
		neg = *t == '-';
		assert_int_equal(sscanf(t + neg, "%lld.%llu", &s, &ns), 2);
		v = s * 1000000000ll + (long long)ns;
		v = neg ? -v : v;
		assert_true(v >= prev);
		prev = v;
	}
}

/* Exactly the event lines of cpu have 'U' as their fourth flag. */
static void assert_flag_u(const struct membuf *t, uint32_t cpu)
{
	char tag[8];
	size_t i = 0, n = 0;

	snprintf(tag, sizeof(tag), "[%03u] ", cpu);
	while (i < t->len) {
		const char *line = (const char *)t->p + i;
		size_t ll = (const char *)memchr(line, '\n', t->len - i) - line;

		if (line[0] != '#' && line[0] != 'C') {
			assert_true(ll > 28);
			assert_int_equal(line[27] == 'U', !memcmp(line + 18, tag, 6));
			n += line[27] == 'U';
		}
		i += ll + 1;
	}
	assert_true(n > 0);
}

static void test_roundtrip(void **state)
{
	struct sim s;
	struct membuf cap = { 0 }, direct = { 0 }, decoded = { 0 }, rep = { 0 };
	struct trace_text_opts o = { .cpu = TRACE_TEXT_ALL_CPUS };
	struct trace_text_summary sd, sx;
	struct dump_result r;
	void *arena = NULL;
	uint64_t lost_pages = 0, lost_sum = 0, written = 0, stats_lost = 0;
	uint32_t ci, i;

	(void)state;
	sim_run(&s, &big_cfg);
	sim_capture(&s, 0x1234, &cap);
	assert_int_equal(sim_text(&s, &o, &direct, &sd), 0);
	assert_int_equal(sim_decode(&cap, -1, &r, &arena, &decoded, &rep, NULL, &sx), DUMP_READ_OK);
	assert_int_equal(rep.len, 0);
	assert_true(r.complete && r.has_begin && r.has_end);
	assert_int_equal(r.nr_dumps, 1);
	assert_int_equal(r.dump_id, 0x1234);
	assert_int_equal(r.nr_cpus, 4);
	assert_int_equal(r.page_size, 2048);
	assert_int_equal(r.begin.tsc_hz, s.cpu[0].hz);

	for (ci = 0; ci < 4; ci++) {
		const struct sim_cpu *c = &s.cpu[ci];
		const struct dump_cpu *dc = &r.cpus[ci];

		assert_true(dc->has_clock && dc->has_stats);
		assert_memory_equal(&dc->clock, &c->clock, sizeof(c->clock));
		assert_memory_equal(&dc->stats, &c->stats, sizeof(c->stats));
		assert_int_equal(dc->clock_state, c->trusted ? TRACE_CLOCK_TRUSTED
							     : TRACE_CLOCK_UNTRUSTED);
		assert_int_equal(dc->nr_pages, c->nr_taken);
		assert_true(c->nr_taken > 3);
		for (i = 0; i < c->nr_taken; i++) {
			const struct rb_page_header *h = c->taken[i];

			assert_memory_equal(dc->pages[i], c->taken[i],
					    RB_PAGE_HEADER_SIZE + h->commit);
			assert_int_equal(dc->info[i].lost_overrun, c->lost_overrun[i]);
			assert_int_equal(dc->info[i].lost_dropped, c->lost_dropped[i]);
			assert_int_equal(dc->lost[i], c->lost[i]);
			lost_pages += c->lost[i] != 0;
			lost_sum += c->lost[i];
		}
		/* The buffers' own accounting, everything read: lost = overrun + dropped. */
		assert_int_equal(c->stats.lost, c->stats.overrun + c->stats.dropped);
		assert_int_equal(c->stats.in_buffer, 0);
		assert_int_equal(c->stats.written, c->attempts);
		written += c->stats.written;
		stats_lost += c->stats.lost;
	}
	/* Loss of both kinds happened, and every lost event is in a LOST line. */
	assert_true(s.cpu[0].stats.overrun > 0 && s.cpu[2].stats.dropped > 0);
	assert_int_equal(sd.lost_lines, lost_pages);
	assert_int_equal(sd.lost_events, lost_sum);
	assert_int_equal(sd.lost_events, stats_lost);
	assert_int_equal(sd.printed + sd.lost_events, written);
	assert_int_equal(count_lines(&direct, "CPU:", true), lost_pages);
	assert_true(sd.unknown > 0);
	assert_int_equal(sd.malformed, 0);

	/* The decoder prints exactly what the kernel would. */
	assert_int_equal(decoded.len, direct.len);
	assert_memory_equal(decoded.p, direct.p, direct.len);
	assert_memory_equal(&sx, &sd, sizeof(sd));
	assert_nondecreasing(&direct);

	/* Untrusted clock and integrity stop are marked. */
	assert_int_equal(count_lines(&direct, "# cpu=2 ", true), 1);
	assert_int_equal(count_lines(&direct, " clock=untrusted", false), 2);
	assert_int_equal(count_lines(&direct, "# U: clock=untrusted: ", true), 1);
	assert_int_equal(count_lines(&direct, "state=stopped reason=\"simulated integrity stop\"",
				     false), 1);
	assert_flag_u(&direct, 2);

	free(arena);
	membuf_free(&cap);
	membuf_free(&direct);
	membuf_free(&decoded);
	membuf_free(&rep);
	sim_free(&s);
}

/* Keep only event lines (no header, no markers). */
static void event_lines(const struct membuf *t, struct membuf *out)
{
	size_t i = 0;

	while (i < t->len) {
		const char *line = (const char *)t->p + i;
		const char *end = memchr(line, '\n', t->len - i);
		size_t ll = end - line;

		if (line[0] != '#' && line[0] != 'C')
			membuf_write(out, line, ll + 1);
		i += ll + 1;
	}
}

static void test_selections(void **state)
{
	struct sim s;
	struct sim_cfg cfg = big_cfg;
	struct membuf full = { 0 }, fe = { 0 }, part = { 0 }, pe = { 0 };
	struct trace_text_opts o = { .cpu = TRACE_TEXT_ALL_CPUS };
	struct trace_text_summary sf, sp;
	const uint64_t lasts[] = { 1, 2, 10, 777, 0 };
	uint32_t k, ci;

	(void)state;
	cfg.events = 3000;
	cfg.drain_every = 50;
	sim_run(&s, &cfg);
	assert_int_equal(sim_text(&s, &o, &full, &sf), 0);
	event_lines(&full, &fe);

	/* last=N: exactly the last N event lines of the full text. */
	for (k = 0; k < sizeof(lasts) / sizeof(lasts[0]); k++) {
		uint64_t n = lasts[k] ? lasts[k] : sf.events + 5;

		part.len = pe.len = 0;
		o.last = n;
		assert_int_equal(sim_text(&s, &o, &part, &sp), 0);
		event_lines(&part, &pe);
		if (n > sf.events)
			n = sf.events;
		assert_int_equal(sp.printed, n);
		assert_int_equal(sp.events, sf.events);
		assert_true(pe.len <= fe.len);
		assert_memory_equal(pe.p, fe.p + fe.len - pe.len, pe.len);
		assert_int_equal(count_lines(&pe, "", true), n);
	}

	/* cpu=N: that CPU's lines of the full text, in the same order. */
	o.last = 0;
	for (ci = 0; ci < 4; ci++) {
		struct membuf want = { 0 };
		char tag[16], mark[16];
		size_t i = 0;

		snprintf(tag, sizeof(tag), "[%03u]", ci);
		snprintf(mark, sizeof(mark), "CPU:%u ", ci);
		while (i < full.len) {
			const char *line = (const char *)full.p + i;
			size_t ll = (const char *)memchr(line, '\n', full.len - i) - line;

			if ((line[0] != '#' && memmem(line, ll, tag, 5)) ||
			    !strncmp(line, mark, strlen(mark)))
				membuf_write(&want, line, ll + 1);
			i += ll + 1;
		}
		part.len = 0;
		o.cpu = ci;
		assert_int_equal(sim_text(&s, &o, &part, &sp), 0);
		assert_int_equal(count_lines(&part, "# cpu=", true), 1);
		pe.len = 0;
		i = 0;
		while (i < part.len) {	/* drop the header */
			const char *line = (const char *)part.p + i;
			size_t ll = (const char *)memchr(line, '\n', part.len - i) - line;

			if (line[0] != '#')
				membuf_write(&pe, line, ll + 1);
			i += ll + 1;
		}
		assert_int_equal(pe.len, want.len);
		assert_memory_equal(pe.p, want.p, want.len);
		membuf_free(&want);
	}
	o.cpu = 9;
	part.len = 0;
	assert_int_equal(sim_text(&s, &o, &part, &sp), 0);
	assert_int_equal(sp.printed, 0);

	membuf_free(&full);
	membuf_free(&fe);
	membuf_free(&part);
	membuf_free(&pe);
	sim_free(&s);
}

/* Two dumps in one capture, picked by index. */
static void test_two_dumps(void **state)
{
	struct sim a, b;
	struct sim_cfg ca = big_cfg, cb = big_cfg;
	struct membuf cap = { 0 }, ta = { 0 }, tb = { 0 }, rep = { 0 }, d = { 0 };
	struct trace_text_opts o = { .cpu = TRACE_TEXT_ALL_CPUS };
	struct dump_result r;
	void *arena = NULL;

	(void)state;
	ca.events = 500;
	ca.nr_cpus = 2;
	cb.events = 800;
	cb.seed = 7;
	sim_run(&a, &ca);
	sim_run(&b, &cb);
	sim_capture(&a, 1, &cap);
	sim_capture(&b, 1, &cap);	/* same id: BEGIN still separates them */
	assert_int_equal(sim_text(&a, &o, &ta, NULL), 0);
	assert_int_equal(sim_text(&b, &o, &tb, NULL), 0);

	assert_int_equal(sim_decode(&cap, 0, &r, &arena, &d, &rep, NULL, NULL), DUMP_READ_OK);
	assert_int_equal(r.nr_dumps, 2);
	assert_int_equal(r.index, 0);
	assert_int_equal(d.len, ta.len);
	assert_memory_equal(d.p, ta.p, ta.len);
	free(arena);
	d.len = 0;
	assert_int_equal(sim_decode(&cap, -1, &r, &arena, &d, &rep, NULL, NULL), DUMP_READ_OK);
	assert_int_equal(r.index, 1);
	assert_int_equal(d.len, tb.len);
	assert_memory_equal(d.p, tb.p, tb.len);
	free(arena);
	arena = NULL;
	assert_int_equal(sim_decode(&cap, 2, &r, &arena, &d, &rep, NULL, NULL),
			 DUMP_READ_NO_SUCH_DUMP);
	assert_int_equal(rep.len, 0);

	membuf_free(&cap);
	membuf_free(&ta);
	membuf_free(&tb);
	membuf_free(&d);
	membuf_free(&rep);
	sim_free(&a);
	sim_free(&b);
}

/*
 * The EVENTS frames' bytes by <trace/dump_format.h>'s layout: 6 bytes of
 * numbers and three strings per event, per field a string and 12 bytes,
 * per enum entry 8 bytes and a string (a string: 2 + its length).
 */
static size_t events_frames_size(const struct trace_catalog *cat)
{
	size_t n = 0;

	for (uint32_t id = 1; id < cat->nr_ids; id++) {
		const struct trace_event_def *d = trace_catalog_get(cat, id);
		if (!d)
			continue;
		n += DUMP_FRAME_OVERHEAD + 6 + 2 + strlen(d->system) + 2 + strlen(d->name) +
		     2 + strlen(d->fmt);
		for (uint32_t i = 0; i < d->nfields; i++) {
			n += 2 + strlen(d->fields[i].name) + 12;
			for (uint32_t k = 0; k < d->fields[i].nenums; k++)
				n += 8 + 2 + strlen(d->fields[i].enums[k].name);
		}
	}
	return n;
}

/* The encoder's byte counts, as docs/dump-format.md states them. */
/* Frames of type in a capture (the reader's scanner: good frames only). */
static uint32_t count_frames(const struct membuf *cap, uint32_t type, uint32_t inner)
{
	struct dump_scanner sc = { cap->p, cap->len, 0 };
	struct dump_item it;
	uint32_t n = 0;

	for (dump_scan_next(&sc, &it); it.kind != SCAN_EOF; dump_scan_next(&sc, &it))
		n += it.kind == SCAN_FRAME && it.h.type == type &&
		     (type != DUMP_FRAME_PACK || it.payload[0] == inner);
	return n;
}

/*
 * The same buffers dumped plain and packed decode to the same text, byte
 * for byte, with every page and description in a PACK frame, in less than
 * half the bytes: loss of both kinds, unknown and malformed events,
 * trace_printk events and formats, a symbol table, several page sizes.
 */
static void test_pack_same_text(void **state)
{
	static uint64_t addrs[600];
	static char names[600][24];
	static const char *name_ptrs[600];
	static const struct trace_symtab syms = { addrs, name_ptrs, 600, 0x200000 + 600 * 48 };
	struct sim_cfg cfgs[4] = { big_cfg, big_cfg, big_cfg, big_cfg };
	uint32_t k;

	(void)state;
	for (k = 0; k < 600; k++) {	/* three SYMS frames, names sharing prefixes */
		addrs[k] = 0x200000 + k * 48 - k % 7;
		snprintf(names[k], sizeof(names[k]), "%s_%u", k % 3 ? "lapic_timer" : "tsc",
			 k * 37 % 1000);
		name_ptrs[k] = names[k];
	}
	cfgs[1].syms = &syms;
	cfgs[1].printk = true;
	cfgs[1].seed = 7;
	cfgs[2].page_size = 4096;
	cfgs[2].events = 20000;
	cfgs[2].nr_pages = 8;
	cfgs[2].drain_every = 700;
	cfgs[3].page_size = 65536;
	cfgs[3].events = 30000;
	cfgs[3].nr_pages = 4;
	cfgs[3].odd_events = false;
	for (k = 0; k < 4; k++) {
		struct membuf cap[2] = { { 0 } }, text[2] = { { 0 } }, rep = { 0 };
		struct trace_text_summary sum[2];
		struct dump_result r;
		void *arena = NULL;
		struct sim s;
		uint32_t pages = 0, ci, j;

		sim_run(&s, &cfgs[k]);
		for (ci = 0; ci < cfgs[k].nr_cpus; ci++)
			pages += s.cpu[ci].nr_taken;
		for (j = 0; j < 2; j++) {
			s.cfg.plain = j == 0;
			sim_capture(&s, 0x77, &cap[j]);
			rep.len = 0;
			free(arena);
			assert_int_equal(sim_decode(&cap[j], -1, &r, &arena, &text[j], &rep, NULL,
						    &sum[j]), DUMP_READ_OK);
			assert_int_equal(rep.len, 0);
			assert_int_equal(r.pages, pages);
			if (cfgs[k].syms) {	/* the table, entry for entry */
				assert_non_null(r.syms);
				assert_int_equal(r.syms->count, 600);
				assert_int_equal(r.syms->end, syms.end);
				for (uint32_t e = 0; e < 600; e++) {
					assert_int_equal(r.syms->addrs[e], addrs[e]);
					assert_string_equal(r.syms->names[e], names[e]);
				}
			}
		}
		assert_true(pages > 3);
		assert_int_equal(count_frames(&cap[0], DUMP_FRAME_PACK, 0), 0);
		assert_int_equal(count_frames(&cap[1], DUMP_FRAME_PAGE, 0), 0);
		assert_int_equal(count_frames(&cap[1], DUMP_FRAME_PACK, DUMP_FRAME_PAGE), pages);
		assert_int_equal(count_frames(&cap[1], DUMP_FRAME_EVENTS, 0), 0);
		assert_int_equal(count_frames(&cap[1], DUMP_FRAME_PACK, DUMP_FRAME_SYMS),
				 cfgs[k].syms ? 3 : 0);
		assert_int_equal(text[0].len, text[1].len);
		assert_memory_equal(text[0].p, text[1].p, text[0].len);
		assert_int_equal(sum[0].printed, sum[1].printed);
		fprintf(stderr, "pack: config %u: %zu bytes plain, %zu packed\n", k, cap[0].len,
			cap[1].len);
		assert_true(cap[1].len < cap[0].len);
		for (j = 0; j < 2; j++) {
			membuf_free(&cap[j]);
			membuf_free(&text[j]);
		}
		membuf_free(&rep);
		free(arena);
		sim_free(&s);
	}
}

static uint32_t prng(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*x >> 32);
}

/*
 * Any page packs and unpacks to itself, byte for byte: records of every
 * kind the ring writes (events, padding, time extends, absolute stamps,
 * long records), stamps going back, records cut by commit, and pages of
 * random bytes; commit not a multiple of 4 too.  And a payload cut short,
 * or with a byte added, is refused.
 */
static void test_pack_any_page(void **state)
{
	static struct dump_pack pk;
	static struct pk_work un;
	static uint8_t page[RB_PAGE_SIZE_MAX], out[DUMP_MAX_PAYLOAD], cut[DUMP_MAX_PAYLOAD];
	uint64_t x = 42;
	uint32_t round, packed = 0;

	(void)state;
	for (round = 0; round < 3000; round++) {
		struct rb_page_header *h = (struct rb_page_header *)page;
		uint32_t size = round % 3 == 0 ? 65536 : 4096, room = size - RB_PAGE_HEADER_SIZE;
		uint32_t pos = 0, mode = round % 4, type = 0, len = 0, n;
		struct dump_page_info info;

		memset(page, 0, size);
		h->base_ts = (uint64_t)prng(&x) << 20 | prng(&x);
		h->seq = prng(&x) % 100000;
		h->dropped = prng(&x) % 3 ? 0 : prng(&x);
		h->pos = prng(&x) % 1000;
		h->cpu = (uint16_t)(prng(&x) % 4);
		h->version = RB_FORMAT_VERSION;
		h->flags = (uint8_t)(prng(&x) & 7);
		h->lost = prng(&x) % 2 ? 0 : prng(&x);
		while (mode != 3 && pos + 8 <= room && prng(&x) % 500) {
			uint8_t *r = page + RB_PAGE_HEADER_SIZE + pos;
			uint32_t what = prng(&x) % 20, k = 1 + prng(&x) % 5, left = room - pos;

			if (what < 14 && 4 + 4 * k <= left) {		/* an event */
				uint32_t id = 1 + prng(&x) % 6;

				uint32_t delta = prng(&x) % (what < 12 ? 50000u : RB_DELTA_LIMIT);

				rb_store32(r, rb_record_word(k, delta));
				uint32_t hw = trace_ent_pack((uint16_t)id, trace_ent_ctx(id % 4),
							     k - 1);

				rb_store32(r + 4, hw);
				for (uint32_t i = 1; i < k; i++)
					rb_store32(r + 4 + 4 * i,
						   i == 1 ? (uint32_t)pos : prng(&x) >> (id * 4));
				pos += 4 + 4 * k;
			} else if (what == 14) {			/* padding */
				rb_store32(r, rb_record_word(RB_KIND_PADDING, 4 * k));
				pos += 4 * k <= left ? 4 * k : left;
			} else if (what == 15) {			/* time extend */
				rb_store32(r, rb_record_word(RB_KIND_EXTEND,
							     prng(&x) & RB_ARG_MASK));
				pos += 4;
			} else if (what == 16 && left >= 12) {		/* absolute stamp */
				rb_store32(r, rb_record_word(RB_KIND_ABS, 0));
				rb_store64(r + 4, (uint64_t)prng(&x) << 16);
				pos += 12;
			} else if (what == 17 && left >= 8 + 4 * k) {	/* long form */
				rb_store32(r, rb_record_word(RB_KIND_DATA_LONG, prng(&x) % 1000));
				rb_store32(r + 4, 4 * k);
				pos += 8 + 4 * k;
			} else {					/* anything */
				rb_store32(r, prng(&x));
				pos += 4;
			}
		}
		if (mode == 3) {		/* random bytes, any length */
			pos = prng(&x) % room;
			for (uint32_t i = 0; i < pos; i++)
				page[RB_PAGE_HEADER_SIZE + i] = (uint8_t)prng(&x);
		} else if (mode == 2 && pos) {	/* cut inside a record */
			pos -= 1 + prng(&x) % (pos < 6 ? pos : 6);
		}
		h->commit = pos;
		h->entries = prng(&x) % 400;
		info = (struct dump_page_info){ h->cpu + (round % 50 == 0),
						RB_PAGE_HEADER_SIZE + pos, h->pos,
						prng(&x) % 2 ? 0 : prng(&x), round % 7 };
		n = dump_pack_page(&pk, &info, page);
		if (!n)
			continue;	/* it did not pay: sent plain */
		packed++;
		assert_null(dump_unpack(&un, pk.out, n, out, sizeof(out), &type, &len));
		assert_int_equal(type, DUMP_FRAME_PAGE);
		assert_int_equal(len, sizeof(info) + info.data_len);
		assert_memory_equal(out, &info, sizeof(info));
		assert_memory_equal(out + sizeof(info), page, info.data_len);
		/* Cut by one byte, or one more: not what a packer made. */
		memcpy(cut, pk.out, n);
		assert_non_null(dump_unpack(&un, cut, n - 1, out, sizeof(out), &type, &len));
		cut[n] = 0;
		assert_non_null(dump_unpack(&un, cut, n + 1, out, sizeof(out), &type, &len));
	}
	assert_true(packed > 2000);
}

/*
 * A copy of cap with the first PACK frame of inner type inner rewritten
 * by edit (its payload, which it may shorten), CRC made right, as if the
 * kernel had sent it so.  Returns the frame's seq.
 */
static uint32_t rewrite_pack(const struct membuf *cap, uint32_t inner, struct membuf *out,
			     uint32_t (*edit)(uint8_t *payload, uint32_t len))
{
	struct dump_scanner sc = { cap->p, cap->len, 0 };
	struct dump_item it;

	for (dump_scan_next(&sc, &it); it.kind != SCAN_EOF; dump_scan_next(&sc, &it)) {
		static uint8_t pl[DUMP_MAX_PAYLOAD];
		struct dump_frame_header h = it.h;
		uint32_t crc;

		if (it.kind != SCAN_FRAME || h.type != DUMP_FRAME_PACK || it.payload[0] != inner)
			continue;
		memcpy(pl, it.payload, h.len);
		h.len = edit(pl, h.len);
		crc = crc32_update(CRC32_INIT, &h, sizeof(h));
		crc = crc32_final(crc32_update(crc, pl, h.len));
		membuf_write(out, cap->p, it.off);
		membuf_write(out, &h, sizeof(h));
		membuf_write(out, pl, h.len);
		membuf_write(out, &crc, sizeof(crc));
		membuf_write(out, cap->p + it.end, cap->len - it.end);
		return h.seq;
	}
	fail();
	return 0;
}

/* A well-made PACK of a CLOCK frame (all zero), which no packer makes. */
static uint32_t edit_type(uint8_t *p, uint32_t len)
{
	static struct dump_pack pk;
	static const uint8_t clock[sizeof(struct dump_clock)];
	uint32_t n = dump_pack_bytes(&pk, DUMP_FRAME_CLOCK, clock, sizeof(clock));

	(void)len;
	assert_true(n > 0);
	memcpy(p, pk.out, n);
	return n;
}
static uint32_t edit_short(uint8_t *p, uint32_t len) { (void)p; return len - 1; }
static uint32_t edit_long(uint8_t *p, uint32_t len) { p[len] = 0x5a; return len + 1; }
static uint32_t edit_flip(uint8_t *p, uint32_t len) { p[len / 2] ^= 0x10; return len; }

/*
 * PACK frames a kernel cannot have sent, with good CRCs: another inner
 * type, a payload one byte short or long, a flipped bit inside.  Each is
 * reported naming the frame and ignored, END then counting its events as
 * not decoded; every other page decodes.
 */
static void test_pack_refused(void **state)
{
	static const struct {
		uint32_t (*edit)(uint8_t *p, uint32_t len);
		const char *says;
	} cases[] = {
		{ edit_type, "its inner frame is of a type never packed" },
		{ edit_short, "(PACK of type 3)" },
		{ edit_long, "it has bytes after its coded data" },
		{ edit_flip, "(PACK of type 3)" },
	};
	struct sim_cfg cfg = big_cfg;
	struct membuf cap = { 0 };
	struct sim s;
	uint32_t pages = 0, ci, k;

	(void)state;
	sim_run(&s, &cfg);
	sim_capture(&s, 5, &cap);
	for (ci = 0; ci < cfg.nr_cpus; ci++)
		pages += s.cpu[ci].nr_taken;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct membuf bad = { 0 }, text = { 0 }, rep = { 0 };
		struct trace_text_summary sum;
		struct dump_result r;
		void *arena = NULL;
		char want[64];
		uint32_t seq = rewrite_pack(&cap, DUMP_FRAME_PAGE, &bad, cases[k].edit);

		assert_int_equal(sim_decode(&bad, -1, &r, &arena, &text, &rep, NULL, &sum),
				 DUMP_READ_DAMAGED);
		membuf_write(&rep, "", 1);
		snprintf(want, sizeof(want), "frame seq %u (PACK of type ", seq);
		if (k == 0)	/* the type byte was changed: named as it now is */
			snprintf(want, sizeof(want), "frame seq %u (PACK of type 2)", seq);
		assert_non_null(strstr((char *)rep.p, want));
		assert_non_null(strstr((char *)rep.p, cases[k].says));
		assert_non_null(strstr((char *)rep.p, "on pages not decoded"));
		assert_int_equal(r.pages, pages - 1);	/* every other page decoded */
		membuf_free(&bad);
		membuf_free(&text);
		membuf_free(&rep);
		free(arena);
	}
	membuf_free(&cap);
	sim_free(&s);
}

static void test_sizes(void **state)
{
	struct sim s;
	struct sim_cfg cfg = big_cfg;
	struct membuf d = { 0 };
	uint64_t pages = 0, commit = 0, fixed;
	uint32_t ci, i;

	(void)state;
	cfg.odd_events = false;
	cfg.plain = true;
	sim_run(&s, &cfg);
	sim_dump(&s, 5, &d);
	for (ci = 0; ci < 4; ci++)
		for (i = 0; i < s.cpu[ci].nr_taken; i++) {
			pages++;
			commit += ((struct rb_page_header *)s.cpu[ci].taken[i])->commit;
		}
	fixed = (DUMP_FRAME_OVERHEAD + sizeof(struct dump_begin)) +
		4 * (DUMP_FRAME_OVERHEAD + sizeof(struct dump_clock)) +
		4 * (DUMP_FRAME_OVERHEAD + sizeof(struct dump_stats)) +
		(DUMP_FRAME_OVERHEAD + sizeof(struct dump_end));
	assert_int_equal(fixed, 60 + 400 + 976 + 44);
	fixed += events_frames_size(&trace_builtin_catalog);
	assert_int_equal(d.len, fixed + pages * (DUMP_FRAME_OVERHEAD + 32 + 48) + commit);
	assert_int_equal(dump_page_frame_size(4044), 4144);
	membuf_free(&d);
	sim_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32),
		cmocka_unit_test(test_text_exact),
		cmocka_unit_test(test_text_parse_arg),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_selections),
		cmocka_unit_test(test_two_dumps),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_pack_same_text),
		cmocka_unit_test(test_pack_any_page),
		cmocka_unit_test(test_pack_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
