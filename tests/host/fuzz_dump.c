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
 * Seeds are small captures of a simulated machine (mkcapture --seeds).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <trace/crc32.h>
#include <trace/dump_read.h>
#include <trace/text.h>

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

/* Make every complete frame's CRC right, walking frame to frame. */
static void fix_crcs(uint8_t *b, size_t n)
{
	size_t p = 0;

	while (p + DUMP_FRAME_OVERHEAD <= n) {
		struct dump_frame_header h;
		uint32_t crc;

		if (b[p] != DUMP_MAGIC0 || b[p + 1] != DUMP_MAGIC1 || b[p + 2] != DUMP_MAGIC2 ||
		    b[p + 3] != DUMP_MAGIC3) {
			p++;
			continue;
		}
		memcpy(&h, b + p, sizeof(h));
		if (h.len > DUMP_MAX_PAYLOAD || n - p - DUMP_FRAME_OVERHEAD < h.len) {
			p++;
			continue;
		}
		crc = crc32(b + p, DUMP_HEADER_SIZE + h.len);
		memcpy(b + p + DUMP_HEADER_SIZE + h.len, &crc, 4);
		p += DUMP_FRAME_OVERHEAD + h.len;
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

	rc = dump_read(cap, n, &ro, NULL, 0, &r);
	if (rc != DUMP_READ_ARENA || r.arena_needed > FUZZ_ARENA_MAX) {
		free(cap);
		return 0;
	}
	arena = malloc(r.arena_needed ? r.arena_needed : 1);
	tc = NULL;
	scratch = NULL;
	if (arena) {
		rc = dump_read(cap, n, &ro, arena, r.arena_needed, &r);
		if (rc != DUMP_READ_OK && rc != DUMP_READ_DAMAGED)
			abort();
		tc = calloc(r.nr_cpus + 1u, sizeof(*tc));
		scratch = malloc(trace_text_scratch_size(r.nr_cpus) + 8);
	}
	if (tc && scratch) {
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
