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
#include <trace/crc32.h>
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
	uint32_t written[NCPUS];	/* events written per CPU: seq 0 .. written - 1 */
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

	for (uint32_t c = 0; c < NCPUS; c++)
		persist_seal_cpu(&r->l, r->mem + persist_cpu_off(&r->l, c), &h->cpu[c]);
	h->sealed = 1;
	h->end = PERSIST_END_RESET;
	rig_header_crc(r);
}

static struct rig *rig_new(uint32_t mode)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct persist_header *h;

	assert_non_null(r);
	assert_true(persist_layout(&r->l, 0, 64u * PSIZE * NCPUS, NCPUS, NPAGES));
	r->size = r->l.used;
	assert_true(persist_layout(&r->l, 0, r->size, NCPUS, NPAGES));
	r->mem = aligned_alloc(PSIZE, r->size);
	assert_non_null(r->mem);
	memset(r->mem, 0, r->size);
	h = hdr_of(r);
	h->magic = PERSIST_MAGIC;
	h->version = PERSIST_VERSION;
	memcpy(h->build_id, build_id, sizeof(build_id));
	h->build_id_len = sizeof(build_id);
	h->nr_cpus = NCPUS;
	h->boot_id = 0x1234;
	h->size = r->size;
	h->nr_pages = NPAGES;
	h->cpu_area_pages = (uint32_t)(r->l.area_bytes / PSIZE);
	for (uint32_t c = 0; c < NCPUS; c++) {
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
}

static int check(struct rig *r, struct got *g, struct persist_result *res)
{
	struct persist_expect ex = { build_id, sizeof(build_id), 0, r->size };

	memset(g, 0, sizeof(*g));
	g->r = r;
	return persist_check(r->mem, &ex, got_page, got_done, g, res);
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
	struct persist_expect ex = { build_id, sizeof(build_id), 0, r->size };
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
	assert_int_equal(check(r, &g, &res), PERSIST_REJECTED);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_unlapped),
		cmocka_unit_test(test_valid_lapped),
		cmocka_unit_test(test_read_pages_are_gone),
		cmocka_unit_test(test_mid_event_tail_dropped),
		cmocka_unit_test(test_refused_page_counted),
		cmocka_unit_test(test_range_rule),
		cmocka_unit_test(test_rejections),
		cmocka_unit_test(test_damage_sealed),
		cmocka_unit_test(test_damage_unsealed),
		cmocka_unit_test(test_layout_fits),
	};

	host_fake_clock_on = 1;
	host_fake_step = 1;
	host_warn_quiet = 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
