/*
 * A block device as the partition, FAT and trace-file code see it: a size,
 * a block size and a read function.  The same code runs in the kernel (over
 * USB mass storage) and on the host (over an image file).  Nothing here
 * writes: where a write may go is decided by tracefile_write_ok().
 */
#ifndef BLOCK_BLOCKDEV_H
#define BLOCK_BLOCKDEV_H

#include <stdint.h>

#define BLOCK_SIZE_MAX	4096u

struct blockdev {
	uint32_t block_size;	/* bytes per logical block: 512, 1024, 2048 or 4096 */
	uint64_t blocks;	/* device size, in blocks */
	/* Read count blocks at lba into buf; 0 on success.  Never called
	 * outside [0, blocks) (the callers check first). */
	int (*read)(void *ctx, uint64_t lba, uint32_t count, void *buf);
	void *ctx;		/* the read function's own */
};

#endif
