/*
 * libFuzzer on the persistent range's validator: the input is a whole range
 * (header slots and 1..4 CPU areas of 2..8 ring pages, as slot 0's CPU count
 * and N say), zero padded.  Seeds are real ranges (test_persist --seeds:
 * sealed, unsealed, 4 CPUs, full, wrapped).  Slot 0's magic, version, build
 * id, layout and CRC are put right after the input is copied in, so that the fuzzer's bytes reach the ring walk (the state, the
 * slots, every page) rather than stopping at the header; the seal flag is
 * the input's, so both the sealed and the unsealed paths run.  What it
 * checks: no read outside the range (ASan), no undefined behaviour (UBSan),
 * and every page handed out decodes within its commit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_ARCH_HOST_DEFINE
#include <arch/trace_arch.h>
#include <trace/persist.h>

#define MAX_NCPUS	4
#define MAX_NPAGES	8

static const uint8_t build_id[4] = { 0xb7, 0x1d, 0x00, 0x01 };

static int page_cb(void *ctx, uint32_t cpu, const struct rb_walk_page *pg)
{
	struct rb_page_iter it;
	struct rb_event ev;
	uint32_t n = 0;

	(void)ctx;
	(void)cpu;
	if (rb_page_iter_init(&it, pg->page, PERSIST_PAGE) != RB_ITER_END)
		abort();	/* the walk handed out a page it had not checked */
	it.end = pg->commit;
	while (rb_page_iter_next(&it, &ev) == RB_ITER_EVENT)
		n++;
	if (n != pg->entries)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *mem;
	static uint64_t max;
	struct persist_layout l;
	struct persist_expect ex;
	struct persist_result res;
	struct persist_header *h;
	uint32_t ncpus = 2, npages = 4;

	if (!mem) {
		persist_layout(&l, 0, 1u << 24, MAX_NCPUS, MAX_NPAGES);
		max = l.used;
		mem = aligned_alloc(PERSIST_PAGE, max);
	}
	if (size >= sizeof(*h)) {
		const struct persist_header *in = (const struct persist_header *)data;

		ncpus = 1 + (in->nr_cpus - 1) % MAX_NCPUS;
		npages = 2 + (in->nr_pages - 2) % (MAX_NPAGES - 1);
	}
	persist_layout(&l, 0, max, ncpus, npages);
	persist_layout(&l, 0, l.used, ncpus, npages);
	memset(mem, 0, max);
	memcpy(mem, data, size < l.used ? size : l.used);
	h = (struct persist_header *)mem;
	h->magic = PERSIST_MAGIC;
	h->version = PERSIST_VERSION;
	memset(h->build_id, 0, sizeof(h->build_id));
	memcpy(h->build_id, build_id, sizeof(build_id));
	h->build_id_len = sizeof(build_id);
	h->nr_cpus = ncpus;
	h->base = 0;
	h->size = l.used;
	h->nr_pages = npages;
	h->cpu_area_pages = (uint32_t)(l.area_bytes / PERSIST_PAGE);
	h->end %= PERSIST_END_COUNT;
	h->sealed &= 1;
	h->reserved = 0;
	h->crc = persist_header_crc(h);
	/* Slot 1 stays the input's: usually invalid, slot 0 read. */
	ex = (struct persist_expect){ build_id, sizeof(build_id), 0, l.used, false };
	persist_check(mem, &ex, page_cb, NULL, NULL, &res);
	return 0;
}
