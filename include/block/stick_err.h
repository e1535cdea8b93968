/*
 * Why a device was not taken as a baretrace stick: one code per reason, each
 * with the line that says it (docs/usb.md lists them).  An X-macro, so the
 * enum and the texts cannot drift apart.
 */
#ifndef BLOCK_STICK_ERR_H
#define BLOCK_STICK_ERR_H

#define STICK_ERRORS(X) \
	X(STICK_OK,			"a baretrace trace file") \
	X(STICK_EBLOCKSIZE,		"unsupported block size") \
	X(STICK_EREAD,			"a read failed") \
	X(STICK_ENOTABLE,		"no partition table (no 0x55AA signature in block 0)") \
	X(STICK_EMBR_ENTRY,		"an MBR partition lies outside the disk") \
	X(STICK_EGPT_HEADER,		"the GPT header is malformed") \
	X(STICK_EGPT_CRC,		"the GPT header's CRC is wrong") \
	X(STICK_EGPT_ENTRIES,		"the GPT partition array is malformed or outside the disk") \
	X(STICK_EGPT_ARRAY_CRC,		"the GPT partition array's CRC is wrong") \
	X(STICK_EGPT_ENTRY,		"a GPT partition lies outside the usable blocks") \
	X(STICK_ENOLABEL,		"no FAT32 partition labelled BARETRACE") \
	X(STICK_EOVERLAP,		"the BARETRACE partition overlaps another partition") \
	X(STICK_EBPB,			"the BARETRACE partition's FAT32 boot sector is malformed") \
	X(STICK_ENOTFAT32,		"the BARETRACE partition is FAT12/16, not FAT32") \
	X(STICK_EFS_SIZE,		"the BARETRACE file system is larger than its partition") \
	X(STICK_EDIR_CHAIN,		"the root directory's cluster chain leaves the file system") \
	X(STICK_EDIR_LOOP,		"the root directory's cluster chain loops") \
	X(STICK_ENOFILE,		"no TRACE.BIN in the BARETRACE partition") \
	X(STICK_EDUPFILE,		"more than one TRACE.BIN") \
	X(STICK_EFILE_CLUSTER,		"TRACE.BIN's first cluster is outside the file system") \
	X(STICK_EFILE_SIZE,		"TRACE.BIN is too small or not a whole number of blocks") \
	X(STICK_EFILE_FRAGMENTED,	"TRACE.BIN is fragmented (its clusters are not consecutive)") \
	X(STICK_EFILE_CHAIN,		"TRACE.BIN's cluster chain leaves the file system or hits a free or bad cluster") \
	X(STICK_EFILE_SHORT,		"TRACE.BIN's cluster chain is shorter than its size") \
	X(STICK_EFILE_LONG,		"TRACE.BIN's cluster chain is longer than its size") \
	X(STICK_EHDR_MAGIC,		"TRACE.BIN has no baretrace header (foreign file)") \
	X(STICK_EHDR_VERSION,		"TRACE.BIN's header is of an unknown version") \
	X(STICK_EHDR_CRC,		"TRACE.BIN's header CRC is wrong") \
	X(STICK_EHDR_LAYOUT,		"TRACE.BIN's header gives a data offset that does not fit the file") \
	X(STICK_EHDR_SIZE,		"TRACE.BIN's size differs from the size its header says")

#define STICK_ERR_ENUM(name, text) name,
enum stick_err { STICK_ERRORS(STICK_ERR_ENUM) STICK_ERR_COUNT };
#undef STICK_ERR_ENUM

/* The reason's text; never NULL. */
const char *stick_strerror(int err);

#endif
