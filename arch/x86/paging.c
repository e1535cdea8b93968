/*
 * Identity map beyond the first 4 GiB. boot/entry.asm built PML4[0] ->
 * boot_pdpt with slots 0..3 filled; each further GiB needs one page
 * directory (512 entries of 2 MiB), taken from the page allocator, which
 * hands out pages below 4 GiB first, so the new tables are themselves
 * mapped when we fill them.
 *
 * Read-only code. paging_protect() splits each 2 MiB page that holds part
 * of a range into 512 4 KiB pages with the same attributes and clears RW
 * on the range's own 4 KiB pages (the kernel's .text: text_poke.c). With
 * CR0.WP set (boot/entry.asm) a store there faults, ring 0 included:
 *
 *   PD[1] (0x200000..0x3FFFFF) -> PT:  [0x200000 .. __text_end)  P      (R-X)
 *                                      [__text_end .. 0x400000)  P | RW
 *
 * A window (paging_map_window()) is one page table at an address outside
 * the identity map, all entries empty, for the caller to fill: text_poke()
 * maps a code page there writable for the length of one store.
 *
 * The virtual address space:
 *
 *   PML4[0]         identity map of RAM and low MMIO, 2 MiB pages (0..512 GiB)
 *   PML4[1..255]    device registers above 512 GiB, at their own address,
 *                   4 KiB pages, only the ranges drivers ask for
 *   PML4[256..511]  text_poke()'s window (upper half: no physical address)
 */
#include <stdbool.h>
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/paging.h>
#include "baretrace/compiler.h"
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/pmm.h"

#define PTE_P	(1ull << 0)
#define PTE_RW	(1ull << 1)
#define PTE_PWT	(1ull << 3)
#define PTE_PCD	(1ull << 4)
#define PTE_PS	(1ull << 7)
#define PTE_G	(1ull << 8)
#define PTE_PAT_2M	(1ull << 12)	/* PAT bit of a 2 MiB entry (bit 7 in a 4 KiB one) */
#define PTE_NX	(1ull << 63)
#define PTE_ADDR	0x000FFFFFFFFFF000ull
#define PAGE_4K	4096ull
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

static uint64_t *table_at(uint64_t entry)
{
	return (uint64_t *)(uintptr_t)(entry & PTE_ADDR);
}

/* A zeroed page for a paging structure, below 4 GiB (so identity-mapped). */
static uint64_t *new_table(void)
{
	uint64_t phys = pmm_alloc(1, 1);

	if (!phys || phys >= PAGING_BOOT_LIMIT)
		return NULL;
	memset((void *)(uintptr_t)phys, 0, PAGE_4K);
	return (uint64_t *)(uintptr_t)phys;
}

/* The page-directory entry mapping va in the identity map, or NULL. */
static uint64_t *pd_entry(uint64_t va)
{
	uint64_t *pdpt, *pd;

	if (va >= mapped_limit || !(boot_pml4[0] & PTE_P))
		return NULL;
	pdpt = table_at(boot_pml4[0]);
	if (!(pdpt[va / GIB] & PTE_P))
		return NULL;
	pd = table_at(pdpt[va / GIB]);
	return &pd[(va / MIB2) % 512];
}

/* Turn the 2 MiB page holding va into a page table of 4 KiB pages. */
static bool split_2m(uint64_t va)
{
	uint64_t *pde = pd_entry(va), *pt, base, flags;

	if (!pde || !(*pde & PTE_P))
		return false;
	if (!(*pde & PTE_PS))
		return true;	/* already 4 KiB pages */
	if (*pde & PTE_PAT_2M)
		return false;	/* nothing here sets PAT: not worth moving the bit */
	pt = new_table();
	if (!pt)
		return false;
	base = *pde & PTE_ADDR & ~(MIB2 - 1);
	flags = *pde & (PTE_P | PTE_RW | PTE_PWT | PTE_PCD | PTE_G | PTE_NX);
	for (unsigned i = 0; i < 512; i++)
		pt[i] = (base + i * PAGE_4K) | flags;
	*pde = (uint64_t)(uintptr_t)pt | PTE_P | PTE_RW;	/* the PT's own entries decide */
	return true;
}

bool paging_protect(uint64_t start, uint64_t end)
{
	start = ALIGN_DOWN(start, PAGE_4K);
	end = ALIGN_UP(end, PAGE_4K);
	for (uint64_t va = ALIGN_DOWN(start, MIB2); va < end; va += MIB2)
		if (!split_2m(va))
			return false;
	for (uint64_t va = start; va < end; va += PAGE_4K)
		table_at(*pd_entry(va))[(va / PAGE_4K) % 512] &= ~PTE_RW;
	write_cr3(read_cr3());	/* flush the TLB: the 2 MiB translations are gone */
	return true;
}

uint64_t *paging_map_window(uint64_t va)
{
	unsigned i4 = (va >> 39) % 512, i3 = (va >> 30) % 512, i2 = (va >> 21) % 512;
	uint64_t *pdpt, *pd, *pt;

	if (i4 == 0 || va % MIB2 || boot_pml4[i4] & PTE_P)
		return NULL;	/* PML4[0] is the identity map; slot taken */
	pdpt = new_table();
	pd = pdpt ? new_table() : NULL;
	pt = pd ? new_table() : NULL;
	if (!pt)
		return NULL;	/* the few pages taken are lost: boot is failing anyway */
	pd[i2] = (uint64_t)(uintptr_t)pt | PTE_P | PTE_RW;
	pdpt[i3] = (uint64_t)(uintptr_t)pd | PTE_P | PTE_RW;
	boot_pml4[i4] = (uint64_t)(uintptr_t)pdpt | PTE_P | PTE_RW;
	return pt;
}

uint64_t paging_lookup(uint64_t va, uint64_t *page_size, bool *writable)
{
	unsigned idx[4] = { (va >> 39) % 512, (va >> 30) % 512, (va >> 21) % 512, (va >> 12) % 512 };
	uint64_t *t = boot_pml4, e = 0, size = 512 * 512 * GIB;	/* 4 levels of 512 */
	bool rw = true;

	for (unsigned level = 0; level < 4; level++) {
		e = t[idx[level]];
		size /= 512;
		if (!(e & PTE_P))
			return 0;
		rw &= !!(e & PTE_RW);
		if (level == 3 || (level > 0 && (e & PTE_PS)))
			break;
		t = table_at(e);
	}
	*page_size = size;
	*writable = rw;
	return e;
}

/*
 * The 4 KiB entry for va, with the tables on the way made as needed; NULL
 * if a page could not be had or a large page is in the way. Only for
 * addresses the identity map's PML4 slot 0 does not cover.
 */
static uint64_t *pte_make(uint64_t va)
{
	uint64_t *t = boot_pml4;

	for (unsigned shift = 39; shift > 12; shift -= 9) {
		uint64_t *e = &t[(va >> shift) % 512];

		if (!(*e & PTE_P)) {
			uint64_t *next = new_table();

			if (!next)
				return NULL;
			*e = (uint64_t)(uintptr_t)next | PTE_P | PTE_RW;
		} else if (*e & PTE_PS) {
			return NULL;
		}
		t = table_at(*e);
	}
	return &t[(va >> 12) % 512];
}

/*
 * Registers above the identity map's 512 GiB (UEFI firmware puts 64-bit
 * BARs high: OVMF's xHCI at 896 GiB), mapped at their own address in 4 KiB
 * pages, only they: in PML4 slots 1..255, which the identity map never
 * fills and text_poke()'s window (upper half) never uses. Lower-half
 * addresses only: physical addresses from 2^47 up have no identity.
 */
static bool map_mmio_high(uint64_t start, uint64_t end)
{
	if (end > PAGING_MMIO_LIMIT)
		return false;
	for (uint64_t va = start; va < end; va += PAGE_4K) {
		uint64_t *pte = pte_make(va);

		if (!pte)
			return false;
		*pte = va | PTE_P | PTE_RW | PTE_PCD | PTE_PWT;
	}
	write_cr3(read_cr3());
	return true;
}

bool paging_map_mmio(uint64_t start, uint64_t end)
{
	start = ALIGN_DOWN(start, PAGE_4K);
	end = ALIGN_UP(end, PAGE_4K);
	if (start >= PAGING_MAX_LIMIT)
		return map_mmio_high(start, end);
	if (end > mapped_limit && paging_map_identity(end) < end)
		return false;
	for (uint64_t va = ALIGN_DOWN(start, MIB2); va < end; va += MIB2)
		if (!split_2m(va))
			return false;
	for (uint64_t va = start; va < end; va += PAGE_4K)
		table_at(*pd_entry(va))[(va / PAGE_4K) % 512] |= PTE_PCD | PTE_PWT;
	write_cr3(read_cr3());
	return true;
}
