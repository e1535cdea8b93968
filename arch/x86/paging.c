/*
 * Identity map beyond the first 4 GiB. boot/entry.asm built PML4[0] ->
 * boot_pdpt with slots 0..3 filled; each further GiB needs one page
 * directory (512 entries of 2 MiB), taken from the page allocator, which
 * hands out pages below 4 GiB first, so the new tables are themselves
 * mapped when we fill them.
 */
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/paging.h>
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/pmm.h"

#define PTE_P	(1ull << 0)
#define PTE_RW	(1ull << 1)
#define PTE_PS	(1ull << 7)
#define GIB	(1ull << 30)
#define MIB2	(2ull << 20)

extern uint64_t boot_pml4[512];
static uint64_t mapped_limit = PAGING_BOOT_LIMIT;

uint64_t paging_mapped_limit(void)
{
	return mapped_limit;
}

uint64_t paging_map_identity(uint64_t end)
{
	uint64_t *pdpt = (uint64_t *)(uintptr_t)(boot_pml4[0] & ~0xFFFull);

	if (end > PAGING_MAX_LIMIT) {
		printk("paging: RAM up to 0x%llx but only the first %llu GiB are mapped\n",
		       (unsigned long long)end, (unsigned long long)(PAGING_MAX_LIMIT / GIB));
		end = PAGING_MAX_LIMIT;
	}
	while (mapped_limit < end) {
		unsigned slot = mapped_limit / GIB;
		uint64_t pd_phys = pmm_alloc(1, 1);
		if (!pd_phys || pd_phys >= PAGING_BOOT_LIMIT) {
			printk("paging: no page for a page directory; mapped up to 0x%llx\n",
			       (unsigned long long)mapped_limit);
			break;
		}
		uint64_t *pd = (uint64_t *)(uintptr_t)pd_phys;
		for (unsigned i = 0; i < 512; i++)
			pd[i] = (mapped_limit + i * MIB2) | PTE_P | PTE_RW | PTE_PS;
		pdpt[slot] = pd_phys | PTE_P | PTE_RW;
		mapped_limit += GIB;
	}
	write_cr3(read_cr3());	/* flush the TLB */
	return mapped_limit;
}
