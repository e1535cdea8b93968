/*
 * FAT32, read-only (fatgen103).  Derivations used below:
 * - FATSz = FATSz32 (FATSz16 must be 0); RootDirSectors = 0 on FAT32.
 * - DataSec = TotSec32 - (RsvdSecCnt + NumFATs * FATSz);
 *   CountofClusters = DataSec / SecPerClus; FAT32 iff >= 65525.
 * - Cluster N's FAT entry: 4 bytes at byte N * 4 of the FAT, low 28 bits.
 *   0 free, 0x0FFFFFF7 bad, >= 0x0FFFFFF8 end of chain; valid clusters are
 *   2..CountofClusters+1, so the FAT must hold CountofClusters + 2 entries.
 * - FirstSectorofCluster(N) = DataStart + (N - 2) * SecPerClus.
 * - A directory entry is 32 bytes: name[11], attr (0x0F: long-name part,
 *   0x08 volume id, 0x10 directory), FstClusHI at 20, FstClusLO at 26,
 *   FileSize at 28; name[0] 0x00 ends the directory, 0xE5 a deleted entry.
 *   A directory holds at most 65536 entries (2 MiB).
 */
#include <stddef.h>
#include <block/fat32.h>
#include <block/part.h>
#include <block/stick_err.h>

#define BPB_BYTS_PER_SEC	11
#define BPB_SEC_PER_CLUS	13
#define BPB_RSVD_SEC_CNT	14
#define BPB_NUM_FATS		16
#define BPB_ROOT_ENT_CNT	17
#define BPB_TOT_SEC16		19
#define BPB_FAT_SZ16		22
#define BPB_TOT_SEC32		32
#define BPB_FAT_SZ32		36
#define BPB_EXT_FLAGS		40
#define BPB_FS_VER		42
#define BPB_ROOT_CLUS		44
#define BS_BOOT_SIG		66
#define BS_VOL_LAB		71
#define BS16_BOOT_SIG		38	/* FAT12/16's extended boot record */
#define BS16_VOL_LAB		43

#define EXT_FLAGS_NO_MIRROR	0x80
#define EXT_FLAGS_ACTIVE	0x0F
#define BOOT_SIG_EXT		0x29

#define FAT_ENTRY_MASK		0x0FFFFFFFu
#define FAT_BAD			0x0FFFFFF7u
#define FAT_EOC_MIN		0x0FFFFFF8u

#define DIR_ENTRY_SIZE		32
#define DIR_ATTR		11
#define DIR_FST_CLUS_HI		20
#define DIR_FST_CLUS_LO		26
#define DIR_FILE_SIZE		28
#define ATTR_LONG_NAME		0x0F
#define ATTR_VOLUME_ID		0x08
#define ATTR_DIRECTORY		0x10
#define DIR_END			0x00
#define DIR_DELETED		0xE5
#define DIR_MAX_BYTES		(65536u * DIR_ENTRY_SIZE)

static int fs_read(struct fat32 *fs, uint64_t lba)
{
	const struct blockdev *d = fs->dev;

	if (lba == fs->buf_lba)
		return STICK_OK;
	/* Every block read lies in the partition (the callers' arithmetic
	 * keeps it there; this check makes that an invariant). */
	if (lba < fs->part_start || lba - fs->part_start >= fs->part_blocks || lba >= d->blocks)
		return STICK_EREAD;
	fs->buf_lba = UINT64_MAX;
	if (d->read(d->ctx, lba, 1, fs->buf))
		return STICK_EREAD;
	fs->buf_lba = lba;
	return STICK_OK;
}

int fat32_mount(struct fat32 *fs, const struct blockdev *dev, uint64_t start, uint64_t blocks,
		uint8_t *buf)
{
	uint32_t bps, spc, rsvd, nfats, fatsz, tot, data, active;
	const uint8_t *b;
	int err;

	fs->dev = dev;
	fs->part_start = start;
	fs->part_blocks = blocks;
	fs->buf = buf;
	fs->buf_lba = UINT64_MAX;
	fs->fat_count = 0;	/* another partition's FAT may be cached */
	fs->label[0] = 0;
	if ((err = fs_read(fs, start)))
		return err;
	b = buf;
	if (b[510] != 0x55 || b[511] != 0xAA)
		return STICK_EBPB;
	/* The label's place: FAT32's extended boot record, or FAT12/16's
	 * (FATSz16 != 0), so that a FAT16 BARETRACE is named as such. */
	if (get_le16(b + BPB_FAT_SZ16) == 0 ? b[BS_BOOT_SIG] == BOOT_SIG_EXT
					     : b[BS16_BOOT_SIG] == BOOT_SIG_EXT) {
		uint32_t at = get_le16(b + BPB_FAT_SZ16) == 0 ? BS_VOL_LAB : BS16_VOL_LAB;

		for (int i = 0; i < 11; i++)
			fs->label[i] = (char)b[at + i];
		fs->label[11] = 0;
	}
	if (!(b[0] == 0xEB && b[2] == 0x90) && b[0] != 0xE9)
		return STICK_EBPB;
	bps = get_le16(b + BPB_BYTS_PER_SEC);
	spc = b[BPB_SEC_PER_CLUS];
	rsvd = get_le16(b + BPB_RSVD_SEC_CNT);
	nfats = b[BPB_NUM_FATS];
	if (bps != dev->block_size || spc == 0 || (spc & (spc - 1)) || rsvd == 0 ||
	    nfats == 0 || nfats > 2)
		return STICK_EBPB;
	if (get_le16(b + BPB_ROOT_ENT_CNT) != 0 || get_le16(b + BPB_TOT_SEC16) != 0 ||
	    get_le16(b + BPB_FAT_SZ16) != 0)
		return STICK_ENOTFAT32;
	fatsz = get_le32(b + BPB_FAT_SZ32);
	tot = get_le32(b + BPB_TOT_SEC32);
	if (fatsz == 0 || get_le16(b + BPB_FS_VER) != 0)
		return STICK_EBPB;
	if ((uint64_t)rsvd + (uint64_t)nfats * fatsz >= tot)
		return STICK_EBPB;
	data = tot - rsvd - nfats * fatsz;
	fs->clusters = data / spc;
	if (fs->clusters < FAT32_MIN_CLUSTERS)
		return STICK_ENOTFAT32;
	/* The FAT must hold an entry for every cluster (and 0 and 1), and a
	 * cluster number must fit its 28 bits. */
	if ((uint64_t)fatsz * bps / 4 < (uint64_t)fs->clusters + 2 ||
	    fs->clusters + 1 >= FAT_BAD)
		return STICK_EBPB;
	if (tot > blocks)
		return STICK_EFS_SIZE;
	active = 0;
	if (get_le16(b + BPB_EXT_FLAGS) & EXT_FLAGS_NO_MIRROR)
		active = get_le16(b + BPB_EXT_FLAGS) & EXT_FLAGS_ACTIVE;
	if (active >= nfats)
		return STICK_EBPB;
	fs->sec_per_clus = spc;
	fs->fat_start = start + rsvd + (uint64_t)active * fatsz;
	fs->data_start = start + rsvd + (uint64_t)nfats * fatsz;
	fs->root_clus = get_le32(b + BPB_ROOT_CLUS);
	if (fs->root_clus < 2 || fs->root_clus > fs->clusters + 1)
		return STICK_EBPB;
	return STICK_OK;
}

/*
 * The FAT block at lba in fs->fat_cache, read with the blocks after it up
 * to FAT32_CACHE_BYTES, never past the data area's start (the FATs lie
 * before it: fat32_mount() checked) nor the partition's or device's end.
 * Returns the block's place in the cache, or NULL on a read error.
 */
static const uint8_t *fat_block(struct fat32 *fs, uint64_t lba)
{
	const struct blockdev *d = fs->dev;
	uint64_t end = fs->data_start, n;

	if (fs->fat_count && lba >= fs->fat_lba && lba - fs->fat_lba < fs->fat_count)
		return fs->fat_cache + (lba - fs->fat_lba) * d->block_size;
	if (fs->part_start + fs->part_blocks < end)
		end = fs->part_start + fs->part_blocks;
	if (d->blocks < end)
		end = d->blocks;
	if (lba < fs->part_start || lba >= end)
		return NULL;
	n = end - lba;
	if (n > FAT32_CACHE_BYTES / d->block_size)
		n = FAT32_CACHE_BYTES / d->block_size;
	fs->fat_count = 0;
	if (d->read(d->ctx, lba, (uint32_t)n, fs->fat_cache))
		return NULL;
	fs->fat_lba = lba;
	fs->fat_count = (uint32_t)n;
	return fs->fat_cache;
}

int64_t fat32_next(struct fat32 *fs, uint32_t c)
{
	uint32_t bps = fs->dev->block_size;
	uint64_t off = (uint64_t)c * 4;
	const uint8_t *b = fat_block(fs, fs->fat_start + off / bps);

	if (!b)
		return -STICK_EREAD;
	return get_le32(b + off % bps) & FAT_ENTRY_MASK;
}

static int valid_clus(const struct fat32 *fs, uint64_t c)
{
	return c >= 2 && c <= (uint64_t)fs->clusters + 1;
}

int fat32_find_root(struct fat32 *fs, const char name83[11], struct fat32_dirent *out)
{
	uint32_t bps = fs->dev->block_size;
	uint64_t clus_bytes = (uint64_t)fs->sec_per_clus * bps;
	uint64_t max_steps = DIR_MAX_BYTES / clus_bytes + 1;
	uint32_t c = fs->root_clus;
	int found = 0;

	if (max_steps > fs->clusters)
		max_steps = fs->clusters;
	/* The chain first, whole: a loop would otherwise show TRACE.BIN twice,
	 * and a chain that leaves the file system is refused even when the
	 * entries end before it does (fsck.fat would find it broken too). */
	for (uint64_t step = 0;; step++) {
		int64_t next;

		if (step == max_steps)
			return STICK_EDIR_LOOP;
		next = fat32_next(fs, c);
		if (next < 0)
			return (int)-next;
		if (next >= FAT_EOC_MIN)
			break;
		if (!valid_clus(fs, (uint64_t)next))
			return STICK_EDIR_CHAIN;
		c = (uint32_t)next;
	}
	c = fs->root_clus;
	for (uint64_t step = 0; step < max_steps; step++) {
		int64_t next;

		for (uint32_t s = 0; s < fs->sec_per_clus; s++) {
			int err = fs_read(fs, fat32_clus_lba(fs, c) + s);

			if (err)
				return err;
			for (uint32_t o = 0; o < bps; o += DIR_ENTRY_SIZE) {
				const uint8_t *e = fs->buf + o;
				int match = 1;

				if (e[0] == DIR_END)
					goto done;
				if (e[0] == DIR_DELETED || (e[DIR_ATTR] & ATTR_LONG_NAME) == ATTR_LONG_NAME ||
				    (e[DIR_ATTR] & (ATTR_VOLUME_ID | ATTR_DIRECTORY)))
					continue;
				for (int i = 0; i < 11; i++)
					match &= e[i] == (uint8_t)name83[i];
				if (!match)
					continue;
				if (found)
					return STICK_EDUPFILE;
				found = 1;
				out->first_clus = (uint32_t)get_le16(e + DIR_FST_CLUS_HI) << 16 |
						  get_le16(e + DIR_FST_CLUS_LO);
				out->size = get_le32(e + DIR_FILE_SIZE);
			}
		}
		next = fat32_next(fs, c);
		if (next < 0)
			return (int)-next;
		if (next >= FAT_EOC_MIN)
			goto done;
		if (!valid_clus(fs, (uint64_t)next))
			return STICK_EDIR_CHAIN;
		c = (uint32_t)next;
	}
	return STICK_EDIR_LOOP;
done:
	return found ? STICK_OK : STICK_ENOFILE;
}

int fat32_contiguous(struct fat32 *fs, uint32_t first, uint32_t size, uint64_t *lba)
{
	uint64_t clus_bytes = (uint64_t)fs->sec_per_clus * fs->dev->block_size;
	uint64_t need = (size + clus_bytes - 1) / clus_bytes;
	uint32_t c = first;
	int64_t next;

	if (size == 0 || !valid_clus(fs, first))
		return STICK_EFILE_CLUSTER;
	/* need - 1 links, each to the next cluster (need < 2^32 / 512): a
	 * link past the last cluster fails valid_clus(). */
	for (uint64_t i = 1; i < need; i++, c++) {
		next = fat32_next(fs, c);
		if (next < 0)
			return (int)-next;
		if (next == (int64_t)c + 1)
			continue;
		if (next >= FAT_EOC_MIN)
			return STICK_EFILE_SHORT;
		if (!valid_clus(fs, (uint64_t)next))
			return STICK_EFILE_CHAIN;
		return STICK_EFILE_FRAGMENTED;
	}
	next = fat32_next(fs, c);
	if (next < 0)
		return (int)-next;
	if (next < FAT_EOC_MIN)
		return valid_clus(fs, (uint64_t)next) ? STICK_EFILE_LONG : STICK_EFILE_CHAIN;
	*lba = fat32_clus_lba(fs, first);
	return STICK_OK;
}
