/*
 * A read-only FAT32 reader (Microsoft's "FAT: General Overview of On-Disk
 * Format", fatgen103): the boot sector's BPB, the FAT's cluster chains and
 * the root directory's 8.3 entries (long-name entries are skipped).  It
 * never writes, and every chain walk is bounded by the cluster count.
 */
#ifndef BLOCK_FAT32_H
#define BLOCK_FAT32_H

#include <stdint.h>
#include <block/blockdev.h>

#define FAT32_MIN_CLUSTERS	65525u	/* fewer: FAT12/16 (fatgen103) */

#define FAT32_CACHE_BYTES	32768u	/* FAT blocks read at once: 8 to 64 */

struct fat32 {
	const struct blockdev *dev;
	uint64_t part_start;	/* partition's first block */
	uint64_t part_blocks;	/* partition's length, blocks */
	uint32_t sec_per_clus;	/* blocks per cluster, a power of two <= 128 */
	uint64_t fat_start;	/* first block of the FAT in use, device LBA */
	uint64_t data_start;	/* block of cluster 2, device LBA */
	uint32_t clusters;	/* count of data clusters; valid ones are 2..clusters+1 */
	uint32_t root_clus;	/* root directory's first cluster */
	char label[12];		/* BPB volume label, NUL-terminated, trailing spaces kept */
	uint8_t *buf;		/* BLOCK_SIZE_MAX bytes of scratch (the caller's) */
	uint64_t buf_lba;	/* block now in buf; UINT64_MAX: none */
	/* The FAT read ahead: [fat_lba, fat_lba + fat_count) in fat_cache.
	 * A contiguous 1 GiB TRACE.BIN of 512-byte clusters is 16,384 FAT
	 * blocks; one block a read took 35 ms each over QEMU's USB (9 min). */
	uint64_t fat_lba;
	uint32_t fat_count;	/* 0: nothing cached */
	uint8_t fat_cache[FAT32_CACHE_BYTES];
};

/* A directory entry's facts. */
struct fat32_dirent {
	uint32_t first_clus;	/* first cluster (0: empty file) */
	uint32_t size;		/* bytes */
};

/*
 * Read and check the boot sector of the partition [start, start + blocks).
 * Returns STICK_OK, STICK_EBPB, STICK_ENOTFAT32, STICK_EFS_SIZE or STICK_EREAD.
 * On STICK_EBPB and STICK_ENOTFAT32, fs->label still holds the BPB's label
 * if the boot sector had one (so a damaged BARETRACE partition is named).
 */
int fat32_mount(struct fat32 *fs, const struct blockdev *dev, uint64_t start, uint64_t blocks,
		uint8_t *buf);

/* The FAT entry of cluster c (28 bits), or -STICK_EREAD. */
int64_t fat32_next(struct fat32 *fs, uint32_t c);

/* Device LBA of cluster c's first block; c in 2..clusters+1. */
static inline uint64_t fat32_clus_lba(const struct fat32 *fs, uint32_t c)
{
	return fs->data_start + (uint64_t)(c - 2) * fs->sec_per_clus;
}

/*
 * Find the one root-directory entry named name83 (11 bytes, "TRACE   BIN")
 * that is a file.  Walks the whole directory: STICK_OK, STICK_ENOFILE,
 * STICK_EDUPFILE, STICK_EDIR_CHAIN, STICK_EDIR_LOOP or STICK_EREAD.
 */
int fat32_find_root(struct fat32 *fs, const char name83[11], struct fat32_dirent *out);

/*
 * The file of first cluster first and size bytes, if its clusters are
 * consecutive and exactly as many as its size needs: *lba its first block,
 * STICK_OK.  Else STICK_EFILE_*.
 */
int fat32_contiguous(struct fat32 *fs, uint32_t first, uint32_t size, uint64_t *lba);

#endif
