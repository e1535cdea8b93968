/* The kernel's identity map of physical memory. */
#ifndef ARCH_PAGING_H
#define ARCH_PAGING_H

#include <stdbool.h>
#include <stdint.h>

#define PAGING_BOOT_LIMIT	0x100000000ull	/* boot/entry.asm maps 0..4 GiB */
#define PAGING_MAX_LIMIT	(512ull << 30)	/* one PDPT: 512 GiB */
#define PAGING_MMIO_LIMIT	(1ull << 47)	/* lower half: MMIO mapped at its address */

/*
 * Extend the identity map with 2 MiB pages up to end (rounded up to 1 GiB).
 * Returns the new mapped limit (capped at PAGING_MAX_LIMIT).
 */
uint64_t paging_map_identity(uint64_t end);
uint64_t paging_mapped_limit(void);

/*
 * Make [start, end) of the identity map read-only, in 4 KiB pages (the 2
 * MiB pages it touches are split). Boot CPU, before any AP starts: other
 * CPUs' TLBs are not flushed. False if a page table could not be had.
 */
bool paging_protect(uint64_t start, uint64_t end);

/*
 * Map [start, end) of a device's registers uncached (PCD and PWT in 4 KiB
 * pages of the identity map, extended if it ends short of end; above the
 * identity map's 512 GiB, pages of their own at the same address, up to
 * PAGING_MMIO_LIMIT), whatever the firmware's MTRRs say of the range.
 * Only the calling CPU's TLB is flushed: call it before any CPU touches
 * the range.  False if a page table could not be had.
 */
bool paging_map_mmio(uint64_t start, uint64_t end);

/*
 * A page table mapping the 2 MiB at va, outside the identity map, every
 * entry empty: the caller fills entries and flushes them itself. NULL if
 * va is in PML4 slot 0 (the identity map), its slot is taken, or no page.
 */
uint64_t *paging_map_window(uint64_t va);

/*
 * The entry that maps va (the last level walked) and its page size, and
 * whether every level along the way allows writes; 0 if va is unmapped.
 */
uint64_t paging_lookup(uint64_t va, uint64_t *page_size, bool *writable);

#endif
