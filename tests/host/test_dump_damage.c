/*
 * Damaged captures: truncated at every frame boundary and inside frames,
 * single bits flipped all over, frames missing or repeated, text and
 * garbage between frames, pure noise.  The decoder must keep what is
 * valid, say precisely what it skipped, never claim success, and never
 * crash (this runs under ASan and UBSan).
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
#include <trace/dump_pack.h>
#include <lib/crc32.h>
#include <trace/dump_read.h>

#define MAX_FRAMES	512

/* One frame of a good capture. */
struct frame {
	size_t off;		/* magic */
	size_t end;		/* past the CRC */
	uint32_t type;		/* DUMP_FRAME_* */
	uint32_t entries;	/* PAGE: events on it */
	uint32_t cpu;		/* PAGE: its CPU */
};

/* What one decode gave. */
struct outcome {
	int rc;				/* dump_read() result */
	struct dump_result r;		/* its result */
	struct membuf rep;		/* report lines */
	struct membuf text;		/* text of the decoded dump */
	struct trace_text_summary sum;	/* text summary */
};

struct fixture {
	struct sim s;			/* the machine */
	struct membuf cap;		/* its capture */
	struct membuf text;		/* its text, straight from the buffers */
	struct trace_text_summary sum;	/* and summary */
	struct frame f[MAX_FRAMES];	/* the capture's frames */
	uint32_t nf;			/* how many */
	uint64_t written;		/* events written, all CPUs */
};

static struct fixture fx;

static void report_line(void *ctx, const char *line)
{
	membuf_puts(ctx, line);
	membuf_puts(ctx, "\n");
}

static void decode(const uint8_t *cap, size_t len, struct outcome *o)
{
	struct dump_read_opts ro = { .which = -1, .report = report_line, .report_ctx = &o->rep };
	struct trace_text_opts all = { .cpu = TRACE_TEXT_ALL_CPUS };
	struct trace_sink sink = { membuf_write, &o->text };
	struct trace_text_cpu *tc;
	void *arena, *scratch;

	memset(o, 0, sizeof(*o));
	o->rc = dump_read(cap, len, &ro, NULL, 0, &o->r);
	if (o->rc != DUMP_READ_ARENA) {
		membuf_write(&o->rep, "", 1);	/* NUL-terminate for strstr */
		return;
	}
	/* Exactly the size asked for: ASan catches any overrun. */
	arena = malloc(o->r.arena_needed ? o->r.arena_needed : 1);
	assert_non_null(arena);
	o->rc = dump_read(cap, len, &ro, arena, o->r.arena_needed, &o->r);
	assert_true(o->rc == DUMP_READ_OK || o->rc == DUMP_READ_DAMAGED);
	assert_int_equal(o->rc == DUMP_READ_OK, o->r.problems == 0);
	assert_int_equal(o->rc == DUMP_READ_OK, o->rep.len == 0);
	tc = calloc(o->r.nr_cpus + 1, sizeof(*tc));
	scratch = malloc(trace_text_scratch_size(o->r.nr_cpus) + 8);
	assert_non_null(tc);
	assert_non_null(scratch);
	dump_text_cpus(&o->r, tc);
	assert_int_equal(trace_text_write(tc, o->r.nr_cpus, &all, scratch,
					  trace_text_scratch_size(o->r.nr_cpus), &sink,
					  &o->sum), 0);
	membuf_write(&o->rep, "", 1);	/* NUL-terminate for strstr */
	free(tc);
	free(scratch);
	free(arena);
}

static void outcome_free(struct outcome *o)
{
	membuf_free(&o->rep);
	membuf_free(&o->text);
}

static bool reported(const struct outcome *o, const char *needle)
{
	return o->rep.p && strstr((const char *)o->rep.p, needle) != NULL;
}

/* The fixture's capture in the encoding of the group that runs (both run). */
static bool fx_plain;

static int setup(void **state)
{
	const struct sim_cfg cfg = {
		.seed = 3, .nr_cpus = 3, .events = 6000, .page_size = 2048, .nr_pages = 3,
		.drain_every = 1200,
		.odd_events = true, .plain = fx_plain,
	};
	static uint8_t inner[DUMP_MAX_PAYLOAD];
	static struct pk_work un;
	struct trace_text_opts all = { .cpu = TRACE_TEXT_ALL_CPUS };
	size_t p;
	uint32_t ci;

	(void)state;
	memset(&fx, 0, sizeof(fx));
	sim_run(&fx.s, &cfg);
	sim_capture(&fx.s, 77, &fx.cap);
	assert_int_equal(sim_text(&fx.s, &all, &fx.text, &fx.sum), 0);
	for (ci = 0; ci < cfg.nr_cpus; ci++)
		fx.written += fx.s.cpu[ci].stats.written;

	/* The frames, by walking the good capture's headers. */
	p = (const uint8_t *)memmem(fx.cap.p, fx.cap.len, "\xba" "TR\xce", 4) - fx.cap.p;
	while (p + DUMP_HEADER_SIZE <= fx.cap.len && !memcmp(fx.cap.p + p, "\xba" "TR\xce", 4)) {
		struct dump_frame_header h;
		struct frame *f = &fx.f[fx.nf++];

		assert_true(fx.nf <= MAX_FRAMES);
		memcpy(&h, fx.cap.p + p, sizeof(h));
		f->off = p;
		f->end = p + DUMP_FRAME_OVERHEAD + h.len;
		f->type = h.type;
		const uint8_t *payload = fx.cap.p + p + DUMP_HEADER_SIZE;
		if (h.type == DUMP_FRAME_PACK) {	/* the frame it stands for */
			uint32_t type, len;

			assert_null(dump_unpack(&un, payload, h.len, inner, sizeof(inner), &type,
						&len));
			f->type = type;
			payload = inner;
		}
		if (f->type == DUMP_FRAME_PAGE) {
			struct rb_page_header ph;

			memcpy(&ph, payload + 32, sizeof(ph));
			f->entries = ph.entries;
			f->cpu = ph.cpu;
		}
		p = f->end;
	}
	assert_int_equal(fx.f[fx.nf - 1].type, DUMP_FRAME_END);
	assert_true(fx.nf > 20);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	membuf_free(&fx.cap);
	membuf_free(&fx.text);
	sim_free(&fx.s);
	return 0;
}

/* PAGE frames and their events wholly inside capture[0 .. len). */
static void pages_before(size_t len, uint32_t *pages, uint64_t *events)
{
	uint32_t i;

	*pages = 0;
	*events = 0;
	for (i = 0; i < fx.nf; i++)
		if (fx.f[i].type == DUMP_FRAME_PAGE && fx.f[i].end <= len) {
			(*pages)++;
			*events += fx.f[i].entries;
		}
}

/* ---- tests ---- */

static void test_intact(void **state)
{
	struct outcome o;

	(void)state;
	decode(fx.cap.p, fx.cap.len, &o);
	assert_int_equal(o.rc, DUMP_READ_OK);
	assert_int_equal(o.text.len, fx.text.len);
	assert_memory_equal(o.text.p, fx.text.p, fx.text.len);
	outcome_free(&o);
}

static void test_truncated(void **state)
{
	uint32_t i, k, pages;
	uint64_t events;

	(void)state;
	for (i = 0; i < fx.nf; i++) {
		const struct frame *f = &fx.f[i];
		const size_t cuts[] = { f->off + 3, f->off + 9, (f->off + f->end) / 2,
					f->end - 1, f->end };

		for (k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
			struct outcome o;
			size_t cut = cuts[k];

			decode(fx.cap.p, cut, &o);
			pages_before(cut, &pages, &events);
			if (cut == f->end && f->type == DUMP_FRAME_END) {
				assert_int_equal(o.rc, DUMP_READ_OK);
			} else if (i == 0 && cut < f->end) {
				/* Not even BEGIN: nothing to decode. */
				assert_int_equal(o.rc, DUMP_READ_NOTHING);
				assert_int_equal(cut - f->off >= 16,
						 reported(&o, "capture ends inside frame seq 0 (BEGIN)"));
			} else {
				assert_int_equal(o.rc, DUMP_READ_DAMAGED);
				assert_true(reported(&o, "no END frame: the last frame received is seq"));
				if (cut < f->end && cut - f->off >= 16)
					assert_true(reported(&o, "capture ends inside frame seq"));
				if (cut < f->end && cut - f->off < 16 && cut - f->off >= 4)
					assert_true(reported(&o, "capture ends inside a frame header"));
				assert_int_equal(o.r.pages, pages);
				assert_int_equal(o.sum.events, events);
			}
			outcome_free(&o);
		}
	}
}

/* Bytes to flip: around the dump's ends and one page frame's headers
 * byte by byte, every 29th byte elsewhere. */
static size_t next_flip(size_t off, size_t start, size_t end, const struct frame *pf)
{
	if (off < start + 64 || off + 64 >= end)
		return off + 1;
	if (off >= pf->off && off < pf->off + DUMP_HEADER_SIZE + 32 + RB_PAGE_HEADER_SIZE)
		return off + 1;
	off += 29;
	return off > pf->off && off - 29 < pf->off ? pf->off : off;
}

static void test_bit_flips(void **state)
{
	size_t start = fx.f[0].off, end = fx.f[fx.nf - 1].end, off;
	const struct frame *pf = &fx.f[fx.nf / 2];
	uint8_t *buf;

	/* A page frame near the middle: the frames before them grow with the event list. */
	while (pf < &fx.f[fx.nf - 1] && pf->type != DUMP_FRAME_PAGE)
		pf++;
	buf = malloc(fx.cap.len);
	uint32_t pages_all, tested = 0;
	uint64_t events_all;

	(void)state;
	assert_non_null(buf);
	assert_int_equal(pf->type, DUMP_FRAME_PAGE);
	pages_before(fx.cap.len, &pages_all, &events_all);
	for (off = 0; off < fx.cap.len; off = next_flip(off, start, end, pf)) {
		struct outcome o;
		uint32_t i, hit = 0;

		memcpy(buf, fx.cap.p, fx.cap.len);
		buf[off] ^= (uint8_t)(1u << (off % 8));
		decode(buf, fx.cap.len, &o);
		tested++;
		if (off < start || off >= end) {
			/* Console text around the dump: no harm done. */
			assert_int_equal(o.rc, DUMP_READ_OK);
			outcome_free(&o);
			continue;
		}
		for (i = 0; i < fx.nf; i++)
			if (off >= fx.f[i].off && off < fx.f[i].end)
				hit = i;
		assert_int_equal(o.rc, DUMP_READ_DAMAGED);
		if (hit == 0) {
			/* BEGIN lost: CPUs and page size are guessed; all else kept. */
			assert_true(reported(&o, "no BEGIN frame"));
			assert_int_equal(o.r.pages, pages_all);
			outcome_free(&o);
			continue;
		}
		/* A broken magic turns a frame into debris: seen as a gap in seq,
		 * or for END (nothing follows) as its absence. */
		assert_true(reported(&o, "missing frames seq") || reported(&o, "bad CRC") ||
			    (fx.f[hit].type == DUMP_FRAME_END && reported(&o, "no END frame")));
		/* Every frame but the hit one is used. */
		if (fx.f[hit].type == DUMP_FRAME_PAGE) {
			assert_int_equal(o.r.pages, pages_all - 1);
			assert_int_equal(o.sum.events, events_all - fx.f[hit].entries);
		} else {
			assert_int_equal(o.r.pages, pages_all);
			assert_int_equal(o.sum.events, events_all);
		}
		outcome_free(&o);
	}
	assert_true(tested > (fx_plain ? 1000u : 500u));	/* packed: a third of the bytes */
	free(buf);
}

/* Remove frame i from the capture. */
static void without(uint32_t i, struct membuf *out)
{
	out->len = 0;
	membuf_write(out, fx.cap.p, fx.f[i].off);
	membuf_write(out, fx.cap.p + fx.f[i].end, fx.cap.len - fx.f[i].end);
}

static void test_missing_frames(void **state)
{
	struct membuf m = { 0 };
	uint32_t i, pages_all, seen_page = 0, seen[4] = { 0 };
	uint64_t events_all;
	char want[64];

	(void)state;
	pages_before(fx.cap.len, &pages_all, &events_all);
	for (i = 0; i < fx.nf; i++) {
		const struct frame *f = &fx.f[i];
		struct outcome o;

		without(i, &m);
		decode(m.p, m.len, &o);
		assert_int_equal(o.rc, DUMP_READ_DAMAGED);
		if (f->type == DUMP_FRAME_END) {
			assert_true(reported(&o, "no END frame"));
			outcome_free(&o);
			continue;
		}
		snprintf(want, sizeof(want), "missing frames seq %u..%u", i, i);
		if (i == 0)
			assert_true(reported(&o, "missing frames seq 0..0 (the dump's start"));
		else
			assert_true(reported(&o, want));
		assert_true(reported(&o, "END frame: the dump had"));
		if (f->type == DUMP_FRAME_CLOCK)
			assert_true(reported(&o, "no CLOCK frame"));
		if (f->type == DUMP_FRAME_STATS)
			assert_true(reported(&o, "no STATS frame"));
		if (f->type == DUMP_FRAME_PAGE) {
			assert_int_equal(o.r.pages, pages_all - 1);
			seen_page++;
			/* A page between two others: its events become a LOST count, so
			 * printed + lost still adds up to what was written. */
			if (seen[f->cpu]++ > 0 && i + 1 < fx.nf &&
			    fx.f[i + 1].type == DUMP_FRAME_PAGE && fx.f[i + 1].cpu == f->cpu) {
				assert_true(reported(&o, "are missing from the capture"));
				assert_int_equal(o.sum.printed + o.sum.lost_events, fx.written);
			}
		}
		outcome_free(&o);
	}
	assert_true(seen_page > 10);
	membuf_free(&m);
}

/*
 * Lines of console text between two frames (another CPU's printk during a
 * trace.record=serial stream): no damage, the same text, each line counted.
 */
static void test_console_text(void **state)
{
	static const char line[] = "[   12.000000] smp: cpu=3 printed\r\nshell> \tok\n";
	struct membuf m = { 0 };
	uint32_t i;

	(void)state;
	for (i = 1; i < fx.nf; i += 7) {
		struct outcome o;

		m.len = 0;
		membuf_write(&m, fx.cap.p, fx.f[i].off);
		membuf_write(&m, line, sizeof(line) - 1);
		membuf_write(&m, fx.cap.p + fx.f[i].off, fx.cap.len - fx.f[i].off);
		decode(m.p, m.len, &o);
		assert_int_equal(o.rc, DUMP_READ_OK);
		assert_true(o.r.complete);
		assert_int_equal(o.r.console_lines, 2);
		assert_int_equal(o.text.len, fx.text.len);
		assert_memory_equal(o.text.p, fx.text.p, fx.text.len);
		outcome_free(&o);
	}
	membuf_free(&m);
}

static void test_garbage_between_frames(void **state)
{
	static const struct {
		const char *bytes;	/* inserted */
		size_t len;		/* their length */
		const char *says;	/* part of the report */
	} junk[] = {
#define JUNK(lit, says)	{ lit, sizeof(lit) - 1, says }
		/* Text, but no whole line (console text is: test_console_text). */
		JUNK("\r\n[   12.000000] smp: cpu=3 WARNING: printed in the mid",
		     "bytes of non-frame data inside the dump"),
		JUNK("[   12.000000] smp: cpu=3 \x01 not text\r\n",
		     "bytes of non-frame data inside the dump"),
		JUNK("\xba", "bytes of non-frame data inside the dump"),	/* lone magic byte */
		JUNK("\xba" "TR", "bytes of non-frame data inside the dump"),	/* three of four */
		JUNK("\xba" "TR\xce\x03\x01\x00\x00\xff\xff\xff\xff" "\x00\x00\x00\x00",
		     "header claims a 4294967295-byte payload"),
		JUNK("\xba" "TR\xce\x0c\x01\x00\x00\x18\x00\x00\x00" "\x00\x00\x00\x00",
		     "damaged header (type 12 with a 24-byte payload)"),
		JUNK("\xba" "TR\xce\x05\x01\x2a\x00\x18\x00\x00\x00\x05\x00\x00\x00"
		     "0123456789abcdef01234567" "\x00\x00\x00\x00", "bad CRC"),
#undef JUNK
	};
	struct membuf m = { 0 };
	uint32_t k, i;

	(void)state;
	for (k = 0; k < sizeof(junk) / sizeof(junk[0]); k++) {
		for (i = 1; i < fx.nf; i += 7) {
			struct outcome o;

			m.len = 0;
			membuf_write(&m, fx.cap.p, fx.f[i].off);
			membuf_write(&m, junk[k].bytes, junk[k].len);
			membuf_write(&m, fx.cap.p + fx.f[i].off, fx.cap.len - fx.f[i].off);
			decode(m.p, m.len, &o);
			assert_int_equal(o.rc, DUMP_READ_DAMAGED);
			assert_true(reported(&o, junk[k].says));
			/* Nothing else lost: the text is the same. */
			assert_false(o.r.complete);
			assert_int_equal(o.text.len, fx.text.len);
			assert_memory_equal(o.text.p, fx.text.p, fx.text.len);
			outcome_free(&o);
		}
	}
	membuf_free(&m);
}

/* A complete dump, then the start of another one, cut off. */
static void test_cut_after_dump(void **state)
{
	struct membuf m = { 0 };
	size_t cuts[] = { 20, fx.f[0].end - fx.f[0].off + 30 }, k;

	(void)state;
	for (k = 0; k < 2; k++) {
		struct outcome o;

		m.len = 0;
		membuf_write(&m, fx.cap.p, fx.cap.len);
		membuf_write(&m, fx.cap.p + fx.f[0].off, cuts[k]);
		decode(m.p, m.len, &o);
		if (k == 0) {
			/* Only a partial BEGIN: the complete dump is decoded, with a warning. */
			assert_int_equal(o.r.nr_dumps, 1);
			assert_int_equal(o.rc, DUMP_READ_DAMAGED);
			assert_true(reported(&o, "damaged frames follow the dump"));
			assert_true(reported(&o, "capture ends inside frame seq 0 (BEGIN)"));
			assert_int_equal(o.text.len, fx.text.len);
		} else {
			/* BEGIN arrived: the second, cut dump is the last one. */
			assert_int_equal(o.r.nr_dumps, 2);
			assert_int_equal(o.rc, DUMP_READ_DAMAGED);
			assert_true(reported(&o, fx_plain ?
					     "capture ends inside frame seq 1 (EVENTS)" :
					     "capture ends inside frame seq 1 (PACK)"));
		}
		outcome_free(&o);
	}
	membuf_free(&m);
}

static void test_repeated_frame(void **state)
{
	struct membuf m = { 0 };
	struct outcome o;
	uint32_t i = 9;

	(void)state;
	membuf_write(&m, fx.cap.p, fx.f[i].end);
	membuf_write(&m, fx.cap.p + fx.f[i].off, fx.f[i].end - fx.f[i].off);
	membuf_write(&m, fx.cap.p + fx.f[i].end, fx.cap.len - fx.f[i].end);
	decode(m.p, m.len, &o);
	assert_int_equal(o.rc, DUMP_READ_DAMAGED);
	assert_true(reported(&o, "repeats or goes back"));
	assert_int_equal(o.text.len, fx.text.len);
	assert_memory_equal(o.text.p, fx.text.p, fx.text.len);
	outcome_free(&o);
	membuf_free(&m);
}

/* Frames that check out but say nonsense, CRC recomputed. */
static void test_lying_frames(void **state)
{
	struct membuf m = { 0 };
	uint32_t i, k;

	(void)state;
	for (i = 0; i < fx.nf; i++) {
		for (k = 0; k < 6; k++) {
			const struct frame *f = &fx.f[i];
			size_t plen = f->end - f->off - DUMP_FRAME_OVERHEAD;
			uint8_t *pl;
			uint32_t crc;
			struct outcome o;

			m.len = 0;
			membuf_write(&m, fx.cap.p, fx.cap.len);
			pl = m.p + f->off + DUMP_HEADER_SIZE;
			switch (k) {
			case 0: pl[0] ^= 0xff; break;			/* cpu / version */
			case 1: pl[plen / 2] ^= 0x10; break;		/* somewhere inside */
			case 2: memset(pl, 0xff, plen < 8 ? plen : 8); break;
			case 3: memset(pl + plen - 4, 0xff, 4); break;
			case 4: if (plen > 80) pl[32 + 32] ^= 0x04; break;	/* PAGE: commit */
			default: if (plen > 80) pl[32 + 47] ^= 0x80; break;	/* PAGE: flags */
			}
			crc = crc32(m.p + f->off, DUMP_HEADER_SIZE + plen);
			memcpy(pl + plen, &crc, 4);
			decode(m.p, m.len, &o);
			/* Anything may be reported; nothing may crash. */
			assert_true(o.rc == DUMP_READ_OK || o.rc == DUMP_READ_DAMAGED);
			outcome_free(&o);
		}
	}
	membuf_free(&m);
}

static void test_noise(void **state)
{
	uint8_t *buf = malloc(1 << 16);
	uint64_t x = 88172645463325252ull;
	uint32_t round, i;

	(void)state;
	assert_non_null(buf);
	for (round = 0; round < 200; round++) {
		struct outcome o;
		size_t len = (round * 331u) % (1 << 16);

		for (i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (uint8_t)x;
			/* Sprinkle magics so that headers get parsed. */
			if (i >= 3 && (x & 0xff00) == 0)
				memcpy(buf + i - 3, "\xba" "TR\xce", 4);
		}
		decode(buf, len, &o);
		assert_true(o.rc == DUMP_READ_NOTHING || o.rc == DUMP_READ_DAMAGED ||
			    o.rc == DUMP_READ_OK);
		outcome_free(&o);
	}
	{
		struct outcome o;

		decode((const uint8_t *)"plain console text\r\n", 20, &o);
		assert_int_equal(o.rc, DUMP_READ_NOTHING);
		assert_int_equal(o.r.problems, 0);
		outcome_free(&o);
		decode(NULL, 0, &o);
		assert_int_equal(o.rc, DUMP_READ_NOTHING);
		outcome_free(&o);
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intact),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_missing_frames),
		cmocka_unit_test(test_garbage_between_frames),
		cmocka_unit_test(test_console_text),
		cmocka_unit_test(test_cut_after_dump),
		cmocka_unit_test(test_repeated_frame),
		cmocka_unit_test(test_lying_frames),
		cmocka_unit_test(test_noise),
	};

	int failed;

	fx_plain = true;
	failed = cmocka_run_group_tests_name("plain frames", tests, setup, teardown);
	fx_plain = false;
	return failed + cmocka_run_group_tests_name("PACK frames", tests, setup, teardown);
}
