/*
 * Saves in TRACE.BIN's data area: where the next one goes, and writing it.
 *
 * The data area holds saves one after another from its first block; each
 * is a mark block followed by the framed binary dump (the bytes `dump bin`
 * sends over serial), padded with zeros to a whole block:
 *
 *   data_lba                                                     file end
 *   | M1 | frames of save 1 ..0 | M2 | frames of save 2 ..0 | Z | 0 ... 0 |
 *
 *   M  mark: one block, its first 64 bytes (little-endian; rest zero)
 *        0  8 magic      "BTSAVE01"
 *        8  4 version    TRACESAVE_VERSION
 *       12  4 seq        1 for the first save, then the previous one's + 1
 *       16  4 dump_id    the dump's id (its frames carry it too)
 *       20  4 block_size the device's, when written
 *       24  8 blocks     blocks of frames after the mark, > 0
 *       32  8 bytes      bytes of frames in them: blocks * block_size -
 *                        bytes < block_size
 *       40 20 reserved   0
 *       60  4 crc        CRC-32 (zlib's) of bytes 0..59
 *   Z  one zero block after the last save, where the data area has room
 *
 * A save writes its frames first, then Z, then its mark: a save exists
 * once its mark does.  The next save's place is found by walking the marks
 * from data_lba (tracesave_scan()): a block that is not a valid mark of a
 * save that fits in the area ends the walk.  So a save cut short (a reset
 * or a fault in the middle) has no mark; the next save is written in its
 * place, and no complete save is ever written over.  The frames need no
 * index to be read: `baretrace-decode TRACE.BIN` scans the file as it
 * scans a serial capture, and the marks and zeros are bytes between dumps.
 *
 * A streaming save (trace.record=usb) does not know its size: its frames
 * are put as the trace is read.  Each time its staging fills, the staged
 * blocks and a zero block after them (Z) go out in one write, then its
 * mark, rewritten with the blocks written so far (a checkpoint).  So a
 * stream cut short is a save up to its last checkpoint (its frames end
 * mid-frame there; the decoder reports the cut and keeps what is whole),
 * and the next save goes after it.  Its end is an ordinary save's end: the
 * rest, Z, the mark with the exact byte count.
 *
 * Every write goes through tracefile_write(): nothing here can reach the
 * header or anything outside the data area.
 */
#ifndef BLOCK_TRACESAVE_H
#define BLOCK_TRACESAVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <block/tracefile.h>

#define TRACESAVE_MAGIC		"BTSAVE01"
#define TRACESAVE_VERSION	1u
#define TRACESAVE_MARK_BYTES	64u

#define TSM_MAGIC		0
#define TSM_VERSION		8
#define TSM_SEQ			12
#define TSM_DUMP_ID		16
#define TSM_BLOCK_SIZE		20
#define TSM_BLOCKS		24
#define TSM_BYTES		32
#define TSM_CRC			60

/* A mark's fields. */
struct tracesave_mark {
	uint32_t seq;		/* 1, 2, ... in the order written */
	uint32_t dump_id;	/* the dump's id */
	uint32_t block_size;	/* the device's */
	uint64_t blocks;	/* blocks of frames after the mark */
	uint64_t bytes;		/* bytes of frames in them */
};

/* Fill buf[0..block_size) with m's mark block. */
void tracesave_mark_make(uint8_t *buf, uint32_t block_size, const struct tracesave_mark *m);
/* Is buf a mark (magic, version, CRC, sizes that agree)?  0 and *m filled, else -1. */
int tracesave_mark_parse(const uint8_t *buf, struct tracesave_mark *m);

/* What a walk of the marks found. */
struct tracesave_scan {
	uint64_t next_lba;	/* where the next save's mark goes */
	uint64_t free_blocks;	/* blocks from next_lba to the data area's end */
	uint32_t saves;		/* complete saves before it */
	uint32_t next_seq;	/* the next save's seq */
	uint64_t used_bytes;	/* frames' bytes in those saves */
};

/*
 * Walk tf's marks (reads only; at most one read per save, bounded by the
 * data area).  buf: one block of scratch.  STICK_OK, or STICK_EREAD.
 */
int tracesave_scan(const struct tracefile *tf, uint8_t *buf, struct tracesave_scan *out);

/* Blocks a save of bytes frames takes: its mark and the frames. */
uint64_t tracesave_blocks(uint32_t block_size, uint64_t bytes);

#define TRACESAVE_EFULL		(-3)	/* the frames outgrew the free blocks */
#define TRACESAVE_EEMPTY	(-4)	/* no frames were put */

/* One save being written: staged whole blocks at a time. */
struct tracesave {
	const struct tracefile *tf;	/* the verified file */
	uint64_t mark_lba;	/* where the mark goes, written last */
	uint64_t lba;		/* next block of frames */
	uint64_t room;		/* blocks of frames the free space allows */
	uint64_t bytes;		/* frames' bytes taken so far */
	uint32_t seq;		/* the mark's */
	uint8_t *buf;		/* staging: buf_blocks whole blocks (the caller's) */
	uint32_t buf_blocks;	/* its size in blocks, >= 1 */
	uint32_t fill;		/* bytes staged in buf */
	int err;		/* the first error (TRACEFILE_E*, TRACESAVE_E*); then no more */
	bool stream;		/* a streaming save: a checkpoint after each flush */
	uint32_t dump_id;	/* a stream's, for its checkpoints */
};

/*
 * Start a save at the place sc found.  buf: buf_bytes of staging, at least
 * one block (whole blocks of it are used).
 */
void tracesave_begin(struct tracesave *s, const struct tracefile *tf,
		     const struct tracesave_scan *sc, uint8_t *buf, uint32_t buf_bytes);
/*
 * Start a streaming save of dump dump_id at the place sc found: as
 * tracesave_begin(), and each flush is followed by a checkpoint.  buf:
 * at least two blocks (one is kept for Z).
 */
void tracesave_begin_stream(struct tracesave *s, const struct tracefile *tf,
			    const struct tracesave_scan *sc, uint8_t *buf, uint32_t buf_bytes,
			    uint32_t dump_id);
/* Bytes that may still be put with room left for tracesave_end(); 0 after an error. */
uint64_t tracesave_free_bytes(const struct tracesave *s);
/* Append len bytes of frames (nothing once s->err is set). */
void tracesave_put(struct tracesave *s, const void *data, size_t len);
/*
 * Write the rest, the zero block after, then the mark.  0, or the first
 * error: then no mark was written and the save does not exist.
 */
int tracesave_end(struct tracesave *s, uint32_t dump_id);

#endif
