/*
 * Host tests of the page allocator (kernel/pmm.c), built from the kernel's
 * own source under ASan and UBSan.
 *
 * Physical memory is faked: a 64 MiB host arena stands for physical
 * [0, 64 MiB), and phys_to_virt maps into it (physical 0 = arena start).
 * The allocator only ever writes its bitmap, so memory maps may describe
 * RAM far beyond the arena as long as bitmap_limit keeps the bitmap inside
 * it. The arena is filled with a pattern first; every test then checks that
 * nothing outside the bitmap was written.
 *
 * Each test checks what a caller relies on: pages handed out are inside
 * available RAM, outside every reservation and the low 1 MiB, aligned as
 * asked, never handed out twice, and free_pages always equals the number
 * of clear bits in the bitmap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/pmm.h"

#define KiB		(1ull << 10)
#define MiB		(1ull << 20)
#define GiB		(1ull << 30)
#define ARENA_SIZE	(64 * MiB)
#define ARENA_FILL	0xa5
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static uint8_t *arena;
static unsigned p2v_calls;

static void *phys_to_virt(uint64_t phys)
{
	p2v_calls++;
	if (phys >= ARENA_SIZE)
		fail_msg("phys_to_virt(0x%llx): outside the fake physical memory",
			 (unsigned long long)phys);
	return arena + phys;
}

static int setup(void **state)
{
	(void)state;
	arena = aligned_alloc(PAGE_SIZE, ARENA_SIZE);
	assert_non_null(arena);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(arena);
	return 0;
}

static int fill_arena(void **state)
{
	(void)state;
	memset(arena, ARENA_FILL, ARENA_SIZE);
	p2v_calls = 0;
	return 0;
}

#define MR(b, l, t)	((struct mem_region){ (b), (l), (t) })
#define PR(s, e)	((struct phys_range){ (s), (e) })

/* What the test knows about the layout it gave pmm_init. */
struct layout {
	const struct mem_region *mmap;
	unsigned n;
	const struct phys_range *res;
	unsigned nres;
	uint64_t limit;
};

static struct pmm_stats st;

static const char *init(const struct layout *l)
{
	const char *err = pmm_init(l->mmap, l->n, l->res, l->nres, l->limit, phys_to_virt);

	pmm_get_stats(&st);
	return err;
}

/* Is the page at phys free RAM by the layout alone (bitmap aside)? */
static bool page_in_free_ram(const struct layout *l, uint64_t phys)
{
	uint64_t end = phys + PAGE_SIZE;
	bool in_ram = false;

	if (phys < PMM_LOW_LIMIT)
		return false;
	for (unsigned i = 0; i < l->n; i++) {
		uint64_t s = l->mmap[i].base, e = s + l->mmap[i].len;
		bool overlap = phys < e && s < end;

		if (l->mmap[i].type == MEM_AVAILABLE && s <= phys && end <= e)
			in_ram = true;
		if (l->mmap[i].type != MEM_AVAILABLE && overlap)
			return false;
	}
	for (unsigned i = 0; i < l->nres; i++)
		if (phys < l->res[i].end && l->res[i].start < end)
			return false;
	return in_ram;
}

/* May the allocator hand out the page at phys? */
static bool page_allowed(const struct layout *l, uint64_t phys)
{
	if (phys < st.bitmap_phys + st.bitmap_bytes && st.bitmap_phys < phys + PAGE_SIZE)
		return false;
	return page_in_free_ram(l, phys);
}

/* Free pages according to the bitmap itself. */
static uint64_t bitmap_free_pages(void)
{
	const uint8_t *bm = arena + st.bitmap_phys;
	uint64_t n = 0;

	for (uint64_t p = 0; p < st.max_phys / PAGE_SIZE; p++)
		n += !(bm[p / 8] & (1u << (p % 8)));
	return n;
}

/* Nothing outside the bitmap was written. */
static void check_arena_untouched(void)
{
	static uint8_t pattern[PAGE_SIZE];
	uint64_t bs = st.bitmap_phys, be = st.bitmap_phys + st.bitmap_bytes;

	memset(pattern, ARENA_FILL, sizeof(pattern));
	/* Page by page: the bitmap is page-aligned and a whole number of pages. */
	for (uint64_t i = 0; i < ARENA_SIZE; i += PAGE_SIZE) {
		if (i >= bs && i < be)
			continue;
		if (memcmp(arena + i, pattern, PAGE_SIZE))
			fail_msg("arena page 0x%llx written (bitmap is 0x%llx..0x%llx)",
				 (unsigned long long)i, (unsigned long long)bs,
				 (unsigned long long)be);
	}
}

/* The bitmap's home: page-aligned, in RAM, below the limit, reserved. */
static void check_bitmap_placement(const struct layout *l)
{
	uint64_t npages = st.max_phys / PAGE_SIZE;

	assert_int_equal(st.bitmap_phys % PAGE_SIZE, 0);
	assert_int_equal(st.bitmap_bytes, ((npages + 7) / 8 + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE);
	assert_true(st.bitmap_phys + st.bitmap_bytes <= l->limit);
	for (uint64_t p = st.bitmap_phys; p < st.bitmap_phys + st.bitmap_bytes; p += PAGE_SIZE)
		if (!page_in_free_ram(l, p))
			fail_msg("bitmap page 0x%llx is not free available RAM",
				 (unsigned long long)p);
}

/*
 * Allocate single pages until none is left, checking each; return how many
 * were handed out. The pages are recorded in out (if not NULL).
 */
static uint64_t drain(const struct layout *l, uint64_t *out, uint64_t cap)
{
	uint64_t n = 0, free_before = st.free_pages;
	uint8_t *seen = calloc(1, (st.max_phys / PAGE_SIZE + 7) / 8 + 1);

	assert_non_null(seen);
	for (;;) {
		uint64_t p = pmm_alloc(1, 1);
		if (!p)
			break;
		uint64_t pfn = p / PAGE_SIZE;
		if (p % PAGE_SIZE || p >= st.max_phys || !page_allowed(l, p))
			fail_msg("handed out page 0x%llx, which is not allowed",
				 (unsigned long long)p);
		if (seen[pfn / 8] & (1u << (pfn % 8)))
			fail_msg("page 0x%llx handed out twice", (unsigned long long)p);
		seen[pfn / 8] |= 1u << (pfn % 8);
		if (out && n < cap)
			out[n] = p;
		n++;
		assert_true(n <= free_before);
	}
	free(seen);
	pmm_get_stats(&st);
	assert_int_equal(n, free_before);
	assert_int_equal(st.free_pages, 0);
	assert_int_equal(bitmap_free_pages(), 0);
	return n;
}

/* Every page the layout allows, counted independently of the allocator. */
static uint64_t allowed_pages(const struct layout *l)
{
	uint64_t n = 0;

	for (uint64_t p = 0; p < st.max_phys; p += PAGE_SIZE)
		n += page_allowed(l, p);
	return n;
}

/* ---- tests ---------------------------------------------------------------------- */

/* A SeaBIOS-like map, kernel image and an unaligned boot information block. */
static const struct mem_region bios_map[] = {
	MR(0, 0x9fc00, MEM_AVAILABLE),
	MR(0x9fc00, 0x400, MEM_RESERVED),
	MR(0xf0000, 0x10000, MEM_RESERVED),
	MR(0x100000, 31 * MiB, MEM_AVAILABLE),
	MR(32 * MiB, 128 * KiB, MEM_RESERVED),
};
static const struct phys_range bios_res[] = {
	PR(1 * MiB, 1 * MiB + 0x21345),			/* kernel image */
	PR(1 * MiB + 0x22100, 1 * MiB + 0x22300),	/* boot information */
};
static const struct layout bios = {
	bios_map, ARRAY_SIZE(bios_map), bios_res, ARRAY_SIZE(bios_res), 64 * MiB,
};

static void test_bios_map(void **state)
{
	uint64_t n;

	(void)state;
	assert_null(init(&bios));
	assert_int_equal(p2v_calls, 1);
	assert_int_equal(st.max_phys, 32 * MiB);
	assert_int_equal(st.total_pages, (0x9fc00 + 31 * MiB) / PAGE_SIZE);
	assert_int_equal(st.ignored_bytes, 0);
	assert_int_equal(st.bitmap_bytes, PAGE_SIZE);	/* 8192 bits */
	check_bitmap_placement(&bios);
	/* 31 MiB of RAM above 1 MiB, less the kernel (34 pages, rounded out),
	 * the boot information (1 page) and the bitmap (1 page). */
	assert_int_equal(st.free_pages, 31 * MiB / PAGE_SIZE - 34 - 1 - 1);
	assert_int_equal(st.free_pages, allowed_pages(&bios));
	assert_int_equal(st.free_pages, bitmap_free_pages());

	n = drain(&bios, NULL, 0);
	assert_int_equal(n, 31 * MiB / PAGE_SIZE - 36);
	assert_int_equal(pmm_alloc(1, 1), 0);	/* exhausted stays exhausted */
	check_arena_untouched();
}

/* OVMF lists low memory as available in one entry with the rest. */
static void test_low_mib_never_handed_out(void **state)
{
	static const struct mem_region map[] = { MR(0, 16 * MiB, MEM_AVAILABLE) };
	static const struct layout l = { map, 1, NULL, 0, 64 * MiB };

	(void)state;
	assert_null(init(&l));
	assert_true(st.bitmap_phys >= PMM_LOW_LIMIT);
	assert_int_equal(st.free_pages, 15 * MiB / PAGE_SIZE - 1);
	drain(&l, NULL, 0);	/* checks every page against page_allowed() */
	check_arena_untouched();

	/* Nor does a large aligned request land low. */
	assert_null(init(&l));
	uint64_t p = pmm_alloc(1024, 1024);
	assert_int_equal(p, 4 * MiB);
}

/* Holes (unlisted), unaligned entries: partial pages are never handed out. */
static void test_holes_and_partial_pages(void **state)
{
	static const struct mem_region map[] = {
		MR(0x100000, 7 * MiB, MEM_AVAILABLE),		/* 1..8 MiB */
		/* hole 8..12 MiB */
		MR(12 * MiB + 0x123, 0x5000, MEM_AVAILABLE),	/* 4 whole pages inside */
		/* hole */
		MR(16 * MiB, 4 * MiB - 0x10, MEM_AVAILABLE),	/* last page partial */
		MR(0xffffffffffff0000ull, 0x20000, MEM_AVAILABLE), /* wraps: ignored */
		MR(24 * MiB, 0, MEM_AVAILABLE),			/* empty */
	};
	static const struct layout l = { map, ARRAY_SIZE(map), NULL, 0, 64 * MiB };

	(void)state;
	assert_null(init(&l));
	assert_int_equal(st.max_phys, 20 * MiB - 0x10);
	assert_int_equal(st.free_pages, allowed_pages(&l));
	assert_int_equal(st.free_pages, 7 * MiB / PAGE_SIZE + 4 + 4 * MiB / PAGE_SIZE - 1 - 1);
	drain(&l, NULL, 0);
	check_arena_untouched();
}

/* Non-available entries win over available ones, whatever the order. */
static void test_overlapping_reserved_entries(void **state)
{
	static const struct mem_region map[] = {
		MR(8 * MiB, 1 * MiB, MEM_RESERVED),		/* before the RAM entry */
		MR(0x100000, 31 * MiB, MEM_AVAILABLE),
		MR(10 * MiB + 0x800, 0x1000, MEM_ACPI_RECLAIMABLE), /* straddles 2 pages */
		MR(12 * MiB, 64 * KiB, MEM_ACPI_NVS),
		MR(14 * MiB, 4 * KiB, MEM_BAD),
		MR(15 * MiB, 8 * KiB, 7),			/* unknown type */
		MR(20 * MiB, 2 * MiB, MEM_AVAILABLE),		/* listed twice */
		MR(31 * MiB, 2 * MiB, MEM_RESERVED),		/* runs past the RAM */
	};
	static const struct layout l = { map, ARRAY_SIZE(map), NULL, 0, 64 * MiB };

	(void)state;
	assert_null(init(&l));
	assert_int_equal(st.max_phys, 32 * MiB);
	assert_int_equal(st.free_pages, allowed_pages(&l));
	assert_int_equal(st.free_pages, 31 * MiB / PAGE_SIZE - 256 - 2 - 16 - 1 - 2 - 256 - 1);
	drain(&l, NULL, 0);
	check_arena_untouched();
}

/* The caller's reserved ranges: kernel, boot information, modules. */
static void test_reserved_ranges(void **state)
{
	static const struct mem_region map[] = { MR(0x100000, 63 * MiB, MEM_AVAILABLE) };
	static const struct phys_range res[] = {
		PR(1 * MiB, 5 * MiB),			/* kernel: covers the first place */
		PR(6 * MiB + 1, 6 * MiB + 2),		/* one byte: one page */
		PR(7 * MiB - 1, 7 * MiB + 1),		/* two bytes: two pages */
		PR(9 * MiB, 9 * MiB),			/* empty: nothing */
		PR(60 * MiB, 80 * MiB),			/* past the end of RAM */
	};
	static const struct layout l = { map, 1, res, ARRAY_SIZE(res), 64 * MiB };

	(void)state;
	assert_null(init(&l));
	check_bitmap_placement(&l);
	assert_int_equal(st.bitmap_phys, 5 * MiB);	/* first free place */
	assert_int_equal(st.free_pages, 59 * MiB / PAGE_SIZE - 1024 - 1 - 2 - 1);
	assert_int_equal(st.free_pages, allowed_pages(&l));
	drain(&l, NULL, 0);
	check_arena_untouched();
}

static void test_alignment(void **state)
{
	(void)state;
	assert_null(init(&bios));
	for (uint64_t align = 1; align <= 1024; align <<= 1) {
		uint64_t p = pmm_alloc(3, align);
		assert_int_not_equal(p, 0);
		if (p % (align * PAGE_SIZE))
			fail_msg("align %llu pages: got 0x%llx", (unsigned long long)align,
				 (unsigned long long)p);
		for (uint64_t q = p; q < p + 3 * PAGE_SIZE; q += PAGE_SIZE)
			assert_true(page_allowed(&bios, q));
	}
	/* A 2 MiB-aligned 2 MiB block, as for a huge page. */
	uint64_t huge = pmm_alloc(512, 512);
	assert_int_not_equal(huge, 0);
	assert_int_equal(huge % (2 * MiB), 0);

	/* Invalid requests. */
	assert_int_equal(pmm_alloc(1, 0), 0);
	assert_int_equal(pmm_alloc(1, 3), 0);
	assert_int_equal(pmm_alloc(1, 6), 0);
	assert_int_equal(pmm_alloc(0, 1), 0);
	assert_int_equal(pmm_alloc(st.max_phys / PAGE_SIZE + 1, 1), 0);
	assert_int_equal(pmm_alloc(UINT64_MAX, 1), 0);
	assert_int_equal(pmm_alloc(1, 1ull << 62), 0);
	/* More than the largest free run. */
	assert_int_equal(pmm_alloc(31 * MiB / PAGE_SIZE, 1), 0);

	uint64_t before = st.free_pages;
	pmm_get_stats(&st);
	assert_int_equal(st.free_pages, before - 11 * 3 - 512);
	assert_int_equal(st.free_pages, bitmap_free_pages());
	check_arena_untouched();
}

static void test_contiguous(void **state)
{
	(void)state;
	assert_null(init(&bios));
	/* Contiguous runs never cross a reserved page. */
	for (int i = 0; i < 50; i++) {
		uint64_t p = pmm_alloc(37, 1);
		assert_int_not_equal(p, 0);
		for (uint64_t q = p; q < p + 37 * PAGE_SIZE; q += PAGE_SIZE)
			if (!page_allowed(&bios, q))
				fail_msg("run at 0x%llx covers 0x%llx", (unsigned long long)p,
					 (unsigned long long)q);
	}
	pmm_get_stats(&st);
	assert_int_equal(st.free_pages, bitmap_free_pages());
}

static void test_free_and_realloc(void **state)
{
	static uint64_t pages[8192];
	uint64_t n;

	(void)state;
	assert_null(init(&bios));
	uint64_t initial = st.free_pages;
	n = drain(&bios, pages, ARRAY_SIZE(pages));
	assert_true(n <= ARRAY_SIZE(pages));

	/* One page freed in the middle is the next one handed out. */
	pmm_free(pages[n / 2], 1);
	pmm_get_stats(&st);
	assert_int_equal(st.free_pages, 1);
	assert_int_equal(pmm_alloc(1, 1), pages[n / 2]);
	assert_int_equal(pmm_alloc(1, 1), 0);

	/* Freeing twice counts once. */
	pmm_free(pages[3], 1);
	pmm_free(pages[3], 1);
	pmm_get_stats(&st);
	assert_int_equal(st.free_pages, 1);
	assert_int_equal(bitmap_free_pages(), 1);
	assert_int_equal(pmm_alloc(1, 1), pages[3]);

	/* Bad frees are ignored: unaligned, past the end. */
	pmm_free(pages[7] + 1, 1);
	pmm_free(st.max_phys, 1);
	pmm_free(st.max_phys - PAGE_SIZE, 2);
	pmm_free(pages[7], UINT64_MAX);
	pmm_get_stats(&st);
	assert_int_equal(st.free_pages, 0);

	/* A freed run is found again whole. */
	uint64_t run = pages[100];
	bool contiguous = true;
	for (int i = 0; i < 16; i++)
		contiguous &= pages[100 + i] == run + i * PAGE_SIZE;
	assert_true(contiguous);
	pmm_free(run, 16);
	assert_int_equal(pmm_alloc(16, 1), run);

	/* Everything back: the same count as at the start. */
	for (uint64_t i = 0; i < n; i++)
		pmm_free(pages[i], 1);
	pmm_get_stats(&st);
	assert_int_equal(st.free_pages, initial);
	assert_int_equal(bitmap_free_pages(), initial);
	check_arena_untouched();
}

/* Random allocations and frees: the counters never drift from the bitmap. */
static void test_stats_consistency(void **state)
{
	static struct { uint64_t phys, n; } live[512];
	unsigned nlive = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	assert_null(init(&bios));
	for (int step = 0; step < 3000; step++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (nlive < ARRAY_SIZE(live) && (x & 3) != 0) {
			uint64_t n = 1 + (x >> 8) % 64, align = 1ull << ((x >> 20) % 6);
			uint64_t p = pmm_alloc(n, align);
			if (p) {
				assert_int_equal(p % (align * PAGE_SIZE), 0);
				live[nlive].phys = p;
				live[nlive++].n = n;
			}
		} else if (nlive) {
			unsigned i = (x >> 32) % nlive;
			pmm_free(live[i].phys, live[i].n);
			live[i] = live[--nlive];
		}
		if (step % 100 == 0) {
			pmm_get_stats(&st);
			assert_int_equal(st.free_pages, bitmap_free_pages());
		}
	}
	/* No two live blocks overlap. */
	for (unsigned i = 0; i < nlive; i++)
		for (unsigned j = i + 1; j < nlive; j++)
			assert_false(live[i].phys < live[j].phys + live[j].n * PAGE_SIZE &&
				     live[j].phys < live[i].phys + live[i].n * PAGE_SIZE);
	pmm_get_stats(&st);
	assert_int_equal(st.free_pages, bitmap_free_pages());
	check_arena_untouched();
}

/* The bitmap goes where it is mapped and owned by nobody else. */
static void test_bitmap_placement(void **state)
{
	(void)state;
	/* 8 GiB of RAM: a 256 KiB bitmap; the first region is too small for it,
	 * the second starts with the kernel. */
	static const struct mem_region map1[] = {
		MR(0x100000, 128 * KiB, MEM_AVAILABLE),
		MR(2 * MiB, 30 * MiB, MEM_AVAILABLE),
		MR(4 * GiB, 4 * GiB, MEM_AVAILABLE),
	};
	static const struct phys_range res1[] = { PR(2 * MiB, 3 * MiB + 5) };
	static const struct layout l1 = { map1, 3, res1, 1, 64 * MiB };
	assert_null(init(&l1));
	assert_int_equal(st.bitmap_bytes, 256 * KiB);
	assert_int_equal(st.bitmap_phys, 3 * MiB + PAGE_SIZE);
	check_bitmap_placement(&l1);
	assert_int_equal(st.free_pages, bitmap_free_pages());
	check_arena_untouched();

	/* RAM below the limit is all taken: the bitmap goes nowhere above it. */
	fill_arena(NULL);
	static const struct layout l2 = { map1, 3, res1, 1, 3 * MiB };
	assert_non_null(init(&l2));
	assert_int_equal(p2v_calls, 0);
	check_arena_untouched();

	/* A firmware-reserved entry inside available RAM is not a home either. */
	fill_arena(NULL);
	static const struct mem_region map3[] = {
		MR(0x100000, 31 * MiB, MEM_AVAILABLE),
		MR(0x100000, 2 * MiB, MEM_ACPI_NVS),
	};
	static const struct layout l3 = { map3, 2, NULL, 0, 64 * MiB };
	assert_null(init(&l3));
	check_bitmap_placement(&l3);
	assert_true(st.bitmap_phys >= 3 * MiB);
	check_arena_untouched();

	/* Exactly enough room below the limit. */
	fill_arena(NULL);
	static const struct mem_region map4[] = { MR(0x100000, 31 * MiB, MEM_AVAILABLE) };
	static const struct layout l4 = { map4, 1, NULL, 0, PMM_LOW_LIMIT + PAGE_SIZE };
	assert_null(init(&l4));
	assert_int_equal(st.bitmap_phys, PMM_LOW_LIMIT);
	static const struct layout l5 = { map4, 1, NULL, 0, PMM_LOW_LIMIT + PAGE_SIZE - 1 };
	assert_non_null(init(&l5));
}

static void test_init_errors(void **state)
{
	const char *err;

	(void)state;
	/* Nothing, or nothing above 1 MiB. */
	static const struct layout empty = { NULL, 0, NULL, 0, 64 * MiB };
	err = init(&empty);
	assert_non_null(err);
	assert_non_null(strstr(err, "1 MiB"));

	static const struct mem_region low[] = {
		MR(0, 0x9fc00, MEM_AVAILABLE),
		MR(0x100000, 63 * MiB, MEM_RESERVED),
		MR(0x100000, 16 * MiB, MEM_ACPI_RECLAIMABLE),
	};
	static const struct layout l_low = { low, 3, NULL, 0, 64 * MiB };
	err = init(&l_low);
	assert_non_null(err);
	assert_non_null(strstr(err, "1 MiB"));

	static const struct mem_region exact[] = { MR(0, PMM_LOW_LIMIT, MEM_AVAILABLE) };
	static const struct layout l_exact = { exact, 1, NULL, 0, 64 * MiB };
	assert_non_null(init(&l_exact));

	/* RAM above 1 MiB, but every page of it reserved by the caller. */
	static const struct mem_region ram[] = { MR(0x100000, 15 * MiB, MEM_AVAILABLE) };
	static const struct phys_range all[] = { PR(0, 16 * MiB) };
	static const struct layout l_all = { ram, 1, all, 1, 64 * MiB };
	err = init(&l_all);
	assert_non_null(err);
	assert_non_null(strstr(err, "bitmap"));

	/* No room below the mapped limit. */
	static const struct layout l_lim = { ram, 1, NULL, 0, PMM_LOW_LIMIT };
	err = init(&l_lim);
	assert_non_null(err);
	assert_non_null(strstr(err, "bitmap"));
	assert_int_equal(p2v_calls, 0);

	/* After a failed init nothing is handed out. */
	assert_int_equal(pmm_alloc(1, 1), 0);
	pmm_free(2 * MiB, 1);
	pmm_get_stats(&st);
	assert_int_equal(st.free_pages, 0);
	check_arena_untouched();
}

/* RAM above PMM_MAX_PHYS is left alone and counted as ignored. */
static void test_ram_above_max_phys(void **state)
{
	static const struct mem_region map[] = {
		MR(0x100000, 31 * MiB, MEM_AVAILABLE),
		MR(PMM_MAX_PHYS, 16 * GiB, MEM_AVAILABLE),
		MR(PMM_MAX_PHYS + 64 * GiB, 1 * GiB, MEM_AVAILABLE),
	};
	static const struct layout l = { map, ARRAY_SIZE(map), NULL, 0, 64 * MiB };

	(void)state;
	assert_null(init(&l));
	assert_int_equal(st.ignored_bytes, 17 * GiB);
	assert_int_equal(st.max_phys, 32 * MiB);
	assert_int_equal(st.free_pages, bitmap_free_pages());
	drain(&l, NULL, 0);
	check_arena_untouched();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_bios_map, fill_arena),
		cmocka_unit_test_setup(test_low_mib_never_handed_out, fill_arena),
		cmocka_unit_test_setup(test_holes_and_partial_pages, fill_arena),
		cmocka_unit_test_setup(test_overlapping_reserved_entries, fill_arena),
		cmocka_unit_test_setup(test_reserved_ranges, fill_arena),
		cmocka_unit_test_setup(test_alignment, fill_arena),
		cmocka_unit_test_setup(test_contiguous, fill_arena),
		cmocka_unit_test_setup(test_free_and_realloc, fill_arena),
		cmocka_unit_test_setup(test_stats_consistency, fill_arena),
		cmocka_unit_test_setup(test_bitmap_placement, fill_arena),
		cmocka_unit_test_setup(test_init_errors, fill_arena),
		cmocka_unit_test_setup(test_ram_above_max_phys, fill_arena),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
