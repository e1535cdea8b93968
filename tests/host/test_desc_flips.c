/*
 * Description frames damaged by bit flips that the CRC cannot see: every
 * bit of every EVENTS, SYMS and PRINTK frame of a capture is flipped in
 * turn and the frame's CRC recomputed, as if the kernel had sent it so,
 * so that only the reader's own rules stand between the damage and the
 * text, CTF and page decoding built on the descriptions.  (A flip the CRC
 * sees is test_dump_damage's.)  For each flip the decoder must
 *   - return OK or DAMAGED, never crash or read out of bounds (ASan/UBSan;
 *     the arena is exactly the size asked for);
 *   - either report the damage, naming the frame's type ("EVENTS frame seq
 *     N: ..."), or accept only what keeps every rule of the format
 *     (tests/host/desc_check.c, written apart from the reader);
 *   - format what it accepted as text and as CTF without failing.
 * The capture comes from a kernel with the extra events (every field
 * kind: tests/host/events_extra.h), a symbol table and trace_printk
 * formats with every argument kind.
 *
 * The length field is not flipped: a frame whose length changes ends
 * somewhere else, so no CRC can be "recomputed" for it without rewriting
 * the next frame; the scan's handling of it is test_dump_damage's.
 *
 * What each check catches (each was run against the deliberate bug in
 * trace/dump_read.c and failed):
 *   - desc_check's field rules: field_rule() without the fixed-part bound
 *     (f->offset + f->size > fixed), or without the integer size check:
 *     a flipped offset or size is accepted ("a field lies outside the
 *     fixed part", "an integer of another size");
 *   - its identifier rule: ident_ok() checking only the first character;
 *   - its symbol order rule: do_syms() without its order check;
 *   - "nothing reported, nothing dropped": do_events() dropping a bad
 *     description without reporting it;
 *   - the formatting of what was accepted: trace/bprint.c parsing a width
 *     of eleven digits from a flipped format ("build 59876543210u" with
 *     its '5' flipped to '%') into an int (UBSan: signed overflow; the bug
 *     this test found, fixed with TRACE_BPRINT_WIDTH_MAX).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctf.h"
#include "desc_check.h"
#include "dump_sim.h"
#include <lib/crc32.h>
#include <trace/dump_read.h>

#define MAX_FRAMES	256
#define TIME_LIMIT_S	180	/* every flip, under ASan: 10-20 s; a hang fails */

/* A description frame of the good capture. */
struct frame {
	size_t off;		/* its magic */
	uint32_t len;		/* its payload */
	uint32_t type;		/* DUMP_FRAME_* */
	uint32_t seq;
};

static struct {
	struct sim s;
	struct membuf cap;		/* the good capture */
	struct frame f[MAX_FRAMES];	/* its description frames */
	uint32_t nf;
	size_t crc_at[MAX_FRAMES];	/* every frame's CRC before END, in order */
	uint32_t ncrc;
	struct frame end;		/* the END frame */
	char ctf_dir[64];		/* CTF output, rewritten for each flip */
	FILE *ctf_err;			/* CTF's messages: discarded */
} fx;

/* A made-up kernel symbol table; the extra events' code addresses fall in it. */
static const uint64_t sym_addrs[] = { 0x200000, 0x200100, 0x200800 };
static const char *const sym_names[] = { "start", "main_loop", "idle.part.0" };
static const struct trace_symtab syms = { sym_addrs, sym_names, 3, 0x200f00 };

/* How much of the descriptions a decode kept. */
struct kept {
	uint32_t events, syms, fmts;
};

/* What one decode gave: counts over all flips. */
struct tally {
	uint32_t flips;		/* decodes made */
	uint32_t reported;	/* DAMAGED, the frame's type named */
	uint32_t accepted;	/* OK: the flip kept every rule */
	uint32_t ctf;		/* CTF written */
};

static void report_line(void *ctx, const char *line)
{
	membuf_puts(ctx, line);
	membuf_puts(ctx, "\n");
}

static void put_crc(uint8_t *cap, const struct frame *f)
{
	uint32_t crc = crc32(cap + f->off, DUMP_HEADER_SIZE + f->len);

	memcpy(cap + f->off + DUMP_HEADER_SIZE + f->len, &crc, 4);
}

/*
 * A frame's CRC made right for its contents, and END's chain of CRCs
 * with it: the capture reads as if the kernel had sent the frame so
 * (its memory damaged), and only the reader's rules can tell.
 */
static void resign(uint8_t *cap, const struct frame *f)
{
	uint32_t chain = CRC32_INIT;

	put_crc(cap, f);
	for (uint32_t i = 0; i < fx.ncrc; i++)
		chain = crc32_update(chain, cap + fx.crc_at[i], 4);
	chain = crc32_final(chain);
	memcpy(cap + fx.end.off + DUMP_HEADER_SIZE + offsetof(struct dump_end, chain), &chain, 4);
	put_crc(cap, &fx.end);
}

/*
 * Decode cap, check what was accepted, format it as text and CTF.
 * Returns the dump_read() result; rep holds the reports (NUL-terminated).
 */
static int decode_check(const uint8_t *cap, size_t len, struct membuf *rep, struct membuf *text,
			bool ctf, const char *what, struct kept *k)
{
	struct dump_read_opts ro = { .which = -1, .report = report_line, .report_ctx = rep };
	struct trace_text_opts all = { .cpu = TRACE_TEXT_ALL_CPUS };
	struct trace_sink sink = { membuf_write, text };
	struct trace_text_summary sum;
	struct trace_text_cpu *tc;
	struct trace_symbols names;
	struct dump_result r;
	void *arena, *scratch;
	char why[160];
	int rc;

	rep->len = text->len = 0;
	rc = dump_read(cap, len, &ro, NULL, 0, &r);
	assert_int_equal(rc, DUMP_READ_ARENA);
	/* Exactly the size asked for: ASan catches any overrun. */
	arena = malloc(r.arena_needed ? r.arena_needed : 1);
	assert_non_null(arena);
	rc = dump_read(cap, len, &ro, arena, r.arena_needed, &r);
	membuf_write(rep, "", 1);
	names = dump_symbols(&r);
	if (rc != DUMP_READ_OK && rc != DUMP_READ_DAMAGED)
		fail_msg("%s: dump_read returned %d", what, rc);
	*k = (struct kept){ 0, r.syms ? r.syms->count : 0, r.nr_fmts };
	for (uint32_t id = 0; r.catalog && id < r.catalog->nr_ids; id++)
		k->events += r.catalog->by_id[id] != NULL;
	if (desc_check(&r, why, sizeof(why)))
		fail_msg("%s: accepted a broken description: %s\nreports:\n%s", what, why,
			 (const char *)rep->p);
	tc = calloc(r.nr_cpus + 1u, sizeof(*tc));
	scratch = malloc(trace_text_scratch_size(r.nr_cpus) + 8);
	assert_non_null(tc);
	assert_non_null(scratch);
	dump_text_cpus(&r, tc);
	all.syms = &names;
	if (trace_text_write(tc, r.nr_cpus, &all, scratch, trace_text_scratch_size(r.nr_cpus),
			     &sink, &sum))
		fail_msg("%s: the text formatter refused the decoded dump", what);
	if (ctf && ctf_write(fx.ctf_dir, &r, fx.ctf_err))
		fail_msg("%s: CTF could not be written", what);
	free(scratch);
	free(tc);
	free(arena);
	return rc;
}

static int setup(void **state)
{
	const struct sim_cfg cfg = {
		.seed = 21, .nr_cpus = 2, .events = 300, .page_size = 2048, .nr_pages = 3,
		.syms = &syms, .printk = true, .extra_events = true,
		.plain = true,	/* the description frames as they are (packed: test_dump.c) */
	};
	size_t p = 0;

	(void)state;
	memset(&fx, 0, sizeof(fx));
	sim_run(&fx.s, &cfg);
	sim_capture(&fx.s, 55, &fx.cap);
	/* Every good frame, walking the capture; the description ones kept. */
	while (p + DUMP_FRAME_OVERHEAD <= fx.cap.len) {
		struct dump_frame_header h;

		if (memcmp(fx.cap.p + p, "\xba" "TR\xce", 4)) {
			p++;
			continue;
		}
		memcpy(&h, fx.cap.p + p, sizeof(h));
		if (h.type == DUMP_FRAME_END)
			fx.end = (struct frame){ p, h.len, h.type, h.seq };
		else if (fx.ncrc < MAX_FRAMES)
			fx.crc_at[fx.ncrc++] = p + DUMP_HEADER_SIZE + h.len;
		if ((h.type == DUMP_FRAME_EVENTS || h.type == DUMP_FRAME_SYMS ||
		     h.type == DUMP_FRAME_PRINTK) && fx.nf < MAX_FRAMES)
			fx.f[fx.nf++] = (struct frame){ p, h.len, h.type, h.seq };
		p += DUMP_FRAME_OVERHEAD + h.len;
	}
	strcpy(fx.ctf_dir, "/tmp/test_desc_flips.XXXXXX");
	if (!mkdtemp(fx.ctf_dir))
		return -1;
	fx.ctf_err = fopen("/dev/null", "w");
	return fx.ctf_err ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx.ctf_dir);
	if (system(cmd))
		return -1;
	fclose(fx.ctf_err);
	membuf_free(&fx.cap);
	sim_free(&fx.s);
	return 0;
}

/* The capture as made: every description there and accepted. */
static void test_intact(void **state)
{
	struct membuf rep = { 0 }, text = { 0 };
	uint32_t types = 0;
	struct kept k;

	(void)state;
	for (uint32_t i = 0; i < fx.nf; i++)
		types |= 1u << fx.f[i].type;
	/* Every event (the extra ones included), one SYMS frame, one PRINTK. */
	assert_int_equal(fx.nf, TEV_MAX - 1 + 2);
	assert_int_equal(types, 1u << DUMP_FRAME_EVENTS | 1u << DUMP_FRAME_SYMS |
				1u << DUMP_FRAME_PRINTK);
	assert_int_equal(decode_check(fx.cap.p, fx.cap.len, &rep, &text, true, "intact", &k),
			 DUMP_READ_OK);
	assert_int_equal(k.events, TEV_MAX - 1);
	assert_int_equal(k.syms, syms.count);
	assert_int_equal(k.fmts, SIM_PRINTK_FMTS);
	assert_true(fx.end.off > 0 && fx.ncrc < MAX_FRAMES);
	/* Not vacuous: the text has each kind the descriptions drive. */
	membuf_write(&text, "", 1);
	if (getenv("SHOW"))
		fputs((char *)text.p, stdout);
	assert_non_null(strstr((char *)text.p, ": mixed: "));
	assert_non_null(strstr((char *)text.p, "fn=main_loop+0x"));
	assert_non_null(strstr((char *)text.p, "state=busy"));
	assert_non_null(strstr((char *)text.p, ": tick "));
	assert_non_null(strstr((char *)text.p, "build 59876543210u: "));
	membuf_free(&rep);
	membuf_free(&text);
}

static const char *type_name(uint32_t type)
{
	return type == DUMP_FRAME_EVENTS ? "EVENTS frame seq " :
	       type == DUMP_FRAME_SYMS ? "SYMS frame seq " : "PRINTK frame seq ";
}

static void test_every_bit(void **state)
{
	struct membuf rep = { 0 }, text = { 0 };
	uint8_t *cap = malloc(fx.cap.len);
	struct tally t = { 0 };
	time_t t0 = time(NULL);
	char what[96];
	struct kept k;

	(void)state;
	assert_non_null(cap);
	memcpy(cap, fx.cap.p, fx.cap.len);
	for (uint32_t i = 0; i < fx.nf; i++) {
		const struct frame *f = &fx.f[i];
		size_t from = f->off + 4, to = f->off + DUMP_HEADER_SIZE + f->len;

		for (size_t b = from; b < to; b++) {
			if (b >= f->off + 8 && b < f->off + 12)
				continue;	/* len: see the head of the file */
			for (unsigned bit = 0; bit < 8; bit++) {
				bool payload = b >= f->off + DUMP_HEADER_SIZE;
				int rc;

				snprintf(what, sizeof(what), "%s%u: byte %zu bit %u",
					 type_name(f->type), f->seq, b - f->off, bit);
				cap[b] ^= (uint8_t)(1u << bit);
				resign(cap, f);
				/* CTF on every 7th flip: the files cost more than the rest. */
				rc = decode_check(cap, fx.cap.len, &rep, &text,
						  t.flips % 7 == 0, what, &k);
				t.ctf += t.flips % 7 == 0;
				t.flips++;
				if (rc == DUMP_READ_OK) {
					/* Nothing reported: nothing dropped either. */
					if (k.events != TEV_MAX - 1 || k.syms != syms.count ||
					    k.fmts != SIM_PRINTK_FMTS)
						fail_msg("%s: no damage reported, but %u events, "
							 "%u symbols, %u formats kept", what,
							 k.events, k.syms, k.fmts);
					t.accepted++;
				} else if (payload) {
					/* Damage inside a description is named as such. */
					if (!strstr((char *)rep.p, type_name(f->type)))
						fail_msg("%s: damage reported, but not as the "
							 "frame's:\n%s", what, (char *)rep.p);
					t.reported++;
				} else {
					t.reported++;
				}
				cap[b] ^= (uint8_t)(1u << bit);
				resign(cap, f);
				if (time(NULL) - t0 > TIME_LIMIT_S)
					fail_msg("%s: over %d s", what, TIME_LIMIT_S);
			}
		}
	}
	printf("# %u flips in %u description frames: %u reported, %u accepted (every rule "
	       "kept), %u also as CTF, %lld s\n", t.flips, fx.nf, t.reported, t.accepted, t.ctf,
	       (long long)(time(NULL) - t0));
	/*
	 * Not vacuous: many flips break a rule, and some keep every one (a
	 * letter of a name or format flipped into another letter).
	 */
	assert_true(t.reported > t.flips / 4);
	assert_true(t.accepted > 0);
	assert_memory_equal(cap, fx.cap.p, fx.cap.len);
	free(cap);
	membuf_free(&rep);
	membuf_free(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intact),
		cmocka_unit_test(test_every_bit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
