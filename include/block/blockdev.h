/*
 * A block device as the partition, FAT and trace-file code see it: a size,
 * a block size and a read function.  The same code runs in the kernel (over
 * USB mass storage) and on the host (over an image file).  Where a write
 * may go is decided by tracefile_write_ok(); the write function is called
 * only by tracefile_write(), which asks it first, and takes the verified
 * trace file as its proof, so that the driver can ask again.
 */
#ifndef BLOCK_BLOCKDEV_H
#define BLOCK_BLOCKDEV_H

#include <stdint.h>

struct tracefile;

#define BLOCK_SIZE_MAX	4096u

struct blockdev {
	uint32_t block_size;	/* bytes per logical block: 512, 1024, 2048 or 4096 */
	uint64_t blocks;	/* device size, in blocks */
	/* Read count blocks at lba into buf; 0 on success.  Never called
	 * outside [0, blocks) (the callers check first). */
	int (*read)(void *ctx, uint64_t lba, uint32_t count, void *buf);
	/* Write count blocks at lba from buf; 0 on success.  Called only by
	 * tracefile_write(), after tracefile_write_ok(tf, lba, count); the
	 * driver checks that again with tf before anything reaches the
	 * device.  NULL: the device is never written. */
	int (*write)(void *ctx, const struct tracefile *tf, uint64_t lba, uint32_t count,
		     const void *buf);
	void *ctx;		/* the read and write functions' own */
};

#endif
