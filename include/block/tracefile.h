/*
 * TRACE.BIN, the trace file on a baretrace stick, and the one decision
 * that guards the user's disks: where the kernel may write.
 *
 * The file (preallocated by `make usb-image`, contiguous) starts with a
 * header of TRACEFILE_HDR_BYTES; the data area is the rest.  Layout of the
 * header's first 512 bytes, little-endian (docs/usb.md):
 *
 *   off size field
 *     0    8 magic         "BTRACEF1"
 *     8    4 version       TRACEFILE_VERSION
 *    12    4 data_offset   bytes before the data area (4096: whole blocks
 *                          of 512 and 4096 bytes)
 *    16    8 file_bytes    the file's size, as made; must equal its
 *                          directory entry's size
 *    24   20 build_id      the kernel's GNU build id (the image's identity)
 *    44    4 reserved      0
 *    48   32 version_str   `git describe` of the image, NUL-padded
 *    80  428 reserved      0
 *   508    4 crc           CRC-32 (zlib's) of bytes 0..507
 *
 * The rest of the first data_offset bytes is zero when made and is never
 * written by the kernel.
 */
#ifndef BLOCK_TRACEFILE_H
#define BLOCK_TRACEFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <block/blockdev.h>
#include <block/fat32.h>
#include <block/part.h>

#define TRACEFILE_MAGIC		"BTRACEF1"	/* 8 bytes, no NUL on disk */
#define TRACEFILE_VERSION	1u
#define TRACEFILE_HDR_BYTES	4096u
#define TRACEFILE_HDR_USED	512u		/* bytes the CRC covers, with it */
#define TRACEFILE_NAME83	"TRACE   BIN"
#define TRACEFILE_LABEL		"BARETRACE  "	/* the BPB's 11-byte volume label */
#define TRACEFILE_BUILD_ID_LEN	20u
#define TRACEFILE_VERSION_LEN	32u

#define TFH_MAGIC		0
#define TFH_VERSION		8
#define TFH_DATA_OFFSET		12
#define TFH_FILE_BYTES		16
#define TFH_BUILD_ID		24
#define TFH_VERSION_STR		48
#define TFH_CRC			508

struct tracefile_hdr {
	uint32_t version;	/* TRACEFILE_VERSION */
	uint32_t data_offset;	/* bytes of header before the data area */
	uint64_t file_bytes;	/* the file's size as made */
	uint8_t build_id[TRACEFILE_BUILD_ID_LEN];	/* the image's kernel build id */
	char version_str[TRACEFILE_VERSION_LEN + 1];	/* NUL-terminated */
};

/* Fill buf[0..TRACEFILE_HDR_BYTES) with the header of h (host tools). */
void tracefile_hdr_make(uint8_t *buf, const struct tracefile_hdr *h);

/*
 * Check the first 512 bytes of a file of file_bytes bytes, read from a
 * device of block_size bytes a block.  STICK_OK and *h filled, or
 * STICK_EHDR_MAGIC, _VERSION, _CRC, _LAYOUT, _SIZE.
 */
int tracefile_hdr_check(const uint8_t *buf, uint64_t file_bytes, uint32_t block_size,
			struct tracefile_hdr *h);

/* A trace file found and verified: the only blocks the kernel may write. */
struct tracefile {
	uint32_t verified;	/* TRACEFILE_VERIFIED once every check passed; else 0 */
	const struct blockdev *dev;	/* the device it was found on */
	uint32_t block_size;	/* the device's */
	uint32_t part_index;	/* its partition's entry number (1-based) */
	uint8_t part_gpt;	/* that entry is in a GPT (else the MBR) */
	uint64_t part_start;	/* its partition's first block */
	uint64_t part_blocks;	/* and length */
	uint64_t file_lba;	/* the file's first block: the header */
	uint64_t data_lba;	/* first block of the data area */
	uint64_t data_blocks;	/* blocks in the data area */
	struct tracefile_hdr hdr;	/* the header as read */
};

#define TRACEFILE_VERIFIED	0x7ACEF11Eu

/* Scratch for stick_find(): the kernel keeps one static, the host on the stack. */
struct stick_scratch {
	uint8_t buf[BLOCK_SIZE_MAX];	/* one block */
	struct part_table parts;	/* the device's table */
	struct fat32 fs;		/* the candidate partition */
};

/*
 * Look on dev for a partition whose FAT32 label is BARETRACE and, in its
 * root directory, a contiguous TRACE.BIN with a valid header.  STICK_OK and
 * *tf filled (verified), else the STICK_E* reason and *tf zeroed.  Reads
 * only.  The first partition labelled BARETRACE decides.
 */
int stick_find(const struct blockdev *dev, struct stick_scratch *s, struct tracefile *tf);

/*
 * May count blocks be written at lba?  True only if tf was verified by
 * stick_find() and [lba, lba + count) lies inside its data area (never the
 * header, never outside the file).  count 0 is refused.
 */
bool tracefile_write_ok(const struct tracefile *tf, uint64_t lba, uint64_t count);

/*
 * The one way to write: count blocks of buf at lba on tf's device, if
 * tracefile_write_ok() says yes.  0 written; TRACEFILE_EREFUSED (nothing
 * was sent to the device: a caller's bug); TRACEFILE_EIO (the device
 * failed; what it holds there is unknown).
 */
#define TRACEFILE_EREFUSED	(-1)
#define TRACEFILE_EIO		(-2)
int tracefile_write(const struct tracefile *tf, uint64_t lba, uint32_t count, const void *buf);

#endif
