/*
 * The persistent range's validator (trace/persist.c) and the ring walk
 * under it (trace/ring_walk.c), on the host.
 *
 * A rig lays out a range exactly as the kernel does, builds real ring
 * buffers in it, and records events whose payload is {cpu, seq}: the test
 * knows every event it wrote.  The validator must hand back, per CPU, the
 * events still in the ring, in order, and nothing else; a damaged range must
 * be rejected or partly accepted, and no event it returns may be one that
 * was never written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define TRACE_ARCH_HOST_DEFINE
#include <arch/trace_arch.h>
#include <lib/crc32.h>
#include <trace/persist.h>

#define NCPUS	2
#define NPAGES	8
#define PSIZE	4096u

static const uint8_t build_id[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
				      17, 18, 19, 20 };

struct rig {
	uint8_t *mem;			/* the range */
	uint64_t size;
	struct persist_layout l;
	uint32_t written[4];		/* events written per CPU: seq 0 .. written - 1 */
};

static struct persist_header *hdr_of(struct rig *r)
{
	return (struct persist_header *)r->mem;
}

static struct rb_cpu_buffer *cb_of(struct rig *r, uint32_t c)
{
	return (struct rb_cpu_buffer *)(r->mem + persist_cpu_off(&r->l, c) + r->l.cb_off);
}

static void rig_header_crc(struct rig *r)
{
	hdr_of(r)->crc = persist_header_crc(hdr_of(r));
}

static void rig_seal(struct rig *r)
{
	struct persist_header *h = hdr_of(r);

	for (uint32_t c = 0; c < h->nr_cpus; c++)
		persist_seal_cpu(&r->l, r->mem + persist_cpu_off(&r->l, c), &h->cpu[c]);
	h->sealed = 1;
	h->end = PERSIST_END_RESET;
	rig_header_crc(r);
}

static uint32_t rig_ncpus = NCPUS;	/* CPU areas of the next rig (seeds: up to 4) */

static struct rig *rig_new(uint32_t mode)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct persist_header *h;

	assert_non_null(r);
	assert_true(persist_layout(&r->l, 0, 64u * PSIZE * rig_ncpus + (1u << 20), rig_ncpus,
				   NPAGES));
	r->size = r->l.used;
	assert_true(persist_layout(&r->l, 0, r->size, rig_ncpus, NPAGES));
	r->mem = aligned_alloc(PSIZE, r->size);
	assert_non_null(r->mem);
	memset(r->mem, 0, r->size);
	h = hdr_of(r);
	h->magic = PERSIST_MAGIC;
	h->version = PERSIST_VERSION;
	memcpy(h->build_id, build_id, sizeof(build_id));
	h->build_id_len = sizeof(build_id);
	h->nr_cpus = rig_ncpus;
	h->boot_id = 0x1234;
	h->size = r->size;
	h->nr_pages = NPAGES;
	h->cpu_area_pages = (uint32_t)(r->l.area_bytes / PSIZE);
	for (uint32_t c = 0; c < rig_ncpus; c++) {
		uint8_t *area = r->mem + persist_cpu_off(&r->l, c);
		void *pages[NPAGES + 1];
		struct rb_cpu_config cfg = { .cpu = c, .nr_pages = NPAGES, .page_size = PSIZE,
					     .mode = mode };

		for (uint32_t i = 0; i <= NPAGES; i++)
			pages[i] = area + r->l.data_off + (uint64_t)i * PSIZE;
		assert_int_equal(ring_buffer_cpu_init(cb_of(r, c), r->l.table_off, &cfg, pages), 0);
		h->cpu[c].present = 1;
	}
	rig_header_crc(r);
	return r;
}

static void rig_free(struct rig *r)
{
	free(r->mem);
	free(r);
}

static void rig_write(struct rig *r, uint32_t c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ev[2] = { c, r->written[c] };

		if (ring_buffer_write(cb_of(r, c), ev, sizeof(ev)) == 0)
			r->written[c]++;
	}
}

/* What the validator handed back. */
struct got {
	struct rig *r;
	uint32_t n[NCPUS];		/* events per CPU */
	uint32_t first[NCPUS], last[NCPUS];
	uint32_t bogus;			/* events never written, or out of order */
	uint32_t cpus_done, cpus_refused;
	uint64_t lost_pages[NCPUS];	/* losses the pages reported */
	const char *why[NCPUS];		/* each CPU's first refusal, or NULL */
	bool walked[NCPUS];
	uint32_t refused[NCPUS];	/* pages refused */
};

static int got_page(void *ctx, uint32_t cpu, const struct rb_walk_page *pg)
{
	struct got *g = ctx;
	struct rb_page_iter it;
	struct rb_event ev;

	assert_int_equal(rb_page_iter_init(&it, pg->page, PSIZE), RB_ITER_END);
	it.end = pg->commit;
	g->lost_pages[cpu] += pg->lost_overrun + pg->lost_dropped;
	while (rb_page_iter_next(&it, &ev) == RB_ITER_EVENT) {
		uint32_t w[2];

		memcpy(w, ev.data, sizeof(w));
		if (ev.len != 8 || w[0] != cpu || w[1] >= g->r->written[cpu] ||
		    (g->n[cpu] && w[1] <= g->last[cpu])) {
			g->bogus++;
			continue;
		}
		if (!g->n[cpu])
			g->first[cpu] = w[1];
		g->last[cpu] = w[1];
		g->n[cpu]++;
	}
	return 0;
}

static void got_done(void *ctx, const struct persist_cpu_result *cr)
{
	struct got *g = ctx;

	g->cpus_done++;
	g->cpus_refused += !cr->walked;
	g->why[cr->cpu] = cr->why;
	g->walked[cr->cpu] = cr->walked;
	g->refused[cr->cpu] = cr->walk.refused;
}

static int check(struct rig *r, struct got *g, struct persist_result *res)
{
	struct persist_expect ex = { build_id, sizeof(build_id), 0, r->size, false };

	memset(g, 0, sizeof(*g));
	g->r = r;
	return persist_check(r->mem, &ex, got_page, got_done, g, res);
}

/*
 * Another image's range (its build id differs, its header valid) is
 * FOREIGN: named (the header's build id, not this image's), nothing walked,
 * nothing written; read whole with any_image, still named as foreign.
 * Mutations caught: persist_check() reading a foreign range without
 * any_image (pages handed out), or naming this image's build id.
 */
static void test_foreign_image(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct persist_expect ex = { build_id, sizeof(build_id), 0, 0, false };
	struct persist_result res;
	struct got g;
	uint8_t *before = malloc(r->size);
	uint8_t other[sizeof(build_id)];

	(void)state;
	rig_write(r, 0, 700);
	rig_write(r, 1, 10);
	ex.size = r->size;
	memcpy(other, build_id, sizeof(other));
	other[3] ^= 0x5a;			/* the image that wrote it */
	memcpy(hdr_of(r)->build_id, other, sizeof(other));
	rig_header_crc(r);
	memcpy(before, r->mem, r->size);
	memset(&g, 0, sizeof(g));
	g.r = r;
	assert_int_equal(persist_check(r->mem, &ex, got_page, got_done, &g, &res),
			 PERSIST_FOREIGN);
	assert_string_equal(res.why, "written by another kernel image (build id differs)");
	assert_true(res.foreign);
	assert_int_equal(res.build_id_len, sizeof(other));
	assert_memory_equal(res.build_id, other, sizeof(other));
	assert_int_equal(res.boot_id, 0x1234);
	assert_int_equal(res.size, r->size);
	assert_int_equal(g.cpus_done, 0);	/* nothing walked */
	assert_int_equal(g.n[0] + g.n[1], 0);
	assert_memory_equal(before, r->mem, r->size);

	ex.any_image = true;			/* decode it anyway */
	memset(&g, 0, sizeof(g));
	g.r = r;
	assert_int_equal(persist_check(r->mem, &ex, got_page, got_done, &g, &res), PERSIST_VALID);
	assert_true(res.foreign);
	assert_memory_equal(res.build_id, other, sizeof(other));
	assert_int_equal(g.bogus, 0);
	for (uint32_t c = 0; c < NCPUS; c++)
		assert_int_equal(g.n[c], r->written[c]);
	assert_memory_equal(before, r->mem, r->size);

	memcpy(hdr_of(r)->build_id, build_id, sizeof(build_id));	/* this image's */
	rig_header_crc(r);
	assert_int_equal(persist_check(r->mem, &ex, got_page, got_done, &g, &res), PERSIST_VALID);
	assert_false(res.foreign);
	free(before);
	rig_free(r);
}

/* Everything written, nothing lost: all of it comes back, the tail page included. */
static void test_valid_unlapped(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct persist_result res;
	struct got g;
	uint8_t *before = malloc(r->size);

	(void)state;
	rig_write(r, 0, 700);	/* more than a page: published pages and a tail */
	rig_write(r, 1, 10);	/* only the tail page */
	memcpy(before, r->mem, r->size);
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_memory_equal(before, r->mem, r->size);	/* the walk writes nothing */
	assert_int_equal(res.boot_id, 0x1234);
	assert_int_equal(res.cpus_ok, NCPUS);
	assert_int_equal(g.bogus, 0);
	for (uint32_t c = 0; c < NCPUS; c++) {
		assert_int_equal(g.n[c], r->written[c]);
		assert_int_equal(g.first[c], 0);
		assert_int_equal(g.last[c], r->written[c] - 1);
	}
	assert_int_equal(res.events, 710);
	assert_int_equal(res.lost, 0);
	free(before);
	rig_free(r);
}

/* Lapped: the newest events, consecutive, and the overwritten ones as lost. */
static void test_valid_lapped(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct persist_result res;
	struct got g;

	(void)state;
	rig_write(r, 0, 5000);
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_int_equal(g.bogus, 0);
	assert_int_equal(g.last[0], r->written[0] - 1);
	assert_int_equal(g.last[0] - g.first[0] + 1, g.n[0]);	/* no gap */
	assert_int_equal(res.lost, g.first[0]);			/* all before it */
	assert_int_equal(res.events + res.lost, r->written[0]);
	rig_free(r);
}

/* Pages the reader took before the reset are not shown again. */
static void test_read_pages_are_gone(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct persist_result res;
	struct rb_read rd;
	uint32_t taken = 0;
	struct got g;

	(void)state;
	rig_write(r, 0, 1000);
	while (ring_buffer_read_page(cb_of(r, 0), &rd) == 1)
		taken += rd.entries;
	assert_true(taken > 0);
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_int_equal(g.n[0], r->written[0] - taken);
	assert_int_equal(g.first[0], taken);
	rig_free(r);
}

/* A writer between reserve and commit: its tail page is dropped and counted. */
static void test_mid_event_tail_dropped(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct persist_result res;
	struct rb_cpu_buffer *cb;
	uint32_t tail_entries;
	struct got g;
	void *data;

	(void)state;
	rig_write(r, 0, 700);
	cb = cb_of(r, 0);
	assert_int_equal(ring_buffer_reserve(cb, 8, &data), 0);	/* never committed */
	tail_entries = ((struct rb_page_header *)cb->tail_page)->entries;
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_int_equal(g.bogus, 0);
	assert_int_equal(g.n[0] + tail_entries, 701);
	assert_int_equal(res.lost, tail_entries);
	ring_buffer_commit(cb);
	rig_free(r);
}

/*
 * A sealed page that fails its seal is refused, and its events are counted
 * as lost, whether it is the tail page (nothing after it says how many) or
 * a published page (the next page's seq says).  Every event written is
 * then shown or counted: events + lost == written.  The deliberate bug this
 * catches: a refused page's events dropped from the count.
 */
static void test_refused_page_counted(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct rb_cpu_buffer *cb;
	struct persist_result res;
	uint32_t tail_entries;
	struct got g;

	(void)state;
	rig_write(r, 0, 1200);	/* published pages, and a tail */
	rig_seal(r);
	cb = cb_of(r, 0);
	tail_entries = ((struct rb_page_header *)cb->tail_page)->entries;
	assert_true(tail_entries > 0);
	cb->tail_page[PSIZE - 1] ^= 0x5a;	/* unused bytes: only the seal sees them */
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_int_equal(res.pages_refused, 1);
	assert_int_equal(g.n[0], r->written[0] - tail_entries);
	assert_int_equal(res.lost, tail_entries);
	assert_int_equal(res.events + res.lost, r->written[0] + r->written[1]);
	cb->tail_page[PSIZE - 1] ^= 0x5a;
	/* The first page instead: published, its loss shown by the next page's seq. */
	cb->pages[rb_slot_id(((uint64_t *)(cb + 1))[0])][PSIZE - 1] ^= 0x5a;
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_int_equal(res.pages_refused, 1);
	assert_int_equal(g.bogus, 0);
	assert_int_equal(res.events + res.lost, r->written[0] + r->written[1]);
	assert_true(res.lost > 0);
	rig_free(r);
}

/* The header must name the window's base and fit its size (auto keeps less). */
static void test_range_rule(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct persist_expect ex = { build_id, sizeof(build_id), 0, r->size, false };
	struct persist_result res;
	struct got g = { .r = r };

	(void)state;
	rig_write(r, 0, 10);
	ex.size = r->size + (1u << 20);		/* a larger window: accepted */
	assert_int_equal(persist_check(r->mem, &ex, got_page, got_done, &g, &res), PERSIST_VALID);
	ex.size = r->size - PSIZE;		/* smaller than the header's range */
	assert_int_equal(persist_check(r->mem, &ex, got_page, got_done, &g, &res),
			 PERSIST_REJECTED);
	assert_string_equal(res.why, "written for another range");
	ex.size = r->size;
	ex.base = 0x2000000;			/* another base */
	assert_int_equal(persist_check(r->mem, &ex, got_page, got_done, &g, &res),
			 PERSIST_REJECTED);
	assert_string_equal(res.why, "written for another range");
	rig_free(r);
}

static void test_rejections(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct persist_result res;
	struct got g;

	(void)state;
	rig_write(r, 0, 100);
	hdr_of(r)->magic = 0;
	assert_int_equal(check(r, &g, &res), PERSIST_NONE);
	hdr_of(r)->magic = PERSIST_MAGIC;
	hdr_of(r)->boot_id ^= 1;		/* CRC no longer matches */
	assert_int_equal(check(r, &g, &res), PERSIST_REJECTED);
	assert_string_equal(res.why, "header checksum mismatch");
	hdr_of(r)->boot_id ^= 1;
	hdr_of(r)->build_id[0] ^= 0xff;
	rig_header_crc(r);
	assert_int_equal(check(r, &g, &res), PERSIST_FOREIGN);
	assert_string_equal(res.why, "written by another kernel image (build id differs)");
	hdr_of(r)->build_id[0] ^= 0xff;
	hdr_of(r)->version = 99;
	rig_header_crc(r);
	assert_int_equal(check(r, &g, &res), PERSIST_REJECTED);
	assert_string_equal(res.why, "format version differs");
	hdr_of(r)->version = PERSIST_VERSION;
	hdr_of(r)->nr_pages = NPAGES + 1;
	rig_header_crc(r);
	assert_int_equal(check(r, &g, &res), PERSIST_REJECTED);
	hdr_of(r)->nr_pages = NPAGES;
	rig_header_crc(r);
	/* Two slots naming one page: that CPU is refused, the other accepted. */
	rig_write(r, 1, 100);
	((uint64_t *)(cb_of(r, 0) + 1))[1] =
		(((uint64_t *)(cb_of(r, 0) + 1))[1] & ~RB_SLOT_ID_MASK) |
		rb_slot_id(((uint64_t *)(cb_of(r, 0) + 1))[0]);
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_int_equal(g.cpus_refused, 1);
	assert_int_equal(res.cpus_ok, 1);
	assert_int_equal(g.n[0], 0);
	assert_int_equal(g.n[1], 100);
	rig_free(r);
}

static uint64_t rng = 88172645463325252ull;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * Random bytes overwritten anywhere in the used range, many times.  Sealed:
 * every event handed back is one that was written, in order; unsealed (no
 * CRC over payloads): the walk still never reads outside the range (ASan)
 * and never returns an event whose header does not decode.
 */
static void damage_rounds(bool sealed)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	uint8_t *clean = malloc(r->size);
	unsigned accepted = 0, rejected = 0, none = 0;

	rig_write(r, 0, 3000);
	rig_write(r, 1, 500);
	if (sealed)
		rig_seal(r);
	memcpy(clean, r->mem, r->size);
	for (int round = 0; round < 3000; round++) {
		struct persist_result res;
		struct got g;
		int bytes = 1 + (int)(xorshift() % 16);

		memcpy(r->mem, clean, r->size);
		for (int i = 0; i < bytes; i++) {
			/* Aim at the meta data half of the time. */
			uint64_t span = xorshift() % 2 ? r->l.data_off + r->l.header_bytes : r->size;
			uint64_t at = xorshift() % span;

			if (at >= r->l.header_bytes && span != r->size)
				at = persist_cpu_off(&r->l, (uint32_t)(xorshift() % NCPUS)) +
				     (at - r->l.header_bytes);
			r->mem[at] = (uint8_t)xorshift();
		}
		switch (check(r, &g, &res)) {
		case PERSIST_VALID:
			accepted++;
			if (sealed)
				assert_int_equal(g.bogus, 0);
			break;
		case PERSIST_REJECTED:
			assert_non_null(res.why);
			rejected++;
			break;
		default:
			none++;
		}
	}
	print_message("damage (%s): accepted=%u rejected=%u none=%u\n",
		      sealed ? "sealed" : "unsealed", accepted, rejected, none);
	assert_true(accepted > 0 && rejected > 0);
	free(clean);
	rig_free(r);
}

static void test_damage_sealed(void **state)
{
	(void)state;
	damage_rounds(true);
}

static void test_damage_unsealed(void **state)
{
	(void)state;
	damage_rounds(false);
}

/* The page of CPU c at walk position k from the reader's (unlapped ring). */
static uint8_t *page_at(struct rig *r, uint32_t c, uint32_t k)
{
	struct rb_cpu_buffer *cb = cb_of(r, c);
	uint64_t p = cb->read_pos + k;
	uint32_t id = rb_slot_id(((uint64_t *)(cb + 1))[p % NPAGES]);

	return r->mem + persist_cpu_off(&r->l, c) + r->l.data_off + (uint64_t)id * PSIZE;
}

/*
 * Defect: a buffer whose recorded page size is 64 KiB (with a matching
 * cap) while the range's pages are 4 KiB apart: the walk must refuse it,
 * not read 64 KiB from each page (past the range's end for the last CPU).
 * Mutation caught: persist_check() without its page-size check (ASan
 * reports a heap-buffer-overflow, or the CPU is read).
 */
static void test_page_size_beyond_range(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct rb_cpu_buffer *cb = cb_of(r, NCPUS - 1);
	struct persist_result res;
	struct got g;

	(void)state;
	rig_write(r, 0, 100);
	rig_write(r, NCPUS - 1, 3000);	/* every page of the last area written */
	cb->page_size = RB_PAGE_SIZE_MAX;
	cb->cap = RB_PAGE_SIZE_MAX - RB_PAGE_HEADER_SIZE;
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_false(g.walked[NCPUS - 1]);
	assert_string_equal(g.why[NCPUS - 1], "page size is not the range's");
	assert_int_equal(g.n[0], 100);	/* the other CPU still read */
	rig_free(r);
}

/*
 * Defect: one record stored after the seal (a writer the reboot did not
 * stop).  The CPU's state CRC no longer matches; it must still be read,
 * with the per-page seals: only the changed tail page is refused and
 * counted.  Independent count: rig->written.  Mutation caught: refusing
 * the CPU on a state CRC mismatch (today's code: g.n[0] == 0).
 */
static void test_late_record_after_seal(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct persist_result res;
	uint32_t tail_entries;
	struct got g;

	(void)state;
	rig_write(r, 0, 1200);
	rig_write(r, 1, 100);
	rig_seal(r);
	tail_entries = ((struct rb_page_header *)cb_of(r, 0)->tail_page)->entries;
	rig_write(r, 0, 1);		/* late */
	assert_int_equal(r->written[0], 1201);
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_int_equal(res.sealed, 1);
	assert_true(g.walked[0]);
	assert_int_equal(g.refused[0], 1);
	assert_int_equal(g.bogus, 0);
	assert_int_equal(g.n[0], 1200 - tail_entries);
	assert_int_equal(g.first[0], 0);
	assert_int_equal(g.n[1], 100);
	assert_int_equal(res.events + res.lost, r->written[0] + r->written[1]);
	rig_free(r);
}

/*
 * A record's delta raised so that the next record's stamp is below it
 * (unsealed: no CRC sees it).  Mutation caught: check_records() without
 * its "stamps out of order" check (the page is then accepted).
 */
static void test_stamp_order_damage(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct persist_result res;
	uint32_t *rec;
	struct got g;

	(void)state;
	rig_write(r, 0, 1200);
	rec = (uint32_t *)(page_at(r, 0, 1) + RB_PAGE_HEADER_SIZE);	/* the first record */
	assert_int_equal(*rec >> RB_DELTA_BITS, 2);	/* inline data, 8 bytes */
	*rec = (2u << RB_DELTA_BITS) | RB_ARG_MASK;	/* far above the next one's */
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_int_equal(g.refused[0], 1);
	assert_string_equal(g.why[0], "stamps out of order");
	assert_int_equal(g.bogus, 0);
	assert_int_equal(res.events + res.lost, r->written[0]);
	rig_free(r);
}

/*
 * The reader's position past commit (and past the tail): the state is
 * refused.  Mutation caught: check_state() without read_pos > commit_pos
 * (the CPU is then read, showing nothing).
 */
static void test_read_pos_past_commit(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct rb_cpu_buffer *cb = cb_of(r, 0);
	struct persist_result res;
	struct got g;

	(void)state;
	rig_write(r, 0, 1200);
	cb->read_pos = cb->commit_pos + 1;
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_false(g.walked[0]);
	assert_string_equal(g.why[0], "positions out of order");
	rig_free(r);
}

/*
 * A page's dropped count raised: the next page's is then below it, which
 * no writer does (dropped only grows).  That next page is refused, not
 * read with a negative loss.  Mutation caught: the walk without its
 * dropped-monotonic check (the loss then wraps to about 2^64).
 */
static void test_dropped_backwards(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	struct persist_result res;
	struct got g;

	(void)state;
	rig_write(r, 0, 1200);
	((struct rb_page_header *)page_at(r, 0, 1))->dropped = 1000;
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_true(g.walked[0]);
	/* Every page after it is below 1000: refused too (the walk keeps 1000). */
	assert_int_equal(g.refused[0], cb_of(r, 0)->tail_pos - cb_of(r, 0)->read_pos - 1);
	assert_string_equal(g.why[0], "page counts inconsistent");
	assert_true(res.lost < 2000);
	rig_free(r);
}

static uint64_t hdr_bytes(void)
{
	return sizeof(struct persist_header) + NCPUS * sizeof(struct persist_cpu);
}

/*
 * A header rewrite stopped by a reset at several instants: the previous
 * version is read whole; once the rewrite is complete, the new one.  The
 * torn states are built from the real persist_header_commit()'s result,
 * in the order persist_header_store() writes (magic cleared, the body,
 * magic).  Mutations caught: reading the lowest gen (the end=panic
 * rewrite is not seen); rewriting the newest slot instead of the other
 * (a torn seal then falls back to the older end=unknown version, or to
 * nothing); rejecting the range when one slot fails its CRC.
 */
static void test_torn_seal_reads_previous_header(void **state)
{
	struct rig *r = rig_new(RB_MODE_OVERWRITE);
	uint64_t bytes = hdr_bytes();
	struct persist_header *work = calloc(1, bytes);
	uint8_t *before = malloc(r->size), *after = malloc(r->size);
	uint64_t cuts[] = { 0, 8, 64, 120, bytes / 2, bytes - 1, bytes };
	struct persist_result res;
	struct got g;
	uint32_t k;

	(void)state;
	rig_write(r, 0, 1200);
	rig_write(r, 1, 300);
	memcpy(work, hdr_of(r), bytes);		/* slot 0, gen 0, end=unknown */
	work->end = PERSIST_END_PANIC;		/* what a panic records first */
	persist_header_commit(r->mem, work, bytes);
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_int_equal(res.end, PERSIST_END_PANIC);
	assert_int_equal(res.sealed, 0);

	/* The seal: page CRCs outside the header, then the sealed header. */
	memcpy(before, r->mem, r->size);
	for (uint32_t c = 0; c < NCPUS; c++)
		persist_seal_cpu(&r->l, r->mem + persist_cpu_off(&r->l, c), &work->cpu[c]);
	work->sealed = 1;
	k = persist_header_commit(r->mem, work, bytes);
	memcpy(after, r->mem, r->size);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct persist_header *dst = (struct persist_header *)(r->mem + persist_slot_off(k));

		/* Page seals written (they are outside the header), the slot torn. */
		memcpy(r->mem, after, r->size);
		memcpy(r->mem + persist_slot_off(k), before + persist_slot_off(k), bytes);
		if (cuts[i] > 0) {
			dst->magic = 0;
			if (cuts[i] > 8)
				memcpy((uint8_t *)dst + 8, after + persist_slot_off(k) + 8, cuts[i] - 8);
		}
		assert_int_equal(check(r, &g, &res), PERSIST_VALID);
		assert_int_equal(res.end, PERSIST_END_PANIC);
		assert_int_equal(res.sealed, 0);
		assert_int_equal(res.cpus_ok, NCPUS);
		assert_int_equal(g.n[0], 1200);
		assert_int_equal(g.n[1], 300);
		assert_int_equal(g.bogus, 0);
	}
	memcpy(r->mem, after, r->size);		/* the rewrite complete */
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_int_equal(res.sealed, 1);
	assert_int_equal(g.n[0], 1200);
	assert_int_equal(g.n[1], 300);
	/* The older slot damaged (magic kept, CRC failing): the newer is read. */
	r->mem[persist_slot_off(1 - k) + offsetof(struct persist_header, boot_id)] ^= 1;
	assert_int_equal(check(r, &g, &res), PERSIST_VALID);
	assert_int_equal(res.sealed, 1);
	free(before);
	free(after);
	free(work);
	rig_free(r);
}

static void test_layout_fits(void **state)
{
	struct persist_layout l;
	uint32_t n;

	(void)state;
	n = persist_fit_pages(1u << 20, 4, 64);
	assert_true(n >= 2 && n < 64);
	assert_true(persist_layout(&l, 0, 1u << 20, 4, n));
	assert_false(persist_layout(&l, 0, 1u << 20, 4, n + 1));
	assert_int_equal(persist_fit_pages(1u << 30, 4, 64), 64);
	assert_int_equal(persist_fit_pages(4096, 4, 64), 0);
}

/* The fuzzer's seeds: real ranges, one per layout (tests/host/fuzz_persist.c). */
static void seed(const char *dir, const char *name, uint32_t ncpus, uint32_t mode,
		 uint32_t events, bool sealed)
{
	char path[512];
	struct rig *r;
	FILE *f;

	rig_ncpus = ncpus;
	r = rig_new(mode);
	for (uint32_t c = 0; c < ncpus; c++)
		rig_write(r, c, events / (c + 1));
	if (sealed)
		rig_seal(r);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(r->mem, 1, r->size, f) != r->size || fclose(f)) {
		fprintf(stderr, "test_persist: cannot write %s\n", path);
		exit(1);
	}
	rig_free(r);
	rig_ncpus = NCPUS;
}

static int write_seeds(const char *dir)
{
	seed(dir, "sealed", 2, RB_MODE_OVERWRITE, 1200, true);
	seed(dir, "unsealed", 2, RB_MODE_OVERWRITE, 1200, false);
	seed(dir, "cpus4", 4, RB_MODE_OVERWRITE, 900, true);
	seed(dir, "full", 2, RB_MODE_DISCARD, 5000, false);
	seed(dir, "wrapped", 2, RB_MODE_OVERWRITE, 5000, true);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_unlapped),
		cmocka_unit_test(test_valid_lapped),
		cmocka_unit_test(test_read_pages_are_gone),
		cmocka_unit_test(test_mid_event_tail_dropped),
		cmocka_unit_test(test_refused_page_counted),
		cmocka_unit_test(test_range_rule),
		cmocka_unit_test(test_rejections),
		cmocka_unit_test(test_foreign_image),
		cmocka_unit_test(test_damage_sealed),
		cmocka_unit_test(test_damage_unsealed),
		cmocka_unit_test(test_layout_fits),
		cmocka_unit_test(test_page_size_beyond_range),
		cmocka_unit_test(test_late_record_after_seal),
		cmocka_unit_test(test_stamp_order_damage),
		cmocka_unit_test(test_read_pos_past_commit),
		cmocka_unit_test(test_dropped_backwards),
		cmocka_unit_test(test_torn_seal_reads_previous_header),
	};

	host_fake_clock_on = 1;
	host_fake_step = 1;
	host_warn_quiet = 1;
	if (argc == 3 && !strcmp(argv[1], "--seeds"))
		return write_seeds(argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: test_persist [--seeds DIR]\n");
		return 2;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
