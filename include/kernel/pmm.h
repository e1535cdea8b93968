/*
 * Physical page allocator over the firmware memory map.
 * Never hands out: anything below 1 MiB, the kernel image, the boot
 * information, modules, firmware-owned regions (anything not "available"),
 * or its own bitmap.
 */
#ifndef KERNEL_PMM_H
#define KERNEL_PMM_H

#include <stdint.h>
#include "kernel/bootinfo.h"

#define PAGE_SIZE	4096ull
#define PMM_LOW_LIMIT	0x100000ull	/* nothing below 1 MiB is handed out */
#define PMM_MAX_PHYS	(1ull << 40)	/* 1 TiB: RAM above is ignored, and said so */

struct pmm_stats {
	uint64_t max_phys;	/* end of the highest available RAM tracked */
	uint64_t total_pages;	/* available RAM in the memory map */
	uint64_t free_pages;	/* free now */
	uint64_t ignored_bytes;	/* available RAM above PMM_MAX_PHYS */
	uint64_t bitmap_phys;	/* where the bitmap lives */
	uint64_t bitmap_bytes;	/* its size */
};

/*
 * Build the allocator. reserved[] lists ranges never to hand out besides
 * the non-available map entries. The bitmap is placed in available RAM below
 * bitmap_limit (memory that is already mapped); phys_to_virt turns its
 * physical address into a pointer. Returns NULL or an error message.
 */
const char *pmm_init(const struct mem_region *mmap, unsigned n,
		     const struct phys_range *reserved, unsigned nres,
		     uint64_t bitmap_limit, void *(*phys_to_virt)(uint64_t));

/* npages contiguous pages aligned to align_pages (a power of two); 0 if none. */
uint64_t pmm_alloc(uint64_t npages, uint64_t align_pages);
/* The same, or 0 at once if another CPU holds the allocator (a panic: it may be stopped). */
uint64_t pmm_alloc_nowait(uint64_t npages, uint64_t align_pages);
void pmm_free(uint64_t phys, uint64_t npages);
void pmm_get_stats(struct pmm_stats *st);

#endif
