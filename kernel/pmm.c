/*
 * Bitmap page allocator: one bit per 4 KiB page of [0, max_phys), 1 = used.
 *
 * Built in three passes so that the safe answer wins on overlap: every page
 * starts used; pages inside "available" map entries are freed; then pages
 * of every other entry type, the caller's reserved ranges, the low 1 MiB and
 * the bitmap itself are marked used again.
 *
 * Allocation is a first-fit scan with a moving hint; it runs at set-up time
 * (ring buffers, stacks, per-CPU areas), never on a trace path.
 */
#include <stdbool.h>
#include <stddef.h>
#include "kernel/pmm.h"
#include "baretrace/compiler.h"
#include "kernel/kstring.h"
#include "kernel/spinlock.h"

static uint8_t *bitmap;		/* 1 bit per page, 1 = used */
static uint64_t npages_total;	/* pages covered by the bitmap */
static uint64_t hint;		/* where the next scan starts */
static struct pmm_stats stats;
static struct spinlock pmm_lock;	/* rare: a waiter spins; pmm_alloc_nowait() only tries */

static void lock(void)
{
	spin_lock(&pmm_lock);
}

static void unlock(void)
{
	spin_unlock(&pmm_lock);
}

static bool test_bit(uint64_t pfn)
{
	return bitmap[pfn / 8] & (1u << (pfn % 8));
}

static void set_range(uint64_t start, uint64_t end, bool used)
{
	uint64_t first = start / PAGE_SIZE;
	uint64_t last = (end + PAGE_SIZE - 1) / PAGE_SIZE; /* round out when marking used */

	if (!used) {	/* round in when freeing: partial pages stay used */
		first = (start + PAGE_SIZE - 1) / PAGE_SIZE;
		last = end / PAGE_SIZE;
	}
	if (last > npages_total)
		last = npages_total;
	for (uint64_t p = first; p < last; p++) {
		if (used)
			bitmap[p / 8] |= (uint8_t)(1u << (p % 8));
		else
			bitmap[p / 8] &= (uint8_t)~(1u << (p % 8));
	}
}

static uint64_t count_free(void)
{
	uint64_t n = 0;

	for (uint64_t p = 0; p < npages_total; p++)
		n += !test_bit(p);
	return n;
}

static bool overlaps(uint64_t s, uint64_t e, const struct phys_range *r, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (s < r[i].end && r[i].start < e)
			return true;
	return false;
}

/* Does [s, e) touch a non-available map entry (firmware's, which wins)? */
static bool overlaps_unavailable(uint64_t s, uint64_t e, const struct mem_region *m,
				 unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (m[i].type != MEM_AVAILABLE && s < m[i].base + m[i].len && m[i].base < e)
			return true;
	return false;
}

const char *pmm_init(const struct mem_region *mmap, unsigned n,
		     const struct phys_range *reserved, unsigned nres,
		     uint64_t bitmap_limit, void *(*phys_to_virt)(uint64_t))
{
	uint64_t max_phys = 0, bytes, where = 0;

	memset(&stats, 0, sizeof(stats));
	bitmap = NULL;
	npages_total = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t end = mmap[i].base + mmap[i].len;
		if (mmap[i].type != MEM_AVAILABLE || end < mmap[i].base)
			continue;
		if (end > PMM_MAX_PHYS) {
			uint64_t s = mmap[i].base > PMM_MAX_PHYS ? mmap[i].base : PMM_MAX_PHYS;
			stats.ignored_bytes += end - s;
			end = PMM_MAX_PHYS;
		}
		if (end <= mmap[i].base)
			continue;	/* empty, or wholly above PMM_MAX_PHYS */
		if (end > max_phys)
			max_phys = end;
		stats.total_pages += (end - mmap[i].base) / PAGE_SIZE;
	}
	if (max_phys <= PMM_LOW_LIMIT)
		return "memory map lists no RAM above 1 MiB";

	npages_total = max_phys / PAGE_SIZE;
	bytes = ALIGN_UP((npages_total + 7) / 8, PAGE_SIZE);

	/* Find a home for the bitmap: available, mapped, free of reservations. */
	for (unsigned i = 0; i < n && !where; i++) {
		uint64_t s = ALIGN_UP(mmap[i].base, PAGE_SIZE);
		uint64_t e = ALIGN_DOWN(mmap[i].base + mmap[i].len, PAGE_SIZE);
		if (mmap[i].type != MEM_AVAILABLE)
			continue;
		if (s < PMM_LOW_LIMIT)
			s = PMM_LOW_LIMIT;
		for (; s + bytes <= e && s + bytes <= bitmap_limit; s += PAGE_SIZE) {
			if (!overlaps(s, s + bytes, reserved, nres) &&
			    !overlaps_unavailable(s, s + bytes, mmap, n)) {
				where = s;
				break;
			}
		}
	}
	if (!where)
		return "no room for the page bitmap below the mapped limit";

	bitmap = phys_to_virt(where);
	memset(bitmap, 0xFF, bytes);
	for (unsigned i = 0; i < n; i++)
		if (mmap[i].type == MEM_AVAILABLE && mmap[i].base < max_phys)
			set_range(mmap[i].base, mmap[i].base + mmap[i].len, false);
	for (unsigned i = 0; i < n; i++)
		if (mmap[i].type != MEM_AVAILABLE)
			set_range(mmap[i].base, mmap[i].base + mmap[i].len, true);
	for (unsigned i = 0; i < nres; i++)
		set_range(reserved[i].start, reserved[i].end, true);
	set_range(0, PMM_LOW_LIMIT, true);
	set_range(where, where + bytes, true);

	stats.max_phys = max_phys;
	stats.bitmap_phys = where;
	stats.bitmap_bytes = bytes;
	stats.free_pages = count_free();
	hint = PMM_LOW_LIMIT / PAGE_SIZE;
	return NULL;
}

static uint64_t scan(uint64_t from, uint64_t to, uint64_t npages, uint64_t align)
{
	uint64_t p = ALIGN_UP(from, align);

	while (p + npages <= to) {
		uint64_t k = 0;
		while (k < npages && !test_bit(p + k))
			k++;
		if (k == npages)
			return p;
		p = ALIGN_UP(p + k + 1, align);
	}
	return 0;
}

/* With the lock held: the scan and the bookkeeping of pmm_alloc(). */
static uint64_t alloc_locked(uint64_t npages, uint64_t align_pages)
{
	uint64_t p = scan(hint, npages_total, npages, align_pages);

	if (!p)
		p = scan(PMM_LOW_LIMIT / PAGE_SIZE, npages_total, npages, align_pages);
	if (p) {
		set_range(p * PAGE_SIZE, (p + npages) * PAGE_SIZE, true);
		stats.free_pages -= npages;
		hint = p + npages;
	}
	return p * PAGE_SIZE;
}

static bool args_ok(uint64_t npages, uint64_t align_pages)
{
	return bitmap && npages && npages <= npages_total && align_pages &&
	       !(align_pages & (align_pages - 1));
}

uint64_t pmm_alloc(uint64_t npages, uint64_t align_pages)
{
	uint64_t p;

	if (!args_ok(npages, align_pages))
		return 0;
	lock();
	p = alloc_locked(npages, align_pages);
	unlock();
	return p;
}

uint64_t pmm_alloc_nowait(uint64_t npages, uint64_t align_pages)
{
	uint64_t p;

	if (!args_ok(npages, align_pages) || !spin_trylock(&pmm_lock))
		return 0;
	p = alloc_locked(npages, align_pages);
	unlock();
	return p;
}

void pmm_free(uint64_t phys, uint64_t npages)
{
	uint64_t first = phys / PAGE_SIZE;

	if (!bitmap || phys % PAGE_SIZE || first + npages > npages_total)
		return;
	lock();
	for (uint64_t p = first; p < first + npages; p++) {
		if (test_bit(p)) {
			bitmap[p / 8] &= (uint8_t)~(1u << (p % 8));
			stats.free_pages++;
		}
	}
	if (first < hint)
		hint = first;
	unlock();
}

void pmm_get_stats(struct pmm_stats *st)
{
	lock();
	*st = stats;
	unlock();
}
