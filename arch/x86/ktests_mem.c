/*
 * In-kernel test of RAM above 4 GiB: the boot page tables map only the
 * first 4 GiB, paging.c maps the rest once the memory map is known. The
 * last page of the highest RAM region must be mapped and hold what is
 * written to it. (It is free RAM: the allocator hands out low pages first,
 * and the test puts the old contents back.)
 */
#include <stddef.h>
#include <stdint.h>
#include <arch/paging.h>
#include "kernel/bootinfo.h"
#include "kernel/ktest.h"
#include "kernel/pmm.h"

KTEST(mem_above_4g)
{
	struct pmm_stats st;
	uint64_t top = 0;

	pmm_get_stats(&st);
	if (st.max_phys <= PAGING_BOOT_LIMIT)
		return KT_SKIP("no RAM above 4 GiB");
	KT_ASSERT(paging_mapped_limit() >= st.max_phys);
	for (unsigned i = 0; i < boot_info.mmap_count; i++) {
		const struct mem_region *r = &boot_info.mmap[i];
		uint64_t end = ALIGN_DOWN(r->base + r->len, PAGE_SIZE);
		if (r->type == MEM_AVAILABLE && end > top && end - PAGE_SIZE >= r->base)
			top = end;
	}
	KT_ASSERT(top > PAGING_BOOT_LIMIT && top <= st.max_phys);

	volatile uint64_t *p = (volatile uint64_t *)(uintptr_t)(top - PAGE_SIZE);
	for (unsigned i = 0; i < PAGE_SIZE / 8; i += 64) {
		uint64_t old = p[i], pattern = 0x5AA5F00Dull << 32 | (top >> 12) | i;
		p[i] = pattern;
		uint64_t back = p[i];
		p[i] = old;
		KT_ASSERT(back == pattern);
	}
	return NULL;
}
