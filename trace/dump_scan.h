/*
 * Finding frames in a capture, and dumps among them: the first two layers
 * of the dump reader (trace/dump_read.c has the design notes).  Private to
 * the reader.
 */
#ifndef TRACE_DUMP_SCAN_H
#define TRACE_DUMP_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trace/dump_format.h>

enum scan_kind {
	SCAN_EOF = 0,
	SCAN_FRAME,		/* a good frame */
	SCAN_BAD,		/* magic, then something wrong */
	SCAN_GAP,		/* bytes that are no frame */
};

enum bad_reason {
	BAD_CRC = 1,		/* the CRC does not match */
	BAD_LENGTH,		/* the header claims more than any frame holds */
	BAD_TRUNCATED,		/* the frame runs past the end of the capture */
	BAD_SHORT_HEADER,	/* the capture ends inside the header */
	BAD_VERSION,		/* good CRC, unknown frame layout */
	BAD_HEADER,		/* this version has no such type or length */
};

struct dump_item {
	uint32_t kind;			/* enum scan_kind */
	uint32_t reason;		/* SCAN_BAD: enum bad_reason */
	size_t off;			/* first byte */
	size_t end;			/* past the last byte (BAD: off + 1) */
	struct dump_frame_header h;	/* FRAME, and BAD past its header */
	const uint8_t *payload;		/* FRAME: h.len bytes */
	uint32_t crc;			/* FRAME, BAD_CRC: the stored CRC */
	uint32_t crc_calc;		/* BAD_CRC: the computed one */
};

struct dump_scanner {
	const uint8_t *buf;		/* the capture */
	size_t len;			/* its length */
	size_t pos;			/* where the next item starts */
};

/*
 * The next item from s->pos on: a frame, a bad frame (resume one byte
 * after its magic) or a gap up to the next magic; SCAN_EOF at the end.
 */
/* Can a header of this version have this type and length?  (A PACK's inner frame too.) */
bool dump_header_plausible(const struct dump_frame_header *h);

void dump_scan_next(struct dump_scanner *s, struct dump_item *it);

struct dump_segmenter {
	int32_t which;			/* dump wanted, -1 = last */
	uint32_t nr_dumps;		/* dumps started so far */
	bool open;			/* a dump is open (no END yet) */
	uint16_t id;			/* its id */
	size_t cur_start, cur_end;	/* its range so far */
	bool pending;			/* bad frames wait for the next dump */
	size_t pending_off;		/* the first of them */
	bool found;			/* the wanted dump was seen */
	size_t sel_start, sel_end;	/* its range */
	uint16_t sel_id;		/* its id */
};

/*
 * Group the frames of buf into dumps: count them and find the byte range
 * of the one g->which asks for (set which, zero the rest, before).
 */
void dump_segment(const uint8_t *buf, size_t len, struct dump_segmenter *g);

#endif
