/*
 * Partition tables: the MBR (four primary entries at byte 446 of block 0,
 * signature 0x55AA at byte 510) and the GPT of the UEFI specification
 * (header at LBA 1 behind a protective MBR entry of type 0xEE; both CRCs
 * checked).  grub-mkrescue's hybrid image is a GPT behind a protective MBR.
 * Extended MBR partitions are listed but not followed.
 */
#ifndef BLOCK_PART_H
#define BLOCK_PART_H

#include <stdint.h>
#include <block/blockdev.h>

#define PART_MAX	16	/* entries kept; later ones are ignored */

struct part {
	uint64_t start;		/* first block */
	uint64_t blocks;	/* length in blocks, > 0 */
	uint32_t index;		/* 1-based entry number in its table (sdX<index>) */
	uint8_t mbr_type;	/* MBR system id; 0xEE-less GPT entries: 0 */
	uint8_t gpt_type[16];	/* GPT type GUID as stored; MBR entries: zeros */
};

struct part_table {
	uint32_t n;		/* entries in p[] */
	uint8_t gpt;		/* 1: read from the GPT, 0: from the MBR */
	struct part p[PART_MAX];	/* in table order */
};

/*
 * Read dev's partition table into out.  buf: BLOCK_SIZE_MAX bytes of
 * scratch.  Returns STICK_OK or the STICK_E* reason (<block/stick_err.h>).
 * Every entry returned lies inside the device (and, for a GPT, inside its
 * usable blocks).
 */
int part_read(const struct blockdev *dev, uint8_t *buf, struct part_table *out);

/* Little-endian loads and stores of unaligned bytes (all on-disk formats here). */
static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}
static inline void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

#endif
