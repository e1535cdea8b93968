/*
 * repack: a capture's dumps written again, every frame through the dump
 * writer, in the compact encoding (PACK frames) or, with --plain, in the
 * plain one.  The same buffers in both encodings: what the tests compare
 * (decoded text byte for byte) and what docs/benchmarks.md measures
 * (bytes per event).  Frames are taken as they are (only good ones: the
 * scanner's); END is made anew with its counts and chain, its cut flag kept.
 *
 *   repack IN OUT [--plain]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trace/dump_write.h>

#include "dump_scan.h"

static void sink_file(void *ctx, const void *buf, size_t len)
{
	fwrite(buf, 1, len, ctx);
}

static struct dump_pack pack;

int main(int argc, char **argv)
{
	struct dump_writer w = { 0 };
	struct dump_scanner s;
	struct dump_item it;
	struct trace_sink sink;
	bool plain = argc == 4 && !strcmp(argv[3], "--plain"), open_ = false;
	FILE *in, *out;
	uint8_t *buf;
	long len;

	if (argc != 3 && !(argc == 4 && plain)) {
		fprintf(stderr, "usage: repack IN OUT [--plain]\n");
		return 2;
	}
	if (!(in = fopen(argv[1], "rb")) || fseek(in, 0, SEEK_END) || (len = ftell(in)) < 0 ||
	    fseek(in, 0, SEEK_SET) || !(buf = malloc((size_t)len + 1)) ||
	    fread(buf, 1, (size_t)len, in) != (size_t)len || !(out = fopen(argv[2], "wb"))) {
		perror("repack");
		return 2;
	}
	sink = (struct trace_sink){ sink_file, out };
	s = (struct dump_scanner){ buf, (size_t)len, 0 };
	for (dump_scan_next(&s, &it); it.kind != SCAN_EOF; dump_scan_next(&s, &it)) {
		if (it.kind != SCAN_FRAME)
			continue;
		if (it.h.type == DUMP_FRAME_BEGIN) {
			struct dump_begin b;

			memcpy(&b, it.payload, sizeof(b));
			dump_write_begin(&w, &sink, it.h.dump_id, &b);
			w.pack = plain ? NULL : &pack;
			open_ = true;
		} else if (!open_) {
			continue;
		} else if (it.h.type == DUMP_FRAME_END) {
			struct dump_end e;

			memcpy(&e, it.payload, sizeof(e));
			w.cut = e.flags & DUMP_END_CUT;
			dump_write_end(&w);
			open_ = false;
		} else if (it.h.type == DUMP_FRAME_PACK) {
			static uint8_t inner[DUMP_MAX_PAYLOAD];
			static struct pk_work pw;
			uint32_t type, n;

			if (dump_unpack(&pw, it.payload, it.h.len, inner, sizeof(inner), &type, &n))
				return fprintf(stderr, "repack: a PACK frame does not unpack\n"), 1;
			dump_write_frame(&w, type, inner, n);
		} else {
			dump_write_frame(&w, it.h.type, it.payload, it.h.len);
		}
	}
	free(buf);
	fclose(in);
	return fclose(out) ? 2 : 0;
}
