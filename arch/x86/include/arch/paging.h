/* The kernel's identity map of physical memory. */
#ifndef ARCH_PAGING_H
#define ARCH_PAGING_H

#include <stdint.h>

#define PAGING_BOOT_LIMIT	0x100000000ull	/* boot/entry.asm maps 0..4 GiB */
#define PAGING_MAX_LIMIT	(512ull << 30)	/* one PDPT: 512 GiB */

/*
 * Extend the identity map with 2 MiB pages up to end (rounded up to 1 GiB).
 * Returns the new mapped limit (capped at PAGING_MAX_LIMIT).
 */
uint64_t paging_map_identity(uint64_t end);
uint64_t paging_mapped_limit(void);

#endif
