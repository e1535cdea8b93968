/*
 * Unit tests of the per-CPU ring buffer, on the host.
 *
 * A fake clock (one tick per read unless a test sets the step) makes every
 * stamp predictable.  "Interrupts" are injected through the host shim's
 * hooks at exact interleaving points: after a stamp is taken (B..C), right
 * after an xadd (C..E), and inside a page switch (S3); the injected writer
 * runs at context level 2, as an IRQ would.
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
#include <trace/ring_buffer.h>

#define RIG_MAX_PAGES	64
#define RIG_CPU		3
#define CAP(ps)		((ps) - RB_PAGE_HEADER_SIZE)

enum method { XADD, CMPXCHG };

struct rig {
	struct rb_cpu_buffer *cb;		/* the buffer under test */
	void *pages[RIG_MAX_PAGES + 1];		/* its pages, reader's included */
	uint32_t n;				/* ring pages */
	uint32_t page_size;			/* bytes per page */
};

/* One decoded event and where it was found. */
struct got {
	uint64_t ts;		/* decoded stamp */
	uint32_t seq;		/* sequence number the writer gave it */
	uint32_t len;		/* payload bytes */
	uint64_t page;		/* page sequence number */
	uint32_t page_lost;	/* events lost before its page */
};

static struct rig *rig_new(uint32_t n, uint32_t page_size, uint32_t mode)
{
	struct rb_cpu_config cfg = {
		.cpu = RIG_CPU, .nr_pages = n, .page_size = page_size, .mode = mode,
	};
	struct rig *r = calloc(1, sizeof(*r));
	size_t size = ring_buffer_cpu_size(n);
	uint32_t i;

	assert_non_null(r);
	assert_true(n <= RIG_MAX_PAGES && size > 0);
	r->n = n;
	r->page_size = page_size;
	r->cb = aligned_alloc(CACHELINE_SIZE, ALIGN_UP(size, CACHELINE_SIZE));
	assert_non_null(r->cb);
	for (i = 0; i <= n; i++) {
		r->pages[i] = aligned_alloc(page_size, page_size);
		assert_non_null(r->pages[i]);
		memset(r->pages[i], 0xa5, page_size);	/* garbage, on purpose */
	}
	assert_int_equal(ring_buffer_cpu_init(r->cb, size, &cfg, r->pages), 0);
	return r;
}

static void rig_free(struct rig *r)
{
	uint32_t i;

	for (i = 0; i <= r->n; i++)
		free(r->pages[i]);
	free(r->cb);
	free(r);
}

static uint8_t pattern(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 7u + i * 13u + 1u);
}

/* First payload word: sequence number and the length the writer asked for. */
static uint32_t tag(uint32_t seq, uint32_t len)
{
	return seq | len << 20;
}

static int write_ev(struct rb_cpu_buffer *cb, uint32_t len, uint32_t seq, enum method m)
{
	uint8_t *p;
	void *data;
	uint32_t i;
	int rc;

	rc = m == CMPXCHG ? ring_buffer_reserve_cmpxchg(cb, len, &data)
			  : ring_buffer_reserve_xadd(cb, len, &data);
	if (rc)
		return rc;
	p = data;
	i = tag(seq, len);
	memcpy(p, &i, 4);	/* len >= 4 in these tests */
	for (i = 4; i < len; i++)
		p[i] = pattern(seq, i);
	ring_buffer_commit(cb);
	return 0;
}

/* Take every readable page, check each event's payload, collect them. */
static size_t drain(struct rig *r, struct got *out, size_t max, uint64_t *lost)
{
	struct rb_read rd;
	size_t count = 0;
	int rc;

	while ((rc = ring_buffer_read_page(r->cb, &rd)) == 1) {
		const struct rb_page_header *hdr = rd.page;
		struct rb_page_iter it;
		struct rb_event ev = { 0 };
		uint32_t on_page = 0, word, seq, len, i;

		assert_int_equal(hdr->cpu, RIG_CPU);
		assert_int_equal(hdr->lost, rd.lost_overrun + rd.lost_dropped);
		if (lost)
			*lost += hdr->lost;
		assert_int_equal(rb_page_iter_init(&it, rd.page, rd.page_size), RB_ITER_END);
		while ((rc = rb_page_iter_next(&it, &ev)) == RB_ITER_EVENT) {
			memcpy(&word, ev.data, 4);
			seq = word & 0xfffff;
			len = word >> 20;
			assert_int_equal(ev.len, rb_payload_round(len));
			for (i = 4; i < ev.len; i++)	/* rounding bytes are zero */
				assert_int_equal(ev.data[i], i < len ? pattern(seq, i) : 0);
			assert_true(count < max);
			out[count].ts = ev.ts;
			out[count].seq = seq;
			out[count].len = ev.len;
			out[count].page = hdr->pos;
			out[count].page_lost = hdr->lost;
			count++;
			on_page++;
		}
		assert_int_equal(rc, RB_ITER_END);
		assert_int_equal(on_page, hdr->entries);
		assert_int_equal(on_page, rd.entries);
	}
	assert_int_equal(rc, 0);
	return count;
}

static void assert_ordered(const struct got *g, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		assert_true(g[i - 1].ts <= g[i].ts);
}

/*
 * The buffer's counters against counts made outside it: what the writers
 * attempted and got accepted (their own tallies) and what the reader
 * decoded (g, n, each event named by its sequence number).  Once the ring
 * is drained (lost non-NULL: the sum of the pages' lost counts), every
 * accepted event that was not decoded must have been overwritten, and
 * every event not decoded must be covered by a lost count.
 */
static void assert_accounting(struct rig *r, uint64_t attempts, uint64_t accepted,
			      const struct got *g, size_t n, const uint64_t *lost)
{
	static uint8_t seen[1u << 20];
	struct rb_stats st;
	size_t i;

	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.written, attempts);
	assert_int_equal(st.entries, accepted);
	assert_int_equal(st.dropped, attempts - accepted);
	assert_int_equal(st.read, n);
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < n; i++) {	/* no event decoded twice */
		assert_int_equal(seen[g[i].seq], 0);
		seen[g[i].seq] = 1;
	}
	if (!lost)
		return;
	assert_int_equal(st.in_buffer, 0);
	assert_int_equal(st.overrun, accepted - n);
	assert_int_equal(*lost, attempts - n);
	assert_int_equal(st.lost, attempts - n);
}

static int setup(void **state)
{
	(void)state;
	host_fake_clock_on = 1;
	host_fake_now = 1000;
	host_fake_step = 1;
	host_hook_clock = NULL;
	host_hook_xadd = NULL;
	host_trace_level = 0;
	host_warn_quiet = 1;
	host_warn_count = 0;
	host_warn_last = NULL;
	return 0;
}

/* ---- format ---- */

static void test_format_data_records(void **state)
{
	uint8_t buf[RB_PAGE_SIZE_MIN] __aligned(8);
	struct rb_page_header *hdr = (void *)buf;
	uint8_t *data = buf + RB_PAGE_HEADER_SIZE;
	struct rb_page_iter it;
	struct rb_event ev = { 0 };
	uint32_t len, rec, off;

	(void)state;
	for (len = 1; len <= RB_MAX_PAYLOAD; len++) {
		memset(buf, 0xee, sizeof(buf));
		memset(hdr, 0, sizeof(*hdr));
		hdr->base_ts = 500;
		hdr->version = RB_FORMAT_VERSION;
		rec = rb_data_record_size(len);
		assert_int_equal(rec, rb_data_header_size(len) + rb_payload_round(len));
		assert_int_equal(rb_data_header_size(len), len <= RB_INLINE_MAX ? 4 : 8);
		memset(rb_put_data(data, len, RB_DELTA_LIMIT - 1 - len), 0x11, len);
		if (len <= RB_INLINE_MAX)
			assert_int_equal(rb_record_kind(rb_load32(data)), rb_payload_round(len) / 4);
		else
			assert_int_equal(rb_record_kind(rb_load32(data)), RB_KIND_DATA_LONG);
		off = rec;
		hdr->commit = off;
		assert_int_equal(rb_page_iter_init(&it, buf, sizeof(buf)), RB_ITER_END);
		assert_int_equal(rb_page_iter_next(&it, &ev), RB_ITER_EVENT);
		assert_int_equal(ev.ts, 500 + RB_DELTA_LIMIT - 1 - len);
		assert_int_equal(ev.len, rb_payload_round(len));
		assert_int_equal(ev.offset, 0);
		assert_int_equal(ev.data[len - 1], 0x11);
		if (len % 4)	/* rounding bytes are zeroed, never stale */
			assert_int_equal(ev.data[ev.len - 1], 0);
		assert_int_equal(rb_page_iter_next(&it, &ev), RB_ITER_END);
	}
}

static void test_format_padding_extend_abs(void **state)
{
	uint8_t buf[RB_PAGE_SIZE_MIN] __aligned(8);
	struct rb_page_header *hdr = (void *)buf;
	uint8_t *d = buf + RB_PAGE_HEADER_SIZE;
	struct rb_page_iter it;
	struct rb_event ev = { 0 };
	uint32_t off = 0;

	(void)state;
	memset(buf, 0, sizeof(buf));
	hdr->base_ts = 1ull << 40;
	hdr->version = RB_FORMAT_VERSION;
	rb_put_padding(d + off, 12);
	off += 12;
	rb_store32(d + off, rb_record_word(RB_KIND_EXTEND, 0x5a5a5a5));
	off += RB_EXTEND_SIZE;
	rb_put_data(d + off, 4, 17);
	off += 8;
	rb_store32(d + off, rb_record_word(RB_KIND_ABS, 0));
	rb_store64(d + off + 4, 0xfedcba9876543210ull);
	off += RB_ABS_SIZE;
	rb_put_data(d + off, 200, 3);
	off += rb_data_record_size(200);
	rb_put_data(d + off, 4, 9);	/* back to base-relative */
	off += 8;
	hdr->commit = off;

	assert_int_equal(rb_page_iter_init(&it, buf, sizeof(buf)), RB_ITER_END);
	assert_int_equal(rb_page_iter_next(&it, &ev), RB_ITER_EVENT);
	assert_int_equal(ev.ts, (1ull << 40) + ((0x5a5a5a5ull << 27) | 17));
	assert_int_equal(ev.offset, 12 + RB_EXTEND_SIZE);
	assert_int_equal(rb_page_iter_next(&it, &ev), RB_ITER_EVENT);
	assert_int_equal(ev.ts, 0xfedcba9876543210ull + 3);
	assert_int_equal(ev.len, 200);
	assert_int_equal(rb_page_iter_next(&it, &ev), RB_ITER_EVENT);
	assert_int_equal(ev.ts, (1ull << 40) + 9);
	assert_int_equal(rb_page_iter_next(&it, &ev), RB_ITER_END);
}

/* Build a one-record page from words and expect the decoder to refuse it. */
static void expect_malformed(const uint32_t *words, uint32_t nwords, uint32_t commit)
{
	uint8_t buf[RB_PAGE_SIZE_MIN] __aligned(8);
	struct rb_page_header *hdr = (void *)buf;
	struct rb_page_iter it;
	struct rb_event ev = { 0 };
	int rc;

	memset(buf, 0, sizeof(buf));
	hdr->version = RB_FORMAT_VERSION;
	hdr->commit = commit;
	memcpy(buf + RB_PAGE_HEADER_SIZE, words, nwords * 4);
	if (rb_page_iter_init(&it, buf, sizeof(buf)) == RB_ITER_ERROR)
		return;
	while ((rc = rb_page_iter_next(&it, &ev)) == RB_ITER_EVENT)
		;
	assert_int_equal(rc, RB_ITER_ERROR);
}

static void test_format_malformed(void **state)
{
	const uint32_t invalid[] = { rb_record_word(RB_KIND_INVALID, 0) };
	const uint32_t pad0[] = { rb_record_word(RB_KIND_PADDING, 0) };
	const uint32_t pad_long[] = { rb_record_word(RB_KIND_PADDING, 64) };
	const uint32_t ext_end[] = { rb_record_word(RB_KIND_EXTEND, 1) };
	const uint32_t ext_pad[] = { rb_record_word(RB_KIND_EXTEND, 1),
				     rb_record_word(RB_KIND_PADDING, 4) };
	const uint32_t ext_ext[] = { rb_record_word(RB_KIND_EXTEND, 1),
				     rb_record_word(RB_KIND_EXTEND, 1), rb_record_word(1, 0), 0 };
	const uint32_t long_small[] = { rb_record_word(RB_KIND_DATA_LONG, 0), 8, 0, 0 };
	const uint32_t long_big[] = { rb_record_word(RB_KIND_DATA_LONG, 0), 2048, 0, 0 };
	const uint32_t past_end[] = { rb_record_word(4, 0), 0, 0 };
	const uint32_t abs_nonzero[] = { rb_record_word(RB_KIND_ABS, 1), 0, 0 };
	uint8_t buf[RB_PAGE_SIZE_MIN] __aligned(8);
	struct rb_page_header *hdr = (void *)buf;
	struct rb_page_iter it;

	(void)state;
	expect_malformed(invalid, 1, 4);
	expect_malformed(pad0, 1, 4);
	expect_malformed(pad_long, 1, 16);
	expect_malformed(ext_end, 1, 4);
	expect_malformed(ext_pad, 2, 8);
	expect_malformed(ext_ext, 4, 16);
	expect_malformed(long_small, 4, 16);
	expect_malformed(long_big, 4, 16);
	expect_malformed(past_end, 3, 12);
	expect_malformed(abs_nonzero, 3, 12);
	expect_malformed(invalid, 1, 6);	/* commit not a word multiple */

	memset(buf, 0, sizeof(buf));
	hdr->version = RB_FORMAT_VERSION;
	hdr->commit = sizeof(buf);		/* larger than the capacity */
	assert_int_equal(rb_page_iter_init(&it, buf, sizeof(buf)), RB_ITER_ERROR);
	hdr->commit = 0;
	hdr->version = RB_FORMAT_VERSION + 1;
	assert_int_equal(rb_page_iter_init(&it, buf, sizeof(buf)), RB_ITER_ERROR);
	hdr->version = RB_FORMAT_VERSION;
	assert_int_equal(rb_page_iter_init(&it, buf, 1000), RB_ITER_ERROR);
}

/* ---- setup and bad input ---- */

static void test_init_bad_args(void **state)
{
	struct rb_cpu_config cfg = { .cpu = 0, .nr_pages = 4, .page_size = 4096 };
	size_t size = ring_buffer_cpu_size(4);
	void *cbmem = aligned_alloc(CACHELINE_SIZE, ALIGN_UP(size, CACHELINE_SIZE) + 64);
	void *pages[5];
	uint32_t i;

	(void)state;
	for (i = 0; i < 5; i++)
		pages[i] = aligned_alloc(4096, 4096);
	assert_int_equal(ring_buffer_cpu_size(0), 0);
	assert_int_equal(ring_buffer_cpu_size(1), 0);
	assert_int_equal(ring_buffer_cpu_size(RB_MAX_PAGES + 1), 0);
	assert_int_equal(ring_buffer_cpu_init(NULL, size, &cfg, pages), -RB_EINVAL);
	assert_int_equal(ring_buffer_cpu_init(cbmem, size, NULL, pages), -RB_EINVAL);
	assert_int_equal(ring_buffer_cpu_init(cbmem, size, &cfg, NULL), -RB_EINVAL);
	assert_int_equal(ring_buffer_cpu_init(cbmem, size - 1, &cfg, pages), -RB_EINVAL);
	assert_int_equal(ring_buffer_cpu_init((void *)((char *)cbmem + 8), size, &cfg, pages), -RB_EINVAL);
	cfg.page_size = 3000;
	assert_int_equal(ring_buffer_cpu_init(cbmem, size, &cfg, pages), -RB_EINVAL);
	cfg.page_size = 1024;
	assert_int_equal(ring_buffer_cpu_init(cbmem, size, &cfg, pages), -RB_EINVAL);
	cfg.page_size = 131072;
	assert_int_equal(ring_buffer_cpu_init(cbmem, size, &cfg, pages), -RB_EINVAL);
	cfg.page_size = 4096;
	cfg.mode = 7;
	assert_int_equal(ring_buffer_cpu_init(cbmem, size, &cfg, pages), -RB_EINVAL);
	cfg.mode = RB_MODE_DISCARD;
	cfg.nr_pages = 1;
	assert_int_equal(ring_buffer_cpu_init(cbmem, size, &cfg, pages), -RB_EINVAL);
	cfg.nr_pages = 4;
	cfg.cpu = 70000;
	assert_int_equal(ring_buffer_cpu_init(cbmem, size, &cfg, pages), -RB_EINVAL);
	cfg.cpu = 0;
	pages[2] = (char *)pages[2] + 4;
	assert_int_equal(ring_buffer_cpu_init(cbmem, size, &cfg, pages), -RB_EINVAL);
	pages[2] = (char *)pages[2] - 4;
	free(pages[4]);
	pages[4] = NULL;
	assert_int_equal(ring_buffer_cpu_init(cbmem, size, &cfg, pages), -RB_EINVAL);
	pages[4] = aligned_alloc(4096, 4096);
	assert_int_equal(ring_buffer_cpu_init(cbmem, size, &cfg, pages), 0);
	for (i = 0; i < 5; i++)
		free(pages[i]);
	free(cbmem);
}

static unsigned no_buffer_steps;	/* fast-path steps reached */

static void count_step(int step)
{
	(void)step;
	no_buffer_steps++;
}

/*
 * Before a buffer exists every call is refused and counted, never a crash.
 * The placeholder for absent CPUs is shared by them all: a writer must be
 * turned away before it takes a nest bit there (its gate is closed, I12),
 * so no step of the fast path is reached.  Zeroed memory may get as far
 * as the slow path, which refuses it.
 */
static void test_no_buffer(void **state)
{
	struct rb_cpu_buffer *cbs[2] = { NULL, NULL };
	struct ring_buffer rb = { .nr_cpus = 2, .cpus = cbs };
	struct rb_cpu_buffer *absent = ring_buffer_cpu(NULL, 0);
	struct rb_cpu_buffer *zeroed = aligned_alloc(CACHELINE_SIZE, sizeof(*zeroed));
	struct rb_cpu_buffer *targets[2] = { absent, zeroed };
	struct rb_stats before, after;
	struct rb_read rd;
	void *data = NULL;
	int i;

	(void)state;
	memset(zeroed, 0, sizeof(*zeroed));
	assert_ptr_equal(ring_buffer_cpu(&rb, 0), absent);
	assert_ptr_equal(ring_buffer_cpu(&rb, 5), absent);
	for (i = 0; i < 2; i++) {
		struct rb_cpu_buffer *cb = targets[i];

		ring_buffer_stats(cb, &before);
		no_buffer_steps = 0;
		host_hook_step = count_step;
		assert_int_equal(ring_buffer_reserve(cb, 8, &data), -RB_ENOBUF);
		assert_int_equal(ring_buffer_write(cb, "abcd", 4), -RB_ENOBUF);
		host_hook_step = NULL;
		if (cb == absent)
			assert_int_equal(no_buffer_steps, 0);
		assert_int_equal(cb->nest, 0);
		ring_buffer_commit(cb);
		assert_int_equal(ring_buffer_read_page(cb, &rd), -RB_ENOBUF);
		assert_int_equal(ring_buffer_flush(cb), -RB_ENOBUF);
		ring_buffer_record_on(cb);
		ring_buffer_stop(cb, "test");
		ring_buffer_stats(cb, &after);
		assert_int_equal(after.state, RB_STATE_NONE);
		assert_int_equal(after.refused - before.refused, 6);
		assert_int_equal(after.written, 0);
	}
	assert_null(data);
	assert_int_equal(host_warn_count, 0);
	free(zeroed);
}

static void test_bad_sizes(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	uint64_t write_before = r->cb->write;
	const uint32_t bad[] = { 0, RB_MAX_PAYLOAD + 1, RB_MAX_PAYLOAD + 4, UINT32_MAX };
	struct rb_stats st;
	void *data = NULL;
	unsigned i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(ring_buffer_reserve(r->cb, bad[i], &data), -RB_EINVAL);
		assert_int_equal(ring_buffer_reserve_cmpxchg(r->cb, bad[i], &data), -RB_EINVAL);
	}
	assert_null(data);
	assert_int_equal(r->cb->write, write_before);	/* nothing reserved */
	assert_int_equal(r->cb->nest, 0);		/* nothing held */
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.rejected, 2 * ARRAY_SIZE(bad));
	assert_int_equal(st.written, 0);
	assert_int_equal(st.refused, 0);
	rig_free(r);
}

static void test_max_event(void **state)
{
	struct rig *r = rig_new(8, 4096, RB_MODE_DISCARD);
	struct got g[32];
	uint32_t i;
	size_t n;

	(void)state;
	for (i = 0; i < 10; i++)
		assert_int_equal(write_ev(r->cb, RB_MAX_PAYLOAD, i, i % 2 ? CMPXCHG : XADD), 0);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	n = drain(r, g, ARRAY_SIZE(g), NULL);
	assert_int_equal(n, 10);
	for (i = 0; i < 10; i++) {
		assert_int_equal(g[i].seq, i);
		assert_int_equal(g[i].len, RB_MAX_PAYLOAD);
		assert_int_equal(g[i].page, i / 3);	/* three fit a 4 KiB page */
	}
	assert_ordered(g, n);
	rig_free(r);
}

/* ---- writing and reading ---- */

static void test_roundtrip(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	struct rb_read rd;
	struct got g[4];
	uint64_t t0;
	size_t n;

	(void)state;
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), 0);	/* empty */
	assert_int_equal(ring_buffer_flush(r->cb), 0);		/* empty: no-op */
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), 0);
	t0 = host_fake_now;
	assert_int_equal(write_ev(r->cb, 8, 42, XADD), 0);
	assert_int_equal(write_ev(r->cb, 5, 43, XADD), 0);
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), 0);	/* tail page */
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	n = drain(r, g, ARRAY_SIZE(g), NULL);
	assert_int_equal(n, 2);
	assert_int_equal(g[0].seq, 42);
	assert_int_equal(g[0].ts, t0);
	assert_int_equal(g[0].len, 8);
	assert_int_equal(g[1].seq, 43);
	assert_int_equal(g[1].ts, t0 + 1);
	assert_int_equal(g[1].len, 8);
	assert_true(((struct rb_page_header *)r->pages[0])->flags & RB_PAGE_FLUSHED);
	assert_int_equal(ring_buffer_flush(r->cb), 0);		/* empty again */
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), 0);
	assert_accounting(r, 2, 2, g, n, &(uint64_t){ 0 });
	rig_free(r);
}

static void test_page_crossing(void **state)
{
	struct rig *r = rig_new(8, 4096, RB_MODE_DISCARD);
	const uint32_t per_page = CAP(4096) / 104;	/* 100-byte payloads */
	const struct rb_page_header *hdr = r->pages[0];
	const uint8_t *data = (const uint8_t *)r->pages[0] + RB_PAGE_HEADER_SIZE;
	struct got g[200];
	uint32_t i;
	size_t n;

	(void)state;
	for (i = 0; i < 100; i++)
		assert_int_equal(write_ev(r->cb, 100, i, XADD), 0);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	/* The first page ends where its crosser started, padded to the end. */
	assert_int_equal(hdr->commit, per_page * 104);
	assert_int_equal(rb_record_kind(rb_load32(data + hdr->commit)), RB_KIND_PADDING);
	assert_int_equal(rb_record_arg(rb_load32(data + hdr->commit)), CAP(4096) - per_page * 104);
	assert_int_equal(hdr->entries, per_page);
	n = drain(r, g, ARRAY_SIZE(g), NULL);
	assert_int_equal(n, 100);
	for (i = 0; i < n; i++) {
		assert_int_equal(g[i].seq, i);
		assert_int_equal(g[i].page, i / per_page);
	}
	assert_ordered(g, n);
	assert_accounting(r, 100, 100, g, n, &(uint64_t){ 0 });
	rig_free(r);
}

static void test_exact_fill(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_DISCARD);
	const uint32_t per_page = CAP(4096) / 16;	/* 12-byte payloads fill exactly */
	const struct rb_page_header *hdr = r->pages[0];
	struct got g[300];
	uint32_t i;
	size_t n;

	(void)state;
	assert_int_equal(CAP(4096) % 16, 0);
	for (i = 0; i <= per_page; i++)
		assert_int_equal(write_ev(r->cb, 12, i, XADD), 0);
	assert_int_equal(hdr->commit, CAP(4096));
	assert_int_equal(hdr->entries, per_page);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	n = drain(r, g, ARRAY_SIZE(g), NULL);
	assert_int_equal(n, per_page + 1);
	assert_int_equal(g[per_page].page, 1);
	assert_int_equal(g[per_page - 1].page, 0);
	rig_free(r);
}

/* Long gaps: a time extend past 2^27 ticks, an absolute stamp past 2^54. */
static void test_extend_and_abs(void **state)
{
	const uint64_t steps[] = { 10, RB_DELTA_LIMIT + 5, 1ull << 40, 1, RB_EXTEND_LIMIT + 77, 3 };
	enum method m;

	(void)state;
	for (m = XADD; m <= CMPXCHG; m++) {
		struct rig *r = rig_new(4, 4096, RB_MODE_DISCARD);
		const uint8_t *data = (const uint8_t *)r->pages[0] + RB_PAGE_HEADER_SIZE;
		uint64_t base = ((struct rb_page_header *)r->pages[0])->base_ts;
		uint64_t expect[ARRAY_SIZE(steps)];
		uint32_t kinds[4] = { 0 }, off = 0, word;
		struct got g[8];
		unsigned i;

		host_fake_step = 0;
		host_fake_now = base;
		for (i = 0; i < ARRAY_SIZE(steps); i++) {
			host_fake_now += steps[i];
			expect[i] = host_fake_now;
			assert_int_equal(write_ev(r->cb, 8, i, m), 0);
		}
		/* Walk the raw records: which stamps needed help? */
		while (off < rb_off(r->cb->write)) {
			word = rb_load32(data + off);
			switch (rb_record_kind(word)) {
			case RB_KIND_EXTEND:
				kinds[1]++;
				off += RB_EXTEND_SIZE;
				break;
			case RB_KIND_ABS:
				kinds[2]++;
				off += RB_ABS_SIZE;
				break;
			default:
				assert_int_equal(rb_record_kind(word), 2);
				kinds[0]++;
				off += 12;
				break;
			}
		}
		assert_int_equal(kinds[0], ARRAY_SIZE(steps));
		assert_int_equal(kinds[1], 3);	/* 2^27+15, 2^40+.., 2^40+..+1 */
		assert_int_equal(kinds[2], 2);	/* both beyond 2^54 from the base */
		assert_int_equal(ring_buffer_flush(r->cb), 0);
		assert_int_equal(drain(r, g, ARRAY_SIZE(g), NULL), ARRAY_SIZE(steps));
		for (i = 0; i < ARRAY_SIZE(steps); i++)
			assert_int_equal(g[i].ts, expect[i]);
		rig_free(r);
	}
}

/*
 * Deltas at the format's boundaries, for every way an event is written.
 * A data record's arg holds a delta below 2^27; from 2^27 a time extend
 * (the bits from 27 up) goes before it, from 2^54 an absolute stamp.  A
 * delta of 2^27 written inline spills into the kind bits above the arg
 * (a 4-byte event becomes an 8-byte one stamped at the page base), and an
 * extend of 2^27 turns into an absolute-stamp word: so each stamp must be
 * read back exactly, and each record be of the kind the thresholds say.
 * The thresholds are written out here, not taken from the header; the
 * expected stamps are the fake clock's values.  A clock one below the
 * page base is clamped to it and counted; 0 and 1 above are not.
 *
 * Mutations caught: the fast path's "delta >= RB_DELTA_LIMIT" as ">"; the
 * slow path's "delta < RB_DELTA_LIMIT" as "<=" and "delta <
 * RB_EXTEND_LIMIT" as "<="; the clamp "(int64_t)delta < 0" as "<= 0"
 * (write_backwards counts 2).
 */
#define B27	(1ull << 27)
#define B54	(1ull << 54)
_Static_assert(B27 == RB_DELTA_LIMIT && B54 == RB_EXTEND_LIMIT, "the format's thresholds");

enum bwriter {
	BW_XADD4, BW_XADD8, BW_XADD12,		/* fixed sizes (constants): xadd */
	BW_CMPXCHG4, BW_CMPXCHG8, BW_CMPXCHG12,	/* the same, cmpxchg */
	BW_HEAD4, BW_HEAD8, BW_HEAD12, BW_HEAD108,	/* record and first word in one store */
	BW_BIT20,				/* the caller's level bit */
	BW_VAR,					/* lengths known only at run time */
	BW_WRITE,				/* ring_buffer_write(): copy and commit */
	BW_COUNT
};

static uint64_t head_same(uint64_t head)
{
	return head;
}

/* The payload of event seq, its first word too if first. */
static void bw_fill(uint8_t *p, uint32_t len, uint32_t seq, bool first)
{
	uint32_t i, t = tag(seq, len);

	if (first)
		memcpy(p, &t, 4);
	for (i = 4; i < len; i++)
		p[i] = pattern(seq, i);
}

/* Write event seq the way w does; len for the run-time lengths. */
static int bw_write(struct rb_cpu_buffer *cb, enum bwriter w, uint32_t seq, uint32_t len)
{
	uint8_t buf[RB_MAX_PAYLOAD];
	void *d = NULL;
	int rc;

#define FIXED(call, n, first) do {					\
		rc = (call);						\
		if (!rc) {						\
			bw_fill(d, n, seq, first);			\
			ring_buffer_commit(cb);				\
		}							\
		return rc;						\
	} while (0)
#define HEAD(n) FIXED(ring_buffer_reserve_head(cb, n, &d, arch_trace_level_bit(),	\
					       rb_head_word(n, tag(seq, n)), head_same), n, false)
	switch (w) {
	case BW_XADD4:		FIXED(ring_buffer_reserve_xadd(cb, 4, &d), 4, true);
	case BW_XADD8:		FIXED(ring_buffer_reserve_xadd(cb, 8, &d), 8, true);
	case BW_XADD12:		FIXED(ring_buffer_reserve_xadd(cb, 12, &d), 12, true);
	case BW_CMPXCHG4:	FIXED(ring_buffer_reserve_cmpxchg(cb, 4, &d), 4, true);
	case BW_CMPXCHG8:	FIXED(ring_buffer_reserve_cmpxchg(cb, 8, &d), 8, true);
	case BW_CMPXCHG12:	FIXED(ring_buffer_reserve_cmpxchg(cb, 12, &d), 12, true);
	case BW_HEAD4:		HEAD(4);
	case BW_HEAD8:		HEAD(8);
	case BW_HEAD12:		HEAD(12);
	case BW_HEAD108:	HEAD(108);
	case BW_BIT20:
		FIXED(ring_buffer_reserve_bit(cb, 20, &d, arch_trace_level_bit()), 20, true);
	case BW_VAR:
		return write_ev(cb, len, seq, seq % 2 ? CMPXCHG : XADD);
	case BW_WRITE:
		bw_fill(buf, len, seq, true);
		return ring_buffer_write(cb, buf, len);
	default:
		fail();
	}
#undef HEAD
#undef FIXED
	return -1;
}

/* The payload bytes w's record holds: the length it asks for, rounded up to 4. */
static uint32_t bw_len(enum bwriter w, uint32_t len)
{
	static const uint32_t fixed[BW_COUNT] = {
		[BW_XADD4] = 4, [BW_XADD8] = 8, [BW_XADD12] = 12, [BW_CMPXCHG4] = 4,
		[BW_CMPXCHG8] = 8, [BW_CMPXCHG12] = 12, [BW_HEAD4] = 4, [BW_HEAD8] = 8,
		[BW_HEAD12] = 12, [BW_HEAD108] = 108, [BW_BIT20] = 20,
	};

	return fixed[w] ? fixed[w] : (len + 3) & ~3u;
}

static void test_delta_boundaries(void **state)
{
	/* Offsets from the page base: -1 means one below it. */
	static const int64_t off_hi[] = { -1, 0, 1, (int64_t)B27 - 1, (int64_t)B27,
					  (int64_t)B27 + 1, (int64_t)B54 - 1, (int64_t)B54,
					  (int64_t)B54 + 1 };
	/* Run-time lengths: smallest, rounded, inline largest, long forms. */
	static const uint32_t var_len[] = { 4, 5, 108, 109, 112, RB_MAX_PAYLOAD };
	enum bwriter w;

	(void)state;
	for (w = 0; w < BW_COUNT; w++) {
		unsigned nlen = w == BW_VAR || w == BW_WRITE ? ARRAY_SIZE(var_len) : 1;

		for (unsigned li = 0; li < nlen; li++) {
			struct rig *r = rig_new(4, 65536, RB_MODE_DISCARD);
			const uint8_t *data = (const uint8_t *)r->pages[0] + RB_PAGE_HEADER_SIZE;
			uint64_t base = ((struct rb_page_header *)r->pages[0])->base_ts;
			uint32_t off = 0, word, kind, dlen;
			struct got g[ARRAY_SIZE(off_hi)];
			struct rb_stats st;
			unsigned i;

			host_fake_step = 0;
			for (i = 0; i < ARRAY_SIZE(off_hi); i++) {
				host_fake_now = base + (uint64_t)off_hi[i];
				assert_int_equal(bw_write(r->cb, w, i, var_len[li]), 0);
			}
			/* The raw records, as the thresholds say they must be. */
			for (i = 0; i < ARRAY_SIZE(off_hi); i++) {
				uint64_t delta = off_hi[i] < 0 ? 0 : (uint64_t)off_hi[i];

				word = rb_load32(data + off);
				if (delta >= B54) {
					assert_int_equal(word, RB_KIND_ABS << 27);
					assert_int_equal(rb_load64(data + off + 4), base + delta);
					off += 12;
					delta = 0;
				} else if (delta >= B27) {
					assert_int_equal(word, RB_KIND_EXTEND << 27 | delta >> 27);
					off += 4;
					delta &= B27 - 1;
				}
				word = rb_load32(data + off);
				kind = word >> 27;
				assert_int_equal(word & (B27 - 1), delta);
				dlen = kind ? 4 * kind : rb_load32(data + off + 4);
				assert_int_equal(dlen, bw_len(w, var_len[li]));
				assert_int_equal(kind, dlen <= 108 ? dlen / 4 : 0);
				off += (kind ? 4 : 8) + dlen;
			}
			assert_int_equal(off, rb_off(r->cb->write));
			assert_int_equal(ring_buffer_flush(r->cb), 0);
			assert_int_equal(drain(r, g, ARRAY_SIZE(g), NULL), ARRAY_SIZE(off_hi));
			for (i = 0; i < ARRAY_SIZE(off_hi); i++) {
				assert_int_equal(g[i].seq, i);
				assert_int_equal(g[i].page, 0);
				assert_int_equal(g[i].ts, base + (off_hi[i] < 0 ? 0
								 : (uint64_t)off_hi[i]));
			}
			ring_buffer_stats(r->cb, &st);
			assert_int_equal(st.write_backwards, 1);	/* the -1 alone */
			assert_int_equal(st.read_backwards, 0);
			rig_free(r);
		}
	}
}

/*
 * A delta of 0 on the slow path: the event that finds its page full
 * switches to a page whose base is the same clock as the old page's, and
 * stamps at that base.  Neither is a step back.  Mutations caught: the
 * slow path's clamp "(int64_t)delta < 0" as "<= 0" and the switch's
 * "base < cb->tail_base" as "<=" (either counts write_backwards).
 */
static void test_delta_zero_after_switch(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_DISCARD);
	const uint32_t per_page = CAP(4096) / 16;	/* 12-byte payloads fill exactly */
	uint64_t base = ((struct rb_page_header *)r->pages[0])->base_ts;
	struct rb_stats st;
	struct got g[300];
	uint32_t i;

	(void)state;
	host_fake_step = 0;
	host_fake_now = base;
	for (i = 0; i <= per_page; i++)
		assert_int_equal(write_ev(r->cb, 12, i, i % 2 ? CMPXCHG : XADD), 0);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	assert_int_equal(drain(r, g, ARRAY_SIZE(g), NULL), per_page + 1);
	assert_int_equal(g[per_page].page, 1);
	for (i = 0; i <= per_page; i++)
		assert_int_equal(g[i].ts, base);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.write_backwards, 0);
	assert_int_equal(st.read_backwards, 0);
	rig_free(r);
}

static void test_clock_backwards(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_DISCARD);
	uint64_t base = ((struct rb_page_header *)r->pages[0])->base_ts;
	struct rb_stats st;
	struct got g[4];

	(void)state;
	host_fake_step = 0;
	host_fake_now = base - 100;
	assert_int_equal(write_ev(r->cb, 8, 1, XADD), 0);
	host_fake_now = base + 5;
	assert_int_equal(write_ev(r->cb, 8, 2, XADD), 0);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	assert_int_equal(drain(r, g, 4, NULL), 2);
	assert_int_equal(g[0].ts, base);	/* clamped to the page base */
	assert_int_equal(g[1].ts, base + 5);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.write_backwards, 1);
	assert_int_equal(st.read_backwards, 0);
	rig_free(r);
}

/*
 * A buffer built on another CPU whose clock is ahead of the owner's: the
 * caller's bound on the difference (base_adjust) puts the first base at
 * or before the owner's clock, so its first stamps are its own, not the
 * builder's clamped (the bug: a base read on the builder).  Extremes
 * saturate at 0 and wrap nothing.
 */
static void test_base_built_elsewhere(void **state)
{
	static const struct { int64_t adjust; uint64_t now, base; } c[] = {
		{ 0, 1000000, 1000000 },
		{ -10000000, 20000000, 10000000 },	/* owner 10^7 cycles behind */
		{ 5000, 1000000, 1005000 },		/* owner ahead */
		{ -2000000, 1000000, 0 },		/* would be negative: 0 */
		{ INT64_MIN, 1000000, 0 },
		{ INT64_MIN + 1, UINT64_MAX, (uint64_t)1 << 63 },
	};
	struct rb_cpu_config cfg = { .cpu = RIG_CPU, .nr_pages = 4, .page_size = 4096 };
	struct rig *r = rig_new(4, 4096, RB_MODE_DISCARD);
	size_t size = ring_buffer_cpu_size(4);
	struct rb_stats st;
	struct got g[2];

	(void)state;
	host_fake_step = 0;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		cfg.base_adjust = c[i].adjust;
		host_fake_now = c[i].now;		/* the builder's clock */
		assert_int_equal(ring_buffer_cpu_init(r->cb, size, &cfg, r->pages), 0);
		assert_int_equal(((struct rb_page_header *)r->pages[0])->base_ts, c[i].base);
	}
	/* The owner, 10^7 behind, writes its first events right after. */
	cfg.base_adjust = -10000000 - 300;		/* skew minus its bound */
	host_fake_now = 50000000;
	assert_int_equal(ring_buffer_cpu_init(r->cb, size, &cfg, r->pages), 0);
	host_fake_now = 40000000 + 20;
	assert_int_equal(write_ev(r->cb, 8, 1, XADD), 0);
	host_fake_now = 40000000 + 90;
	assert_int_equal(write_ev(r->cb, 8, 2, XADD), 0);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	assert_int_equal(drain(r, g, 2, NULL), 2);
	assert_int_equal(g[0].ts, 40000020);
	assert_int_equal(g[1].ts, 40000090);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.write_backwards, 0);
	assert_int_equal(st.read_backwards, 0);
	rig_free(r);
}

/* ---- modes at full ---- */

static void test_overwrite_full(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	static struct got g[2000];
	uint64_t lost = 0;
	struct rb_stats st;
	uint32_t i;
	size_t n;

	(void)state;
	for (i = 0; i < 2000; i++)
		assert_int_equal(write_ev(r->cb, 28, i, i % 3 ? XADD : CMPXCHG), 0);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	n = drain(r, g, ARRAY_SIZE(g), &lost);
	ring_buffer_stats(r->cb, &st);
	/* The newest events survive, contiguous up to the last one written. */
	assert_true(n > 0 && n < 2000);
	for (i = 0; i < n; i++)
		assert_int_equal(g[i].seq, 2000 - n + i);
	assert_ordered(g, n);
	assert_int_equal(st.overrun, 2000 - n);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(lost, st.overrun);
	assert_int_equal(st.in_buffer, 0);
	assert_accounting(r, 2000, 2000, g, n, &lost);
	rig_free(r);
}

static void test_discard_full(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_DISCARD);
	const uint32_t per_page = CAP(4096) / 32;
	static struct got g[3000];
	uint64_t lost = 0, stored = 0, dropped = 0;
	struct rb_stats st;
	uint32_t i;
	size_t n;
	int rc;

	(void)state;
	for (i = 0; i < 1000; i++) {
		rc = write_ev(r->cb, 28, i, i % 2 ? XADD : CMPXCHG);
		assert_true(rc == 0 || rc == -RB_EFULL);
		stored += rc == 0;
		dropped += rc != 0;
	}
	/* All N pages filled, the oldest kept, the rest dropped. */
	assert_int_equal(stored, 4 * per_page);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.dropped, dropped);
	assert_int_equal(st.overrun, 0);
	assert_int_equal(st.in_buffer, stored);
	assert_accounting(r, 1000, stored, g, 0, NULL);
	assert_int_equal(ring_buffer_flush(r->cb), -RB_EFULL);	/* no free page */

	n = drain(r, g, ARRAY_SIZE(g), &lost);
	assert_int_equal(n, 3 * per_page);	/* the tail page stays */
	for (i = 0; i < n; i++)
		assert_int_equal(g[i].seq, i);
	/* Reading made room: writing resumes. */
	for (i = 1000; i < 1100; i++) {
		assert_int_equal(write_ev(r->cb, 28, i, XADD), 0);
		stored++;
	}
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	n += drain(r, g + n, ARRAY_SIZE(g) - n, &lost);
	assert_int_equal(n, stored);
	for (i = 0; i < 4 * per_page; i++)
		assert_int_equal(g[i].seq, i);
	for (; i < n; i++)
		assert_int_equal(g[i].seq, 1000 + i - 4 * per_page);
	assert_ordered(g, n);
	/* The drops are reported on the first page after the gap, only there. */
	assert_int_equal(lost, dropped);
	assert_int_equal(g[4 * per_page].page_lost, dropped);
	assert_int_equal(g[4 * per_page - 1].page_lost, 0);
	assert_accounting(r, 1100, stored, g, n, &lost);
	rig_free(r);
}

/* The reader keeps up partly: lost counts per page add up to the overrun. */
static void test_lost_per_page(void **state)
{
	struct rig *r = rig_new(3, 4096, RB_MODE_OVERWRITE);
	static struct got g[6000];
	uint64_t lost = 0, prev_end = 0;
	struct rb_stats st;
	uint32_t i;
	size_t n = 0, k;

	(void)state;
	for (i = 0; i < 6000; i++) {
		assert_int_equal(write_ev(r->cb, 20 + i % 40, i, XADD), 0);
		if (i % 700 == 0)
			n += drain(r, g + n, ARRAY_SIZE(g) - n, &lost);
	}
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	n += drain(r, g + n, ARRAY_SIZE(g) - n, &lost);
	ring_buffer_stats(r->cb, &st);
	assert_true(st.overrun > 0);
	assert_int_equal(lost, st.overrun);
	for (k = 0; k < n; k++) {	/* strictly increasing; gaps are losses */
		assert_true(k == 0 || g[k].seq > prev_end);
		prev_end = g[k].seq;
	}
	assert_int_equal(g[n - 1].seq, 5999);
	assert_ordered(g, n);
	assert_accounting(r, 6000, 6000, g, n, &lost);
	rig_free(r);
}

/* ---- nesting ---- */

static void test_recursion_guard(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	struct rb_stats st;
	void *outer, *inner, *x;
	struct got g[4];
	uint32_t v;

	(void)state;
	assert_int_equal(ring_buffer_reserve(r->cb, 4, &outer), 0);
	assert_int_equal(ring_buffer_reserve(r->cb, 4, &x), -RB_ERECURSION);
	host_trace_level = RB_NEST_MAX;
	assert_int_equal(ring_buffer_reserve(r->cb, 4, &x), -RB_ERECURSION);
	assert_int_equal(ring_buffer_flush(r->cb), -RB_ERECURSION);
	host_trace_level = 2;
	assert_int_equal(ring_buffer_reserve(r->cb, 4, &inner), 0);
	host_trace_level = 1;	/* lower than an active level: refused */
	assert_int_equal(ring_buffer_reserve(r->cb, 4, &x), -RB_ERECURSION);
	host_trace_level = 2;
	v = tag(2, 4);
	memcpy(inner, &v, 4);
	ring_buffer_commit(r->cb);
	host_trace_level = 0;
	v = tag(1, 4);
	memcpy(outer, &v, 4);
	ring_buffer_commit(r->cb);
	assert_int_equal(r->cb->nest, 0);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.refused, 4);
	assert_int_equal(st.recursion, 4);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	assert_int_equal(drain(r, g, 4, NULL), 2);
	assert_int_equal(g[0].seq, 1);		/* reserved first, so first */
	assert_int_equal(g[1].seq, 2);
	assert_ordered(g, 2);
	rig_free(r);
}

static void test_unbalanced_commit(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	struct rb_stats st;

	(void)state;
	ring_buffer_commit(r->cb);
	ring_buffer_commit(r->cb);
	assert_int_equal(r->cb->nest, 0);
	assert_int_equal(write_ev(r->cb, 8, 1, XADD), 0);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.refused, 2);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.state, RB_STATE_RECORDING);
	rig_free(r);
}

/* Only the outermost commit makes pages readable. */
static void test_nested_publish(void **state)
{
	struct rig *r = rig_new(8, 4096, RB_MODE_OVERWRITE);
	static struct got g[400];
	struct rb_read rd;
	void *outer;
	uint32_t i, v = tag(1000, 4);
	size_t n;

	(void)state;
	assert_int_equal(ring_buffer_reserve(r->cb, 4, &outer), 0);
	host_trace_level = 2;
	for (i = 0; i < 300; i++)
		assert_int_equal(write_ev(r->cb, 28, i, XADD), 0);
	assert_true(r->cb->tail_pos >= r->cb->commit_pos + 2);
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), 0);	/* nothing yet */
	host_trace_level = 0;
	memcpy(outer, &v, 4);
	ring_buffer_commit(r->cb);
	assert_int_equal(r->cb->commit_pos, r->cb->tail_pos);
	n = drain(r, g, ARRAY_SIZE(g), NULL);
	/* Page 0: the outer record (8 bytes) and 126 inner ones; page 1: 126. */
	assert_int_equal(n, 2 * (CAP(4096) / 32) + 1);
	assert_int_equal(g[0].seq, 1000);
	for (i = 1; i < n; i++)
		assert_int_equal(g[i].seq, i - 1);
	assert_ordered(g, n);
	rig_free(r);
}

/* ---- injected interrupts ---- */

static struct rb_cpu_buffer *inj_cb;	/* buffer the injected writer uses */
static uint32_t inj_seq;		/* its payload */
static int inj_countdown;		/* fire on this many-th hook call */
static int inj_rc;			/* its result */

static void inj_write(void)
{
	unsigned saved = host_trace_level;

	host_hook_clock = NULL;
	host_hook_xadd = NULL;
	host_trace_level = 2;
	inj_rc = write_ev(inj_cb, 8, inj_seq, XADD);
	host_trace_level = saved;
}

static void inj_after(void)
{
	if (--inj_countdown == 0)
		inj_write();
}

static void arm(struct rb_cpu_buffer *cb, void (**hook)(void), int countdown, uint32_t seq)
{
	inj_cb = cb;
	inj_seq = seq;
	inj_countdown = countdown;
	inj_rc = 99;
	*hook = inj_after;
}

/* An interrupt between the stamp and the reservation (B..C). */
static void test_irq_after_stamp(void **state)
{
	enum method m;

	(void)state;
	for (m = XADD; m <= CMPXCHG; m++) {
		struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
		const uint8_t *data = (const uint8_t *)r->pages[0] + RB_PAGE_HEADER_SIZE;
		struct rb_stats st;
		struct got g[4];

		assert_int_equal(write_ev(r->cb, 8, 1, m), 0);
		arm(r->cb, &host_hook_clock, 1, 3);
		assert_int_equal(write_ev(r->cb, 8, 2, m), 0);
		assert_int_equal(inj_rc, 0);
		ring_buffer_stats(r->cb, &st);
		/* xadd: the space was taken, then voided; cmpxchg: just retried. */
		assert_int_equal(st.voided, m == XADD ? 1 : 0);
		if (m == XADD)
			assert_int_equal(rb_record_kind(rb_load32(data + 24)), RB_KIND_PADDING);
		assert_int_equal(ring_buffer_flush(r->cb), 0);
		assert_int_equal(drain(r, g, 4, NULL), 3);
		assert_int_equal(g[0].seq, 1);
		assert_int_equal(g[1].seq, 3);	/* the interrupt's event */
		assert_int_equal(g[2].seq, 2);	/* restamped after it */
		assert_ordered(g, 3);
		rig_free(r);
	}
}

/* An interrupt right after the reservation (C..E): no void needed. */
static void test_irq_after_xadd(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	struct rb_stats st;
	struct got g[4];

	(void)state;
	arm(r->cb, &host_hook_xadd, 1, 3);
	assert_int_equal(write_ev(r->cb, 8, 2, XADD), 0);
	assert_int_equal(inj_rc, 0);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.voided, 0);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	assert_int_equal(drain(r, g, 4, NULL), 2);
	assert_int_equal(g[0].seq, 2);
	assert_int_equal(g[1].seq, 3);
	assert_ordered(g, 2);
	rig_free(r);
}

/* The crosser is interrupted after its xadd; the interrupt moves the tail. */
static void test_irq_interrupts_crosser(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	const uint32_t per_page = CAP(4096) / 104;
	const struct rb_page_header *hdr = r->pages[0];
	struct rb_stats st;
	struct got g[64];
	uint32_t i;
	size_t n;

	(void)state;
	for (i = 0; i < per_page; i++)
		assert_int_equal(write_ev(r->cb, 100, i, XADD), 0);
	arm(r->cb, &host_hook_xadd, 1, 500);
	assert_int_equal(write_ev(r->cb, 100, per_page, XADD), 0);
	assert_int_equal(inj_rc, 0);
	assert_int_equal(hdr->commit, per_page * 104);	/* set by the crosser */
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	n = drain(r, g, ARRAY_SIZE(g), NULL);
	assert_int_equal(n, per_page + 2);
	assert_int_equal(g[per_page].seq, 500);		/* first on the new page */
	assert_int_equal(g[per_page].page, 1);
	assert_int_equal(g[per_page + 1].seq, per_page);
	assert_ordered(g, n);
	rig_free(r);
}

/* An interrupt inside a page switch must not switch too: it drops. */
static void test_irq_during_switch(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	const uint32_t per_page = CAP(4096) / 104;
	uint64_t lost = 0;
	struct rb_stats st;
	struct got g[64];
	uint32_t i;
	size_t n;

	(void)state;
	for (i = 0; i < per_page; i++)
		assert_int_equal(write_ev(r->cb, 100, i, XADD), 0);
	/* Clock reads: 1 the fast path's stamp, 2 the new page's base (S3). */
	arm(r->cb, &host_hook_clock, 2, 500);
	assert_int_equal(write_ev(r->cb, 100, per_page, XADD), 0);
	assert_int_equal(inj_rc, -RB_EFULL);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.busy, 1);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	n = drain(r, g, ARRAY_SIZE(g), &lost);
	assert_int_equal(n, per_page + 1);
	assert_int_equal(g[per_page].seq, per_page);
	assert_accounting(r, per_page + 2, per_page + 1, g, n, &lost);
	rig_free(r);
}

/* A storm of nested events wraps onto the outer writer's page. */
static void test_commit_overrun(void **state)
{
	struct rig *r = rig_new(3, 4096, RB_MODE_OVERWRITE);
	uint64_t stored = 0, dropped = 0, lost = 0;
	static struct got g[1000];
	struct rb_stats st;
	void *outer;
	uint32_t i, v = tag(7777, 4);
	size_t n;
	int rc;

	(void)state;
	assert_int_equal(ring_buffer_reserve(r->cb, 4, &outer), 0);
	host_trace_level = 3;
	for (i = 0; i < 600; i++) {
		rc = write_ev(r->cb, 28, i, XADD);
		assert_true(rc == 0 || rc == -RB_EFULL);
		stored += rc == 0;
		dropped += rc != 0;
	}
	host_trace_level = 0;
	memcpy(outer, &v, 4);
	ring_buffer_commit(r->cb);
	ring_buffer_stats(r->cb, &st);
	assert_true(dropped > 0);
	assert_int_equal(st.commit_overrun, dropped);
	assert_int_equal(st.dropped, dropped);
	assert_int_equal(st.overrun, 0);
	/* Once committed, the outer page may be overwritten as usual. */
	for (i = 600; i < 700; i++)
		assert_int_equal(write_ev(r->cb, 28, i, XADD), 0);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	n = drain(r, g, ARRAY_SIZE(g), &lost);
	ring_buffer_stats(r->cb, &st);
	assert_true(st.overrun > 0);
	assert_int_equal(lost, st.overrun + st.dropped);
	assert_ordered(g, n);
	assert_accounting(r, 701, stored + 101, g, n, &lost);
	rig_free(r);
}

/* ---- control ---- */

static void test_record_off_on(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	struct rb_stats st;
	struct got g[4];

	(void)state;
	assert_int_equal(write_ev(r->cb, 8, 1, XADD), 0);
	ring_buffer_record_off(r->cb);
	assert_int_equal(write_ev(r->cb, 8, 2, XADD), -RB_EOFF);
	assert_int_equal(ring_buffer_flush(r->cb), 0);	/* flush works while off */
	assert_int_equal(drain(r, g, 4, NULL), 1);
	ring_buffer_record_on(r->cb);
	assert_int_equal(write_ev(r->cb, 8, 3, XADD), 0);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.refused, 0);	/* off is not an error */
	assert_int_equal(st.written, 2);
	rig_free(r);
}

static void test_integrity_stop(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	struct rb_stats st;
	struct rb_read rd;
	uint32_t i;
	int rc = 0;

	(void)state;
	/* Break I4 behind the writer's back: the next slot is out of step. */
	r->cb->slots[1] = rb_slot_make(12345, true, 1);
	for (i = 0; i < 200 && rc == 0; i++)
		rc = write_ev(r->cb, 100, i, XADD);
	assert_int_equal(rc, -RB_ESTOPPED);
	assert_int_equal(host_warn_count, 1);
	assert_string_equal(host_warn_last, "slot out of step with the tail");
	assert_int_equal(write_ev(r->cb, 8, 0, XADD), -RB_ESTOPPED);
	assert_int_equal(write_ev(r->cb, 8, 0, CMPXCHG), -RB_ESTOPPED);
	/* Nothing was complete before the stop: the reader finds no page. */
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), 0);
	assert_int_equal(ring_buffer_flush(r->cb), -RB_ESTOPPED);
	ring_buffer_record_on(r->cb);
	ring_buffer_stop(r->cb, "again");
	assert_int_equal(host_warn_count, 1);	/* reported once */
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.state, RB_STATE_STOPPED);
	assert_string_equal(st.stop_reason, "slot out of step with the tail");
	assert_int_equal(st.refused, 4);
	assert_int_equal(r->cb->nest, 0);
	rig_free(r);
}

/*
 * An integrity stop at publish: the pages complete before it stay readable,
 * event for event, and nothing after it is handed out.
 */
static void test_read_after_stop(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	const uint32_t per_page = CAP(4096) / 104;
	static struct got g[200];
	struct rb_page_header *tail;
	struct rb_stats st;
	uint64_t lost = 0;
	uint32_t i, ok = 0;
	size_t n;
	int rc = 0;

	(void)state;
	for (i = 0; i < 2 * per_page + 5; i++)
		assert_int_equal(write_ev(r->cb, 100, i, XADD), 0);
	/* Positions N, N + 1 published; break the tail page's header. */
	tail = (struct rb_page_header *)r->cb->tail_page;
	tail->pos += 7;
	for (; i < 200 && rc == 0; i++, ok++)
		rc = write_ev(r->cb, 100, i, i % 2 ? XADD : CMPXCHG);
	assert_int_equal(rc, -RB_ESTOPPED);
	assert_int_equal(ok - 1, per_page - 5 + 1);	/* the rest of the page, and one */
	assert_string_equal(host_warn_last, "page header inconsistent at publish");
	assert_int_equal(write_ev(r->cb, 8, 0, XADD), -RB_ESTOPPED);
	n = drain(r, g, ARRAY_SIZE(g), &lost);
	assert_int_equal(n, 2 * per_page);
	for (i = 0; i < n; i++)
		assert_int_equal(g[i].seq, i);
	assert_int_equal(lost, 0);
	assert_int_equal(ring_buffer_read_page(r->cb, &(struct rb_read){ 0 }), 0);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.state, RB_STATE_STOPPED);
	assert_int_equal(st.read, 2 * per_page);
	assert_int_equal(st.pages_read, 2);
	assert_int_equal(host_warn_count, 1);
	rig_free(r);
}

/*
 * A page whose records are damaged stops recording and is skipped; the
 * pages around it are read, and its events are counted as lost.
 */
static void test_read_skips_bad_page(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	const uint32_t per_page = CAP(4096) / 104;
	static struct got g[200];
	struct rb_stats st;
	struct rb_read rd;
	uint64_t lost = 0;
	uint8_t *bad;
	uint32_t i;
	size_t n;

	(void)state;
	for (i = 0; i < 3 * per_page + 5; i++)
		assert_int_equal(write_ev(r->cb, 100, i, XADD), 0);
	/* The page at position N + 1 (slot 1): its fifth record turns invalid. */
	bad = r->cb->pages[rb_slot_id(r->cb->slots[1])];
	rb_store32(bad + RB_PAGE_HEADER_SIZE + 4 * 104, rb_record_word(RB_KIND_INVALID, 0));
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), 1);
	assert_int_equal(rd.pos, 0);
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), 1);
	assert_int_equal(rd.pos, 2);			/* N + 1 skipped */
	assert_int_equal(rd.lost_overrun, per_page);	/* ... and its events counted */
	assert_string_equal(host_warn_last, "reader: page records malformed");
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), 0);
	assert_int_equal(write_ev(r->cb, 8, 0, XADD), -RB_ESTOPPED);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.bad_pages, 1);
	assert_int_equal(st.read, 2 * per_page);
	assert_int_equal(st.lost, per_page);
	n = drain(r, g, ARRAY_SIZE(g), &lost);
	assert_int_equal(n, 0);
	rig_free(r);
}

/*
 * The clock steps back above the page base (the writer cannot see it),
 * and again across a page switch: the reader finds and counts both, flags
 * their pages, and hands the events over unchanged.
 */
static void test_clock_back_inside_page(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	const uint32_t per_page = CAP(4096) / 32;
	static struct got g[200];
	const struct rb_page_header *hdr;
	struct rb_stats st;
	struct rb_read rd;
	uint32_t i;

	(void)state;
	host_fake_step = 10;
	for (i = 0; i < 5; i++)
		assert_int_equal(write_ev(r->cb, 28, i, XADD), 0);
	host_fake_now -= 25;			/* back, but above the base */
	for (; i < per_page; i++)		/* page 0 full */
		assert_int_equal(write_ev(r->cb, 28, i, XADD), 0);
	host_fake_now -= 1000;			/* back before the next base */
	for (; i < per_page + 3; i++)
		assert_int_equal(write_ev(r->cb, 28, i, XADD), 0);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.write_backwards, 0);	/* the writer saw neither */
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), 1);
	hdr = rd.page;
	assert_true(hdr->flags & RB_PAGE_CLOCK_BACK);
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), 1);
	hdr = rd.page;
	assert_true(hdr->flags & RB_PAGE_CLOCK_BACK);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.read_backwards, 2);
	assert_int_equal(st.clock_backwards, 2);
	assert_int_equal(st.state, RB_STATE_RECORDING);	/* the clock's fault, not ours */
	assert_int_equal(drain(r, g, ARRAY_SIZE(g), NULL), 0);
	rig_free(r);
}

static void test_reader_busy(void **state)
{
	struct rig *r = rig_new(4, 4096, RB_MODE_OVERWRITE);
	struct rb_read rd;

	(void)state;
	r->cb->reader_busy = 1;		/* as if another reader were inside */
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), -RB_EBUSY);
	r->cb->reader_busy = 0;
	assert_int_equal(ring_buffer_read_page(r->cb, &rd), 0);
	rig_free(r);
}

/* ---- bounded offsets: dropped reservations give their size back ---- */

/* Is [p, p + len) inside the data area of one of the rig's pages? */
static bool in_a_page(const struct rig *r, const void *p, uint32_t len)
{
	const uint8_t *b = p;
	uint32_t i;

	for (i = 0; i <= r->n; i++) {
		const uint8_t *pg = r->pages[i];

		if (b >= pg + RB_PAGE_HEADER_SIZE && b + len <= pg + r->page_size)
			return true;
	}
	return false;
}

/*
 * Reserve len bytes count times on a ring that is full; every reservation
 * must fail or lie inside a ring page.  Returns the reservations that
 * succeeded (each committed with a tagged payload).
 */
static uint64_t hammer(struct rig *r, uint64_t count, uint32_t len, enum method m,
		       uint32_t seq0, uint64_t *dropped)
{
	uint64_t ok = 0, i;
	void *data;
	int rc;

	for (i = 0; i < count; i++) {
		rc = m == CMPXCHG ? ring_buffer_reserve_cmpxchg(r->cb, len, &data)
				  : ring_buffer_reserve_xadd(r->cb, len, &data);
		if (rc) {
			if (rc != -RB_EFULL)
				fail_msg("reservation %llu: error %d", (unsigned long long)i, rc);
			(*dropped)++;
			continue;
		}
		if (!in_a_page(r, data, len))
			fail_msg("reservation %llu of %u bytes at %p: outside every ring page",
				 (unsigned long long)i, len, data);
		uint32_t t = tag((uint32_t)(seq0 + ok) & 0xfffff, len);
		memcpy(data, &t, 4);
		for (uint32_t k = 4; k < len; k++)
			((uint8_t *)data)[k] = pattern(t & 0xfffff, k);
		ring_buffer_commit(r->cb);
		ok++;
	}
	return ok;
}

/*
 * More than 2^32 bytes of dropped reservations, all inside the tail page's
 * delta window (the fake clock ticks once per read): the closed tail page's
 * offset must stay bounded, so the 32-bit offset never carries into the
 * generation and no later reservation lands outside the ring.
 */
#define HAMMER_DROPS	(((1ull << 32) / (8 + RB_MAX_PAYLOAD)) + 20000)
#define OFF_BOUND(cap)	((cap) + (RB_NEST_MAX + 1) * RB_MAX_RECORD)

static void discard_hammer(enum method m)
{
	struct rig *r = rig_new(2, 4096, RB_MODE_DISCARD);
	uint64_t stored, dropped = 0, lost = 0;
	static struct got g[64];
	struct rb_stats st;
	size_t n;

	stored = hammer(r, 8, RB_MAX_PAYLOAD, m, 0, &dropped);	/* fills both pages */
	assert_int_equal(stored, 2 * (CAP(4096) / (8 + RB_MAX_PAYLOAD)));
	stored += hammer(r, HAMMER_DROPS, RB_MAX_PAYLOAD, m, (uint32_t)stored, &dropped);
	assert_int_equal(stored, 6);
	assert_int_equal(dropped, HAMMER_DROPS + 2);
	assert_true(rb_off(r->cb->write) <= OFF_BOUND(r->cb->cap));
	assert_int_equal(rb_gen(r->cb->write), (uint32_t)r->cb->tail_pos);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.dropped, dropped);
	assert_int_equal(host_warn_count, 0);
	/* The reader frees a page: writing resumes on it, inside the ring. */
	n = drain(r, g, ARRAY_SIZE(g), &lost);
	assert_int_equal(n, 3);
	stored += hammer(r, 3, 8, m, (uint32_t)stored, &dropped);
	assert_int_equal(stored, 9);
	n += drain(r, g + n, ARRAY_SIZE(g) - n, &lost);	/* the old tail page */
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	n += drain(r, g + n, ARRAY_SIZE(g) - n, &lost);	/* the 3 small */
	assert_int_equal(n, 9);
	assert_int_equal(lost, dropped);
	assert_accounting(r, stored + dropped, stored, g, n, &lost);
	rig_free(r);
}

static void test_discard_drops_stay_in_ring_xadd(void **state)
{
	(void)state;
	discard_hammer(XADD);
}

static void test_discard_drops_stay_in_ring_cmpxchg(void **state)
{
	(void)state;
	discard_hammer(CMPXCHG);
}

/*
 * The same through commit overruns in overwrite mode: an NMI-level storm
 * that laps a 2-page ring onto the page of the task writer it interrupted.
 */
static void overrun_hammer(enum method m)
{
	struct rig *r = rig_new(2, 4096, RB_MODE_OVERWRITE);
	uint64_t stored, dropped = 0, lost = 0;
	static struct got g[64];
	struct rb_stats st;
	uint32_t v = tag(0xabcde, 4);
	void *outer;
	size_t n;

	assert_int_equal(ring_buffer_reserve(r->cb, 4, &outer), 0);
	host_trace_level = 3;
	stored = hammer(r, HAMMER_DROPS, RB_MAX_PAYLOAD, m, 0, &dropped);
	assert_int_equal(stored, 6);
	assert_int_equal(dropped, HAMMER_DROPS - 6);
	assert_true(rb_off(r->cb->write) <= OFF_BOUND(r->cb->cap));
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.commit_overrun, dropped);
	host_trace_level = 0;
	memcpy(outer, &v, 4);
	ring_buffer_commit(r->cb);
	/* Committed: the outer page may now be overwritten, inside the ring. */
	stored += hammer(r, 20, 8, m, (uint32_t)stored, &dropped) + 1;
	assert_int_equal(stored, 27);
	assert_int_equal(ring_buffer_flush(r->cb), 0);
	n = drain(r, g, ARRAY_SIZE(g), &lost);
	ring_buffer_stats(r->cb, &st);
	assert_int_equal(st.overrun + n, stored);
	assert_int_equal(lost, st.overrun + dropped);
	assert_int_equal(host_warn_count, 0);
	assert_accounting(r, stored + dropped, stored, g, n, &lost);
	rig_free(r);
}

static void test_overrun_drops_stay_in_ring_xadd(void **state)
{
	(void)state;
	overrun_hammer(XADD);
}

static void test_overrun_drops_stay_in_ring_cmpxchg(void **state)
{
	(void)state;
	overrun_hammer(CMPXCHG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_format_data_records, setup),
		cmocka_unit_test_setup(test_format_padding_extend_abs, setup),
		cmocka_unit_test_setup(test_format_malformed, setup),
		cmocka_unit_test_setup(test_init_bad_args, setup),
		cmocka_unit_test_setup(test_no_buffer, setup),
		cmocka_unit_test_setup(test_bad_sizes, setup),
		cmocka_unit_test_setup(test_max_event, setup),
		cmocka_unit_test_setup(test_roundtrip, setup),
		cmocka_unit_test_setup(test_page_crossing, setup),
		cmocka_unit_test_setup(test_exact_fill, setup),
		cmocka_unit_test_setup(test_extend_and_abs, setup),
		cmocka_unit_test_setup(test_delta_boundaries, setup),
		cmocka_unit_test_setup(test_delta_zero_after_switch, setup),
		cmocka_unit_test_setup(test_clock_backwards, setup),
		cmocka_unit_test_setup(test_base_built_elsewhere, setup),
		cmocka_unit_test_setup(test_overwrite_full, setup),
		cmocka_unit_test_setup(test_discard_full, setup),
		cmocka_unit_test_setup(test_lost_per_page, setup),
		cmocka_unit_test_setup(test_recursion_guard, setup),
		cmocka_unit_test_setup(test_unbalanced_commit, setup),
		cmocka_unit_test_setup(test_nested_publish, setup),
		cmocka_unit_test_setup(test_irq_after_stamp, setup),
		cmocka_unit_test_setup(test_irq_after_xadd, setup),
		cmocka_unit_test_setup(test_irq_interrupts_crosser, setup),
		cmocka_unit_test_setup(test_irq_during_switch, setup),
		cmocka_unit_test_setup(test_commit_overrun, setup),
		cmocka_unit_test_setup(test_record_off_on, setup),
		cmocka_unit_test_setup(test_integrity_stop, setup),
		cmocka_unit_test_setup(test_reader_busy, setup),
		cmocka_unit_test_setup(test_read_after_stop, setup),
		cmocka_unit_test_setup(test_read_skips_bad_page, setup),
		cmocka_unit_test_setup(test_clock_back_inside_page, setup),
		cmocka_unit_test_setup(test_discard_drops_stay_in_ring_xadd, setup),
		cmocka_unit_test_setup(test_discard_drops_stay_in_ring_cmpxchg, setup),
		cmocka_unit_test_setup(test_overrun_drops_stay_in_ring_xadd, setup),
		cmocka_unit_test_setup(test_overrun_drops_stay_in_ring_cmpxchg, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
