/*
 * drivers/block/ on disks built in memory: the trace file's header, the
 * write decision, MBR and GPT parsing, and FAT32 chains that loop or leave
 * the file system.  Each test names the mutation of the code it catches.
 * Disks made by the real tools (mkfs.fat, sfdisk, mtools) are checked in
 * tests/tools/test_usb_image.py.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <block/part.h>
#include <block/stick_err.h>
#include <block/tracefile.h>
#include <lib/crc32.h>

/* ---- a RAM disk ------------------------------------------------------ */

#define BS		512u
struct ram {
	uint8_t *d;
	uint64_t blocks;
	uint64_t reads_outside;	/* reads the code asked for past the end */
	uint64_t reads;		/* read calls */
};

static int ram_read(void *ctx, uint64_t lba, uint32_t n, void *buf)
{
	struct ram *r = ctx;

	if (lba >= r->blocks || n > r->blocks - lba) {
		r->reads_outside++;
		return -1;
	}
	r->reads++;
	memcpy(buf, r->d + lba * BS, (size_t)n * BS);
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}
static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/*
 * A minimal FAT32 disk: an MBR with one partition of type 0x0C at block
 * PART_LBA, FAT32 with 1 block per cluster, 1 FAT, RSVD reserved blocks,
 * the root directory in cluster 2 holding the label entry and TRACE.BIN
 * of FILE_CLUS clusters from cluster 3.  65525 clusters: the smallest FAT32.
 */
#define PART_LBA	2048u
#define RSVD		32u
#define NCLUS		65525u
#define FATSZ		((NCLUS + 2) * 4 / BS + 1)
#define TOT		(RSVD + FATSZ + NCLUS)
#define FILE_CLUS	16u
#define DISK_BLOCKS	(PART_LBA + TOT)
#define DATA0		(PART_LBA + RSVD + FATSZ)	/* cluster 2 */

static uint8_t *blk(struct ram *r, uint64_t lba)
{
	return r->d + lba * BS;
}

static void fat_set(struct ram *r, uint32_t c, uint32_t v)
{
	put32(blk(r, PART_LBA + RSVD) + c * 4, v);
}

static void dirent(uint8_t *e, const char *name83, uint8_t attr, uint32_t clus, uint32_t size)
{
	memcpy(e, name83, 11);
	e[11] = attr;
	put16(e + 20, (uint16_t)(clus >> 16));
	put16(e + 26, (uint16_t)clus);
	put32(e + 28, size);
}

static void make_disk(struct ram *r)
{
	uint8_t *b;
	struct tracefile_hdr h = { .version = TRACEFILE_VERSION, .data_offset = TRACEFILE_HDR_BYTES,
				   .file_bytes = FILE_CLUS * BS, .version_str = "test" };
	uint8_t hdr[TRACEFILE_HDR_BYTES];

	r->blocks = DISK_BLOCKS;
	r->d = calloc(DISK_BLOCKS, BS);
	r->reads_outside = 0;
	r->reads = 0;
	assert_non_null(r->d);
	b = blk(r, 0);
	b[446 + 4] = 0x0C;
	put32(b + 446 + 8, PART_LBA);
	put32(b + 446 + 12, TOT);
	b[510] = 0x55;
	b[511] = 0xAA;

	b = blk(r, PART_LBA);
	b[0] = 0xEB; b[1] = 0x58; b[2] = 0x90;
	put16(b + 11, BS);
	b[13] = 1;
	put16(b + 14, RSVD);
	b[16] = 1;
	b[21] = 0xF8;
	put32(b + 32, TOT);
	put32(b + 36, FATSZ);
	put32(b + 44, 2);
	b[66] = 0x29;
	memcpy(b + 71, "BARETRACE  ", 11);
	memcpy(b + 82, "FAT32   ", 8);
	b[510] = 0x55;
	b[511] = 0xAA;

	fat_set(r, 0, 0x0FFFFFF8);
	fat_set(r, 1, 0x0FFFFFFF);
	fat_set(r, 2, 0x0FFFFFFF);		/* root: one cluster */
	for (uint32_t c = 3; c < 3 + FILE_CLUS - 1; c++)
		fat_set(r, c, c + 1);
	fat_set(r, 3 + FILE_CLUS - 1, 0x0FFFFFFF);

	b = blk(r, DATA0);
	dirent(b, "BARETRACE  ", 0x08, 0, 0);
	dirent(b + 32, TRACEFILE_NAME83, 0x20, 3, FILE_CLUS * BS);

	tracefile_hdr_make(hdr, &h);
	memcpy(blk(r, DATA0 + 1), hdr, TRACEFILE_HDR_BYTES);	/* cluster 3 on */
}

static int find(struct ram *r, struct tracefile *tf)
{
	static struct stick_scratch s;
	struct blockdev dev = { .block_size = BS, .blocks = r->blocks, .read = ram_read, .ctx = r };
	int err = stick_find(&dev, &s, tf);

	assert_int_equal(r->reads_outside, 0);
	return err;
}

static void expect(struct ram *r, int want)
{
	struct tracefile tf;
	int got = find(r, &tf);

	if (got != want)
		fail_msg("got \"%s\", want \"%s\"", stick_strerror(got), stick_strerror(want));
	if (want != STICK_OK) {
		/* A refused stick has no writable block, not even its file's. */
		assert_int_equal(tf.verified, 0);
		assert_false(tracefile_write_ok(&tf, DATA0 + 1 + 8, 1));
	}
	free(r->d);
}

/* ---- the good disk, and the write decision ---------------------------- */

/* Mutations caught: data_lba not past the header (+ data_offset dropped),
 * an off-by-one at either end, count 0 allowed, lba + count overflowing. */
static void test_write_ok_bounds(void **state)
{
	struct ram r;
	struct tracefile tf;
	uint64_t file = DATA0 + 1, data = file + TRACEFILE_HDR_BYTES / BS;
	uint64_t nd = FILE_CLUS - TRACEFILE_HDR_BYTES / BS;

	(void)state;
	make_disk(&r);
	assert_int_equal(find(&r, &tf), STICK_OK);
	assert_int_equal(tf.file_lba, file);
	assert_int_equal(tf.data_lba, data);
	assert_int_equal(tf.data_blocks, nd);
	assert_int_equal(tf.part_start, PART_LBA);
	assert_int_equal(tf.part_index, 1);
	assert_string_equal(tf.hdr.version_str, "test");

	assert_true(tracefile_write_ok(&tf, data, 1));
	assert_true(tracefile_write_ok(&tf, data, nd));
	assert_true(tracefile_write_ok(&tf, data + nd - 1, 1));
	assert_false(tracefile_write_ok(&tf, file, 1));		/* the header */
	assert_false(tracefile_write_ok(&tf, data - 1, 1));
	assert_false(tracefile_write_ok(&tf, data - 1, 2));
	assert_false(tracefile_write_ok(&tf, data + nd, 1));	/* the next cluster */
	assert_false(tracefile_write_ok(&tf, data, nd + 1));
	assert_false(tracefile_write_ok(&tf, data + nd - 1, 2));
	assert_false(tracefile_write_ok(&tf, data, 0));
	assert_false(tracefile_write_ok(&tf, data + 1, UINT64_MAX));	/* wraps */
	assert_false(tracefile_write_ok(&tf, UINT64_MAX, 1));
	assert_false(tracefile_write_ok(&tf, 0, 1));
	assert_false(tracefile_write_ok(NULL, data, 1));
	/* Not verified (mutation: the verified check dropped). */
	tf.verified = 0;
	assert_false(tracefile_write_ok(&tf, data, 1));
	free(r.d);
}

/* ---- the header ------------------------------------------------------- */

static void rehdr(struct ram *r, void (*edit)(uint8_t *h), int fix_crc)
{
	uint8_t *h = blk(r, DATA0 + 1);

	edit(h);
	if (fix_crc)
		put32(h + TFH_CRC, crc32(h, TFH_CRC));
}
static void ed_magic(uint8_t *h) { h[0] ^= 0x20; }
static void ed_version(uint8_t *h) { put32(h + TFH_VERSION, 2); }
static void ed_text(uint8_t *h) { h[TFH_VERSION_STR] ^= 1; }
static void ed_offset_small(uint8_t *h) { put32(h + TFH_DATA_OFFSET, 256); }
static void ed_offset_odd(uint8_t *h) { put32(h + TFH_DATA_OFFSET, 4096 + 100); }
static void ed_offset_past(uint8_t *h) { put32(h + TFH_DATA_OFFSET, FILE_CLUS * BS); }
static void ed_bigger(uint8_t *h) { put64(h + TFH_FILE_BYTES, (FILE_CLUS + 1) * BS); }
static void ed_foreign(uint8_t *h) { memset(h, 0xA5, BS); }

/* Mutations caught: each check of tracefile_hdr_check() removed. */
static void test_header_refusals(void **state)
{
	static const struct { void (*edit)(uint8_t *); int fix; int want; } cases[] = {
		{ ed_magic, 1, STICK_EHDR_MAGIC },
		{ ed_foreign, 0, STICK_EHDR_MAGIC },
		{ ed_version, 1, STICK_EHDR_VERSION },
		{ ed_text, 0, STICK_EHDR_CRC },
		{ ed_offset_small, 1, STICK_EHDR_LAYOUT },
		{ ed_offset_odd, 1, STICK_EHDR_LAYOUT },
		{ ed_offset_past, 1, STICK_EHDR_LAYOUT },
		{ ed_bigger, 1, STICK_EHDR_SIZE },	/* the file is smaller than its header says */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ram r;

		make_disk(&r);
		rehdr(&r, cases[i].edit, cases[i].fix);
		expect(&r, cases[i].want);
	}
}

/* The CRC covers bytes 0..507, each of them (mutation: a shorter length). */
static void test_header_crc_covers_all(void **state)
{
	uint8_t buf[TRACEFILE_HDR_BYTES];
	struct tracefile_hdr h = { .version = 1, .data_offset = 4096, .file_bytes = 1 << 20 }, out;

	(void)state;
	tracefile_hdr_make(buf, &h);
	assert_int_equal(tracefile_hdr_check(buf, 1 << 20, 512, &out), STICK_OK);
	for (int i = 0; i < TFH_CRC; i++) {
		buf[i] ^= 0x40;
		assert_int_not_equal(tracefile_hdr_check(buf, 1 << 20, 512, &out), STICK_OK);
		buf[i] ^= 0x40;
	}
	/* 4096-byte blocks: a 4096 data offset is whole blocks, 512 is not. */
	assert_int_equal(tracefile_hdr_check(buf, 1 << 20, 4096, &out), STICK_OK);
	h.data_offset = 512;
	tracefile_hdr_make(buf, &h);
	assert_int_equal(tracefile_hdr_check(buf, 1 << 20, 4096, &out), STICK_EHDR_LAYOUT);
}

/* ---- partition table -------------------------------------------------- */

static void ed_nosig(struct ram *r) { blk(r, 0)[510] = 0; }
static void ed_mbr_past(struct ram *r) { put32(blk(r, 0) + 446 + 12, TOT + 1); }
static void ed_mbr_zero_start(struct ram *r) { put32(blk(r, 0) + 446 + 8, 0); }
/* A second partition over the FAT: writing the first would damage it. */
static void ed_overlap(struct ram *r)
{
	uint8_t *e = blk(r, 0) + 446 + 16;

	e[4] = 0x83;
	put32(e + 8, PART_LBA + 100);
	put32(e + 12, 10);
}
static void ed_label(struct ram *r) { blk(r, PART_LBA)[71 + 4] = 'X'; }

/* ---- FAT32 ------------------------------------------------------------ */

static void root_full(struct ram *r);

static void ed_bps(struct ram *r) { put16(blk(r, PART_LBA) + 11, 1024); }
static void ed_spc(struct ram *r) { blk(r, PART_LBA)[13] = 3; }
static void ed_nfats(struct ram *r) { blk(r, PART_LBA)[16] = 0; }
static void ed_fat16(struct ram *r) { put16(blk(r, PART_LBA) + 17, 512); }
static void ed_few_clusters(struct ram *r) { put32(blk(r, PART_LBA) + 32, TOT - 10); }
static void ed_fat_small(struct ram *r) { put32(blk(r, PART_LBA) + 36, FATSZ / 2); }
static void ed_fs_big(struct ram *r)
{
	/* Claims more blocks than the partition: an extra cluster past it. */
	put32(blk(r, PART_LBA) + 32, TOT + 1);
}
static void ed_root_clus(struct ram *r) { put32(blk(r, PART_LBA) + 44, NCLUS + 2); }
static void ed_bpb_sig(struct ram *r) { blk(r, PART_LBA)[511] = 0; }
/* The root's first cluster full (no end-of-directory entry), so the walk
 * must follow its chain. */
static void root_full(struct ram *r)
{
	for (uint32_t o = 64; o < BS; o += 32)
		dirent(blk(r, DATA0) + o, "PAD     TXT", 0x20, 0, 0);
}
static void ed_root_loop(struct ram *r) { root_full(r); fat_set(r, 2, 2); }
static void ed_root_leaves(struct ram *r) { root_full(r); fat_set(r, 2, NCLUS + 2); }
static void ed_root_free(struct ram *r) { root_full(r); fat_set(r, 2, 0); }
static void ed_nofile(struct ram *r) { blk(r, DATA0)[32] = 0xE5; }
static void ed_dup(struct ram *r) { memcpy(blk(r, DATA0) + 64, blk(r, DATA0) + 32, 32); }
static void ed_dir_attr(struct ram *r) { blk(r, DATA0)[32 + 11] = 0x10; }
static void ed_lfn_only(struct ram *r) { blk(r, DATA0)[32 + 11] = 0x0F; }
static void ed_first_clus(struct ram *r) { put16(blk(r, DATA0) + 32 + 26, 1); }
static void ed_size_odd(struct ram *r) { put32(blk(r, DATA0) + 32 + 28, FILE_CLUS * BS - 1); }
static void ed_size_smaller(struct ram *r) { put32(blk(r, DATA0) + 32 + 28, (FILE_CLUS - 1) * BS); }
static void ed_frag(struct ram *r) { fat_set(r, 5, 100); }
static void ed_chain_back(struct ram *r) { fat_set(r, 5, 3); }	/* a loop */
static void ed_chain_out(struct ram *r) { fat_set(r, 5, 0x0FFFFFF0); }
static void ed_chain_bad(struct ram *r) { fat_set(r, 5, 0x0FFFFFF7); }
static void ed_chain_free(struct ram *r) { fat_set(r, 5, 0); }
static void ed_chain_short(struct ram *r) { fat_set(r, 5, 0x0FFFFFFF); }
static void ed_chain_long(struct ram *r) { fat_set(r, 3 + FILE_CLUS - 1, 3 + FILE_CLUS); fat_set(r, 3 + FILE_CLUS, 0x0FFFFFFF); }
static void ed_none(struct ram *r) { (void)r; }
/* Long-name entries before TRACE.BIN are skipped, not refused. */
static void ed_lfn_before(struct ram *r)
{
	uint8_t *d = blk(r, DATA0);

	memmove(d + 64, d + 32, 32);
	memset(d + 32, 'x', 32);
	d[32] = 0x41;
	d[32 + 11] = 0x0F;
}
/* A root directory of two clusters, TRACE.BIN in the second. */
static void ed_root_two(struct ram *r)
{
	/* Cluster 3 + FILE_CLUS is free: make it the root's second cluster. */
	uint32_t c = 3 + FILE_CLUS;

	fat_set(r, 2, c);
	fat_set(r, c, 0x0FFFFFFF);
	root_full(r);
	memcpy(blk(r, DATA0 + c - 2), blk(r, DATA0) + 32, 32);
	memcpy(blk(r, DATA0) + 32, "OTHER   BIN", 11);
}

static void test_disk_cases(void **state)
{
	static const struct { const char *what; void (*edit)(struct ram *); int want; } cases[] = {
		{ "good", ed_none, STICK_OK },
		{ "long names skipped", ed_lfn_before, STICK_OK },
		{ "root in two clusters", ed_root_two, STICK_OK },
		{ "no 0x55AA", ed_nosig, STICK_ENOTABLE },
		{ "MBR entry past the disk", ed_mbr_past, STICK_EMBR_ENTRY },
		{ "MBR entry at block 0", ed_mbr_zero_start, STICK_EMBR_ENTRY },
		{ "overlap", ed_overlap, STICK_EOVERLAP },
		{ "label", ed_label, STICK_ENOLABEL },
		{ "bytes per sector", ed_bps, STICK_EBPB },
		{ "sectors per cluster", ed_spc, STICK_EBPB },
		{ "no FAT", ed_nfats, STICK_EBPB },
		{ "FAT16 root entries", ed_fat16, STICK_ENOTFAT32 },
		{ "too few clusters", ed_few_clusters, STICK_ENOTFAT32 },
		{ "FAT too small", ed_fat_small, STICK_EBPB },
		{ "fs past the partition", ed_fs_big, STICK_EFS_SIZE },
		{ "root cluster", ed_root_clus, STICK_EBPB },
		{ "boot sector signature", ed_bpb_sig, STICK_ENOLABEL },
		{ "root chain loops", ed_root_loop, STICK_EDIR_LOOP },
		{ "root chain leaves", ed_root_leaves, STICK_EDIR_CHAIN },
		{ "root chain free", ed_root_free, STICK_EDIR_CHAIN },
		{ "no file", ed_nofile, STICK_ENOFILE },
		{ "a directory named TRACE.BIN", ed_dir_attr, STICK_ENOFILE },
		{ "a long-name entry named so", ed_lfn_only, STICK_ENOFILE },
		{ "two files", ed_dup, STICK_EDUPFILE },
		{ "first cluster 1", ed_first_clus, STICK_EFILE_CLUSTER },
		{ "size not whole blocks", ed_size_odd, STICK_EFILE_SIZE },
		{ "size smaller than the chain", ed_size_smaller, STICK_EFILE_LONG },
		{ "fragmented", ed_frag, STICK_EFILE_FRAGMENTED },
		{ "chain loops back", ed_chain_back, STICK_EFILE_FRAGMENTED },
		{ "chain leaves", ed_chain_out, STICK_EFILE_CHAIN },
		{ "chain hits a bad cluster", ed_chain_bad, STICK_EFILE_CHAIN },
		{ "chain hits a free cluster", ed_chain_free, STICK_EFILE_CHAIN },
		{ "chain short", ed_chain_short, STICK_EFILE_SHORT },
		{ "chain long", ed_chain_long, STICK_EFILE_LONG },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ram r;

		print_message("  %s\n", cases[i].what);
		make_disk(&r);
		cases[i].edit(&r);
		expect(&r, cases[i].want);
	}
}

/* Every reason has its own text (mutation: two entries of the X-macro alike). */
static void test_reasons_distinct(void **state)
{
	(void)state;
	for (int i = 0; i < STICK_ERR_COUNT; i++)
		for (int j = i + 1; j < STICK_ERR_COUNT; j++)
			assert_string_not_equal(stick_strerror(i), stick_strerror(j));
	assert_string_equal(stick_strerror(STICK_ERR_COUNT), "unknown reason");
	assert_string_equal(stick_strerror(-1), "unknown reason");
}

/* ---- GPT -------------------------------------------------------------- */

/* The disk above behind a GPT instead: protective MBR, header at 1, array
 * at 2 (4 entries), the partition as entry 2. */
static void gpt_fix(struct ram *r)
{
	uint8_t *h = blk(r, 1);

	put32(h + 88, crc32(blk(r, 2), 4 * 128));
	put32(h + 16, 0);
	put32(h + 16, crc32(h, 92));
}

static void make_gpt(struct ram *r)
{
	uint8_t *b, *e;

	make_disk(r);
	b = blk(r, 0);
	memset(b + 446, 0, 64);
	b[446 + 4] = 0xEE;
	put32(b + 446 + 8, 1);
	put32(b + 446 + 12, 0xFFFFFFFF);
	b = blk(r, 1);
	memcpy(b, "EFI PART", 8);
	put32(b + 8, 0x00010000);
	put32(b + 12, 92);
	put64(b + 24, 1);
	put64(b + 32, DISK_BLOCKS - 1);
	put64(b + 40, 34);
	put64(b + 48, DISK_BLOCKS - 1);
	put64(b + 72, 2);
	put32(b + 80, 4);
	put32(b + 84, 128);
	e = blk(r, 2) + 128;
	memcpy(e, "\xa2\xa0\xd0\xeb\xe5\xb9\x33\x44\x87\xc0\x68\xb6\xb7\x26\x99\xc7", 16);
	e[16] = 1;
	put64(e + 32, PART_LBA);
	put64(e + 40, PART_LBA + TOT - 1);
	gpt_fix(r);
}

static void test_gpt(void **state)
{
	struct ram r;
	struct tracefile tf;

	(void)state;
	make_gpt(&r);
	assert_int_equal(find(&r, &tf), STICK_OK);
	assert_int_equal(tf.part_index, 2);
	assert_int_equal(tf.part_gpt, 1);
	free(r.d);

	make_gpt(&r);
	blk(&r, 1)[40] ^= 1;			/* header changed, CRC not */
	expect(&r, STICK_EGPT_CRC);
	make_gpt(&r);
	blk(&r, 2)[128 + 20] ^= 1;		/* an entry's GUID, array CRC not */
	expect(&r, STICK_EGPT_ARRAY_CRC);
	make_gpt(&r);
	blk(&r, 1)[0] = 'X';
	expect(&r, STICK_EGPT_HEADER);
	make_gpt(&r);
	put64(blk(&r, 1) + 24, 2);		/* MyLBA */
	gpt_fix(&r);
	expect(&r, STICK_EGPT_HEADER);
	make_gpt(&r);
	put64(blk(&r, 1) + 48, DISK_BLOCKS);	/* last usable past the disk */
	gpt_fix(&r);
	expect(&r, STICK_EGPT_HEADER);
	make_gpt(&r);
	put64(blk(&r, 2) + 128 + 40, DISK_BLOCKS); /* entry past last usable */
	gpt_fix(&r);
	expect(&r, STICK_EGPT_ENTRY);
	make_gpt(&r);
	put64(blk(&r, 2) + 128 + 32, 20);	/* entry before first usable */
	gpt_fix(&r);
	expect(&r, STICK_EGPT_ENTRY);
	make_gpt(&r);
	put32(blk(&r, 1) + 84, 96);		/* entry size not 128 << n */
	gpt_fix(&r);
	expect(&r, STICK_EGPT_ENTRIES);
	make_gpt(&r);
	put64(blk(&r, 1) + 72, DISK_BLOCKS - 1); /* array runs off the disk */
	put32(blk(&r, 1) + 80, 128);
	gpt_fix(&r);
	expect(&r, STICK_EGPT_ENTRIES);
	make_gpt(&r);
	put32(blk(&r, 1) + 80, 0xFFFFFFFF);	/* entry count absurd */
	gpt_fix(&r);
	expect(&r, STICK_EGPT_ENTRIES);
}

/*
 * A TRACE.BIN of 40,000 one-block clusters: 313 blocks of FAT to follow.
 * The FAT is read ahead (FAT32_CACHE_BYTES at a time): a read a block took
 * 35 ms each over QEMU's USB, 9 minutes for a 1 GiB file. Catches: the
 * read-ahead gone (313+ reads); the cache kept from one mount to the next
 * (the second search, after the chain is cut, would pass).
 */
#define BIG_CLUS	40000u

static void test_fat_read_ahead(void **state)
{
	struct ram r;
	struct tracefile tf;
	struct tracefile_hdr h = { .version = TRACEFILE_VERSION, .data_offset = TRACEFILE_HDR_BYTES,
				   .file_bytes = BIG_CLUS * BS, .version_str = "test" };
	uint8_t hdr[TRACEFILE_HDR_BYTES];

	(void)state;
	make_disk(&r);
	for (uint32_t c = 3; c < 3 + BIG_CLUS - 1; c++)
		fat_set(&r, c, c + 1);
	fat_set(&r, 3 + BIG_CLUS - 1, 0x0FFFFFFF);
	put32(blk(&r, DATA0) + 32 + 28, BIG_CLUS * BS);
	tracefile_hdr_make(hdr, &h);
	memcpy(blk(&r, DATA0 + 1), hdr, TRACEFILE_HDR_BYTES);
	assert_int_equal(find(&r, &tf), STICK_OK);
	assert_int_equal(tf.data_blocks, BIG_CLUS - TRACEFILE_HDR_BYTES / BS);
	/* MBR, boot sector, root directory, header, and the FAT 64 blocks a read. */
	if (r.reads > 4 + (BIG_CLUS * 4 / BS) / (FAT32_CACHE_BYTES / BS) + 2)
		fail_msg("%llu reads to find a file of %u clusters", (unsigned long long)r.reads,
			 BIG_CLUS);
	/* One link broken near the end, on the same disk and scratch: the
	 * FAT cached by the search before is not taken for this one's. */
	fat_set(&r, 3 + BIG_CLUS - 5, 0x0FFFFFFF);
	expect(&r, STICK_EFILE_SHORT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_ok_bounds),
		cmocka_unit_test(test_header_refusals),
		cmocka_unit_test(test_header_crc_covers_all),
		cmocka_unit_test(test_disk_cases),
		cmocka_unit_test(test_reasons_distinct),
		cmocka_unit_test(test_gpt),
		cmocka_unit_test(test_fat_read_ahead),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
