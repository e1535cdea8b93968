/*
 * libFuzzer on stick_find() and tracefile_write_ok(): the input is a sparse
 * disk of 512-byte blocks (blocks not given read as zeros):
 *
 *   u8 flags   bit 0: recompute the GPT's CRCs, bit 1: the trace header's,
 *              after the input is laid out (so that mutations get past
 *              the CRCs to the fields behind them)
 *   u32 blocks the device's size (1 .. 2^24)
 *   then records of { u32 lba; u8 block[512]; } (later ones win)
 *
 * Seeds are sticks made by mkfs.fat, sfdisk and mtools
 * (tests/host/fuzz_block_seeds.sh).  What it checks: no read outside the
 * device (abort), no undefined behaviour or bad access (ASan/UBSan); a
 * refusal leaves nothing writable; a stick found has its data area inside
 * its partition and after its header, and the write decision allows that
 * area and nothing next to it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <block/part.h>
#include <block/stick_err.h>
#include <block/tracefile.h>
#include <lib/crc32.h>

#define BS		512u
#define MAX_RECS	256u

struct sparse {
	uint64_t blocks;
	uint32_t n;
	uint32_t lba[MAX_RECS];
	uint8_t data[MAX_RECS][BS];
};

static struct sparse disk;

static uint8_t *find_rec(uint64_t lba)
{
	for (uint32_t i = disk.n; i-- > 0;)
		if (disk.lba[i] == lba)
			return disk.data[i];
	return NULL;
}

static int sparse_read(void *ctx, uint64_t lba, uint32_t count, void *buf)
{
	(void)ctx;
	if (lba >= disk.blocks || count > disk.blocks - lba)
		abort();	/* the reader must never ask past the device */
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *r = find_rec(lba + i);

		if (r)
			memcpy((uint8_t *)buf + i * BS, r, BS);
		else
			memset((uint8_t *)buf + i * BS, 0, BS);
	}
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

static void fix_gpt(void)
{
	static const uint8_t zero[BS];
	uint8_t *h = find_rec(1);
	uint32_t n, esize, hsize, crc = CRC32_INIT;
	uint64_t bytes, array;

	if (!h || memcmp(h, "EFI PART", 8))
		return;
	hsize = get_le32(h + 12);
	n = get_le32(h + 80);
	esize = get_le32(h + 84);
	array = get_le64(h + 72);
	bytes = (uint64_t)n * esize;
	if (hsize < 92 || hsize > BS || bytes > (1u << 20) || array > disk.blocks)
		return;
	for (uint64_t off = 0; off < bytes; off += BS) {
		const uint8_t *b = find_rec(array + off / BS);
		uint64_t len = bytes - off < BS ? bytes - off : BS;

		crc = crc32_update(crc, b ? b : zero, (size_t)len);
	}
	put32(h + 88, crc32_final(crc));
	put32(h + 16, 0);
	put32(h + 16, crc32(h, hsize));
}

static void fix_headers(void)
{
	for (uint32_t i = 0; i < disk.n; i++)
		if (!memcmp(disk.data[i], TRACEFILE_MAGIC, 8))
			put32(disk.data[i] + TFH_CRC, crc32(disk.data[i], TFH_CRC));
}

static void check_found(const struct tracefile *tf)
{
	static uint8_t buf[BS];
	struct tracefile_hdr h;
	uint64_t end = tf->data_lba + tf->data_blocks;

	if (tf->verified != TRACEFILE_VERIFIED || tf->block_size != BS)
		abort();
	if (tf->part_start + tf->part_blocks > disk.blocks || tf->file_lba < tf->part_start ||
	    tf->data_lba <= tf->file_lba || tf->data_blocks == 0 ||
	    end > tf->part_start + tf->part_blocks)
		abort();
	if (!tracefile_write_ok(tf, tf->data_lba, tf->data_blocks) ||
	    !tracefile_write_ok(tf, end - 1, 1) || tracefile_write_ok(tf, tf->file_lba, 1) ||
	    tracefile_write_ok(tf, tf->data_lba - 1, 1) || tracefile_write_ok(tf, end, 1) ||
	    tracefile_write_ok(tf, tf->data_lba, tf->data_blocks + 1))
		abort();
	/* The header it vouched for is on the disk, as it says. */
	sparse_read(NULL, tf->file_lba, 1, buf);
	if (tracefile_hdr_check(buf, tf->hdr.file_bytes, BS, &h) != STICK_OK ||
	    tf->data_lba != tf->file_lba + h.data_offset / BS)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct stick_scratch s;
	struct blockdev dev = { .block_size = BS, .read = sparse_read };
	struct tracefile tf;
	uint8_t flags;
	int err;

	if (size < 5)
		return 0;
	flags = data[0];
	disk.blocks = get_le32(data + 1);
	if (disk.blocks == 0 || disk.blocks > (1u << 24))
		return 0;
	disk.n = 0;
	for (size_t off = 5; off + 4 + BS <= size && disk.n < MAX_RECS; off += 4 + BS) {
		uint32_t lba = get_le32(data + off);

		if (lba >= disk.blocks)
			continue;
		disk.lba[disk.n] = lba;
		memcpy(disk.data[disk.n++], data + off + 4, BS);
	}
	if (flags & 1)
		fix_gpt();
	if (flags & 2)
		fix_headers();
	dev.blocks = disk.blocks;
	err = stick_find(&dev, &s, &tf);
	if (err == STICK_OK) {
		check_found(&tf);
	} else {
		static const struct tracefile zero;

		if (err < 0 || err >= STICK_ERR_COUNT || memcmp(&tf, &zero, sizeof(tf)) ||
		    tracefile_write_ok(&tf, 0, 1))
			abort();
	}
	return 0;
}
