/*
 * MBR and GPT partition tables, read-only, every field checked before use.
 *
 * Facts (MBR layout; UEFI specification 2.x, "GUID Partition Table"):
 * - Block 0 ends with 0x55 0xAA at byte 510.  Four 16-byte entries start at
 *   byte 446: boot flag, CHS start, system id (byte 4), CHS end, LBA start
 *   (u32 at 8), block count (u32 at 12).
 * - An entry of system id 0xEE is the protective MBR of a GPT.  The GPT
 *   header at LBA 1: "EFI PART", revision, header size (92..block size),
 *   header CRC32 (over header size bytes with this field zeroed), MyLBA (1),
 *   AlternateLBA, FirstUsableLBA, LastUsableLBA, disk GUID, the entry array's
 *   LBA, entry count, entry size (128 << n) and the array's CRC32.  An entry:
 *   type GUID (all zero: unused), unique GUID, StartingLBA, EndingLBA
 *   (inclusive), attributes, name.
 * Only the primary GPT is read; a damaged primary is refused, not repaired
 * from the backup (the stick is then not written; the user rewrites it).
 */
#include <stddef.h>
#include <block/part.h>
#include <block/stick_err.h>
#include <lib/crc32.h>

#define MBR_SIG_OFF		510
#define MBR_ENTRIES_OFF		446
#define MBR_ENTRY_SIZE		16
#define MBR_TYPE_GPT		0xEE

#define GPT_HDR_MIN		92
#define GPT_REVISION_1		0x00010000u
#define GPT_ENTRY_MIN		128
#define GPT_ARRAY_MAX		(1u << 20)	/* bytes: 8192 entries of 128 */

#define GPT_OFF_REVISION	8
#define GPT_OFF_HDR_SIZE	12
#define GPT_OFF_HDR_CRC		16
#define GPT_OFF_MY_LBA		24
#define GPT_OFF_FIRST_USABLE	40
#define GPT_OFF_LAST_USABLE	48
#define GPT_OFF_ARRAY_LBA	72
#define GPT_OFF_N_ENTRIES	80
#define GPT_OFF_ENTRY_SIZE	84
#define GPT_OFF_ARRAY_CRC	88

#define GPTE_OFF_START		32
#define GPTE_OFF_END		40

static int read_block(const struct blockdev *dev, uint64_t lba, uint8_t *buf)
{
	if (lba >= dev->blocks)
		return STICK_EREAD;
	return dev->read(dev->ctx, lba, 1, buf) ? STICK_EREAD : STICK_OK;
}

static int mbr_parse(const struct blockdev *dev, const uint8_t *b0, struct part_table *out)
{
	for (uint32_t i = 0; i < 4; i++) {
		const uint8_t *e = b0 + MBR_ENTRIES_OFF + i * MBR_ENTRY_SIZE;
		uint64_t start = get_le32(e + 8), n = get_le32(e + 12);
		struct part *p;

		if (e[4] == 0 || n == 0)
			continue;	/* unused entry */
		if (start == 0 || start >= dev->blocks || n > dev->blocks - start)
			return STICK_EMBR_ENTRY;
		p = &out->p[out->n++];
		p->start = start;
		p->blocks = n;
		p->index = i + 1;
		p->mbr_type = e[4];
	}
	return STICK_OK;
}

static int gpt_parse(const struct blockdev *dev, uint8_t *buf, struct part_table *out)
{
	static const uint8_t sig[8] = { 'E', 'F', 'I', ' ', 'P', 'A', 'R', 'T' };
	uint32_t hsize, crc, n, esize, bs = dev->block_size;
	uint64_t first, last, array, array_blocks;
	uint32_t acrc, crc_acc = CRC32_INIT;
	int err;

	if ((err = read_block(dev, 1, buf)))
		return err;
	for (int i = 0; i < 8; i++)
		if (buf[i] != sig[i])
			return STICK_EGPT_HEADER;
	hsize = get_le32(buf + GPT_OFF_HDR_SIZE);
	if (get_le32(buf + GPT_OFF_REVISION) != GPT_REVISION_1 || hsize < GPT_HDR_MIN || hsize > bs ||
	    get_le64(buf + GPT_OFF_MY_LBA) != 1)
		return STICK_EGPT_HEADER;
	crc = get_le32(buf + GPT_OFF_HDR_CRC);
	for (int i = 0; i < 4; i++)
		buf[GPT_OFF_HDR_CRC + i] = 0;
	if (crc32(buf, hsize) != crc)
		return STICK_EGPT_CRC;

	first = get_le64(buf + GPT_OFF_FIRST_USABLE);
	last = get_le64(buf + GPT_OFF_LAST_USABLE);
	if (first < 2 || first > last || last >= dev->blocks)
		return STICK_EGPT_HEADER;
	array = get_le64(buf + GPT_OFF_ARRAY_LBA);
	n = get_le32(buf + GPT_OFF_N_ENTRIES);
	esize = get_le32(buf + GPT_OFF_ENTRY_SIZE);
	acrc = get_le32(buf + GPT_OFF_ARRAY_CRC);
	/* 128 << k, and a whole number of entries per block. */
	if (esize < GPT_ENTRY_MIN || (esize & (esize - 1)) || esize > bs || n == 0 ||
	    n > GPT_ARRAY_MAX / esize)
		return STICK_EGPT_ENTRIES;
	array_blocks = ((uint64_t)n * esize + bs - 1) / bs;
	if (array < 2 || array >= dev->blocks || array_blocks > dev->blocks - array)
		return STICK_EGPT_ENTRIES;

	/* Bound: array_blocks <= GPT_ARRAY_MAX / 512. */
	for (uint64_t b = 0; b < array_blocks; b++) {
		uint32_t per = bs / esize;

		if ((err = read_block(dev, array + b, buf)))
			return err;
		for (uint32_t k = 0; k < per; k++) {
			uint64_t idx = b * per + k;
			const uint8_t *e = buf + k * esize;
			uint64_t s, end;
			int used = 0;
			struct part *p;

			if (idx >= n)
				break;
			crc_acc = crc32_update(crc_acc, e, esize);
			for (int i = 0; i < 16; i++)
				used |= e[i];
			if (!used || out->n == PART_MAX)
				continue;
			s = get_le64(e + GPTE_OFF_START);
			end = get_le64(e + GPTE_OFF_END);
			if (s < first || s > end || end > last)
				return STICK_EGPT_ENTRY;
			p = &out->p[out->n++];
			p->start = s;
			p->blocks = end - s + 1;
			p->index = (uint32_t)idx + 1;
			for (int i = 0; i < 16; i++)
				p->gpt_type[i] = e[i];
		}
	}
	if (crc32_final(crc_acc) != acrc)
		return STICK_EGPT_ARRAY_CRC;
	out->gpt = 1;
	return STICK_OK;
}

int part_read(const struct blockdev *dev, uint8_t *buf, struct part_table *out)
{
	int err;

	out->n = 0;
	out->gpt = 0;
	if (dev->block_size < 512 || dev->block_size > BLOCK_SIZE_MAX ||
	    (dev->block_size & (dev->block_size - 1)))
		return STICK_EBLOCKSIZE;
	if ((err = read_block(dev, 0, buf)))
		return err;
	if (buf[MBR_SIG_OFF] != 0x55 || buf[MBR_SIG_OFF + 1] != 0xAA)
		return STICK_ENOTABLE;
	for (uint32_t i = 0; i < 4; i++)
		if (buf[MBR_ENTRIES_OFF + i * MBR_ENTRY_SIZE + 4] == MBR_TYPE_GPT) {
			err = gpt_parse(dev, buf, out);
			if (err)
				out->n = 0;
			return err;
		}
	err = mbr_parse(dev, buf, out);
	if (err)
		out->n = 0;
	return err;
}
