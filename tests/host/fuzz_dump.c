/*
 * libFuzzer target: the dump reader and the text formatter on arbitrary
 * captures (`make fuzz`; clang -fsanitize=fuzzer,address,undefined).
 *
 * Input: one mode byte, then the capture.
 *   bit 0  recompute every frame's CRC before decoding: random mutations
 *          then reach the frame contents instead of dying at the CRC check
 *   bit 1  decode the first dump instead of the last
 *   bit 2  text: only the last (mode >> 4) + 1 events
 *   bit 3  text: only CPU 1
 * Seeds are small captures of a simulated machine (mkcapture --seeds, and
 * mkcapture-extra's with events of every field kind, symbols and
 * trace_printk formats).
 *
 * A custom mutator aims at the description frames (EVENTS, SYMS, PRINTK)
 * and PACK frames (what the unpacker reads):
 * most mutations pick one, change its payload (bit flips, a u16 length or
 * count set to an edge value, libFuzzer's own mutations, which may resize
 * it: its header's len follows) and make its CRC right again, so the
 * damage reaches the description parsers and everything built on what
 * they accept, which desc_check() then judges (tests/host/desc_check.h).
 * The rest are libFuzzer's mutations of the whole input, left as they are.
 *
 * Every PACK frame that unpacks is packed again and unpacked: the same
 * inner frame must come back (what the reader accepts, a packer can
 * send, and reads back the same).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lib/crc32.h>
#include <trace/dump_pack.h>
#include <trace/dump_read.h>
#include <trace/text.h>

#include "desc_check.h"

#define FUZZ_ARENA_MAX	(64u << 20)

static size_t text_bytes;	/* keeps the sink from being optimised away */

static void sink_write(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	/* A line is whole and ends in a newline. */
	if (len == 0 || ((const char *)buf)[len - 1] != '\n')
		abort();
	text_bytes += len;
}

static void report(void *ctx, const char *line)
{
	(void)ctx;
	if (strlen(line) >= 320)
		abort();
}

/*
 * The next complete frame (magic, a length that fits) at or after *p in
 * b[0 .. n): its offset, header in *h, *p moved past it; n if none.
 */
static size_t next_frame(const uint8_t *b, size_t n, size_t *p, struct dump_frame_header *h)
{
	while (*p + DUMP_FRAME_OVERHEAD <= n) {
		size_t at = (*p)++;

		if (b[at] != DUMP_MAGIC0 || b[at + 1] != DUMP_MAGIC1 || b[at + 2] != DUMP_MAGIC2 ||
		    b[at + 3] != DUMP_MAGIC3)
			continue;
		memcpy(h, b + at, sizeof(*h));
		if (h->len > DUMP_MAX_PAYLOAD || n - at - DUMP_FRAME_OVERHEAD < h->len)
			continue;
		*p = at + DUMP_FRAME_OVERHEAD + h->len;
		return at;
	}
	return n;
}

/* Make a frame's CRC right for its contents. */
static void put_crc(uint8_t *b, size_t at, uint32_t len)
{
	uint32_t crc = crc32(b + at, DUMP_HEADER_SIZE + len);

	memcpy(b + at + DUMP_HEADER_SIZE + len, &crc, 4);
}

/* Make every complete frame's CRC right, walking frame to frame. */
static void fix_crcs(uint8_t *b, size_t n)
{
	struct dump_frame_header h;
	size_t p = 0, at;

	while ((at = next_frame(b, n, &p, &h)) < n)
		put_crc(b, at, h.len);
}

/* ---- the custom mutator ---- */

#define FUZZ_FRAMES_MAX	256

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)(*s >> 32);
}

/* Offsets of the complete description frames in b[0 .. n), at most max. */
static uint32_t desc_frames(const uint8_t *b, size_t n, size_t *at, uint32_t max)
{
	struct dump_frame_header h;
	size_t p = 0, f;
	uint32_t k = 0;

	while (k < max && (f = next_frame(b, n, &p, &h)) < n)
		if (h.type == DUMP_FRAME_EVENTS || h.type == DUMP_FRAME_SYMS ||
		    h.type == DUMP_FRAME_PRINTK || h.type == DUMP_FRAME_PACK)
			at[k++] = f;
	return k;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	static const uint16_t edges[] = { 0, 1, 2, 3, 4, 7, 8, 9, 63, 64, 127, 128, 255, 256,
					  511, 512, 513, 1023, 1024, 1025, 0x7fff, 0x8000, 0xffff };
	static uint8_t tmp[DUMP_EVENTS_MAX_PAYLOAD];
	uint64_t r = 0x9e3779b97f4a7c15ull ^ seed;
	size_t at[FUZZ_FRAMES_MAX], p, len;
	struct dump_frame_header h;
	uint32_t k, op;
	uint8_t *pl;

	rnd(&r);
	if (size < 2 || rnd(&r) % 4 == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	k = desc_frames(data + 1, size - 1, at, FUZZ_FRAMES_MAX);
	if (k == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	p = 1 + at[rnd(&r) % k];
	memcpy(&h, data + p, sizeof(h));
	pl = data + p + DUMP_HEADER_SIZE;
	len = h.len;
	op = rnd(&r) % 3;
	if (op == 0 && len) {			/* one to four bits */
		for (uint32_t i = 0, n = 1 + rnd(&r) % 4; i < n; i++) {
			uint32_t b = rnd(&r) % (uint32_t)(8 * len);

			pl[b / 8] ^= (uint8_t)(1u << b % 8);
		}
	} else if (op == 1 && len >= 2) {	/* a length, count or offset at an edge */
		uint16_t v = edges[rnd(&r) % (sizeof(edges) / sizeof(edges[0]))];
		size_t o = rnd(&r) % (len - 1);

		memcpy(pl + o, &v, 2);
	} else {				/* libFuzzer's own, in the payload alone */
		size_t room = max_size - size + len, tail = size - (p + DUMP_HEADER_SIZE + len);
		size_t n;

		if (room > sizeof(tmp))
			room = sizeof(tmp);
		if (len > room)
			return LLVMFuzzerMutate(data, size, max_size);
		memcpy(tmp, pl, len);
		n = LLVMFuzzerMutate(tmp, len, room);
		memmove(pl + n, pl + len, tail);
		memcpy(pl, tmp, n);
		size = size - len + n;
		len = n;
		h.len = (uint32_t)len;
		memcpy(data + p, &h, sizeof(h));
	}
	put_crc(data, p, (uint32_t)len);
	return size;
}

/* ---- the target ---- */

/* Each PACK frame of b[0 .. n) that unpacks: packed again, it unpacks the same. */
static void pack_round_trips(const uint8_t *b, size_t n)
{
	static struct dump_pack pk;
	static struct pk_work un;
	static uint8_t inner[DUMP_MAX_PAYLOAD], again[DUMP_MAX_PAYLOAD];
	struct dump_frame_header h;
	size_t p = 0, at;

	while ((at = next_frame(b, n, &p, &h)) < n) {
		uint32_t type, len, type2, len2, m;

		if (h.type != DUMP_FRAME_PACK ||
		    dump_unpack(&un, b + at + DUMP_HEADER_SIZE, h.len, inner, sizeof(inner), &type,
				&len))
			continue;
		if (type == DUMP_FRAME_PAGE) {
			struct dump_page_info info;

			if (len < sizeof(info))
				abort();
			memcpy(&info, inner, sizeof(info));
			m = dump_pack_page(&pk, &info, inner + sizeof(info));
		} else {
			m = dump_pack_bytes(&pk, type, inner, len);
		}
		if (!m)
			continue;	/* it does not pay: a packer would send it plain */
		if (dump_unpack(&un, pk.out, m, again, sizeof(again), &type2, &len2) ||
		    type2 != type || len2 != len || memcmp(again, inner, len))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dump_read_opts ro = { .which = -1, .report = report };
	struct trace_text_opts to = { .cpu = TRACE_TEXT_ALL_CPUS };
	struct trace_sink sink = { sink_write, NULL };
	struct trace_text_summary sum;
	struct trace_text_cpu *tc;
	struct dump_result r;
	uint8_t mode, *cap;
	void *arena, *scratch;
	size_t n;
	int rc;

	if (size < 1)
		return 0;
	mode = data[0];
	n = size - 1;
	cap = malloc(n ? n : 1);
	if (!cap)
		return 0;
	memcpy(cap, data + 1, n);
	if (mode & 1)
		fix_crcs(cap, n);
	if (mode & 2)
		ro.which = 0;
	if (mode & 4)
		to.last = (mode >> 4) + 1u;
	if (mode & 8)
		to.cpu = 1;

	pack_round_trips(cap, n);
	rc = dump_read(cap, n, &ro, NULL, 0, &r);
	if (rc != DUMP_READ_ARENA || r.arena_needed > FUZZ_ARENA_MAX) {
		free(cap);
		return 0;
	}
	arena = malloc(r.arena_needed ? r.arena_needed : 1);
	tc = NULL;
	scratch = NULL;
	if (arena) {
		char why[160];

		rc = dump_read(cap, n, &ro, arena, r.arena_needed, &r);
		if (rc != DUMP_READ_OK && rc != DUMP_READ_DAMAGED)
			abort();
		if (desc_check(&r, why, sizeof(why))) {
			fprintf(stderr, "fuzz_dump: accepted: %s\n", why);
			abort();
		}
		tc = calloc(r.nr_cpus + 1u, sizeof(*tc));
		scratch = malloc(trace_text_scratch_size(r.nr_cpus) + 8);
	}
	if (tc && scratch) {
		struct trace_symbols names = dump_symbols(&r);

		to.syms = &names;
		to.calib = dump_calib(&r);
		to.mark_order = true;
		dump_text_cpus(&r, tc);
		if (trace_text_write(tc, r.nr_cpus, &to, scratch,
				     trace_text_scratch_size(r.nr_cpus), &sink, &sum))
			abort();
		if (sum.printed > sum.events)
			abort();
	}
	free(scratch);
	free(tc);
	free(arena);
	free(cap);
	return 0;
}
