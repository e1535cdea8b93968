/*
 * Peer "baretrace": the kernel's write path, compiled for the host.
 *
 * ring_buffer_reserve_head()/ring_buffer_commit_bit() of
 * <trace/ring_buffer.h>, called as the kernel's generated event writer
 * calls them, with the ring buffer's out-of-line writer and reader code,
 * built -O2 with HOST_TRACE_NO_HOOKS and this benchmark's arch header (the
 * host shim with the kernel's rdtsc stamp and level bit), so the fast path
 * is the kernel's instruction for instruction except where the kernel
 * reads %gs and the host reads %fs.
 *
 * Each thread owns one CPU buffer in overwrite mode (the kernel's default:
 * a flight recorder) of buf_bytes / 4 KiB pages, touched before the run.
 * No reader runs, as in Linux's ring_buffer_benchmark with disable_reader:
 * the figure is the writer's cost, page switches included.
 */
#include <stdlib.h>
#include <string.h>

#define TRACE_ARCH_HOST_DEFINE
#include <arch/trace_arch.h>
#include <trace/ring_buffer.h>

#include "bench_host.h"

/*
 * The kernel finds the CPU's buffer with one %gs load (this_cpu_rb());
 * here a thread-local, one %fs load.  The ring buffer's asm clobbers
 * memory, so it is loaded again for every event, as in the kernel.
 */
static __thread struct rb_cpu_buffer *bench_this_rb;

__thread uint32_t bench_level_bit;	/* read by arch_trace_level_bit() */
/*
 * The kernel's trace_ctx.ent_hi: trace_ent_ctx(level) in the high half, 0 in
 * the low, OR-ed as it is into a record's first 8 bytes (rb_head_word():
 * record word, then event header).
 */
static __thread uint64_t bench_ent_hi;

struct bt_thread {
	struct rb_cpu_buffer *cb;	/* this thread's buffer */
	void **pages;			/* its N + 1 page addresses */
};

/* trace_ent_head() of <kernel/tracing.h>: the first 8 bytes but the delta. */
static __always_inline uint64_t bench_ent_head(uint16_t id, unsigned words, uint32_t len)
{
	return rb_head_word(len, trace_ent_pack(id, 0, words));
}

/*
 * trace_ent_head_ctx() of <kernel/tracing.h>: this_cpu_or_into(), the
 * same volatile asm with %fs for %gs, one OR from memory.
 */
static __always_inline uint64_t bench_ent_head_ctx(uint64_t head)
{
	__asm__ __volatile__("orq %1, %0" : "+r"(head) : "m"(bench_ent_hi));
	return head;
}

/*
 * __trace_bench() of <kernel/event_writers.h> (TRACE_EVENT(bench, bench,
 * F_U32(seq)): a fixed-size event in the inline form), line for line, for
 * the host: the record word and event header handed to the reservation as
 * one head word and stored with the delta in one 64-bit store, the context
 * bits ORed in only past the guard, the level bit read once for reserve
 * and commit.  Without the call site's static key: the loop calls it
 * directly (the kernel's enabled site adds one jmp).
 */
static __always_inline int bench_trace_event1(uint32_t seq)
{
	struct rb_cpu_buffer *te_cb = bench_this_rb;
	const uint64_t te_bit = arch_trace_level_bit();
	struct trace_ev_bench *te_rec;
	int te_err;

	te_err = ring_buffer_reserve_head(te_cb, sizeof(*te_rec), (void **)&te_rec, te_bit,
					  bench_ent_head(TEV_bench, TRACE_ENT_WORDS(bench),
							 sizeof(*te_rec)),
					  bench_ent_head_ctx);
	if (likely(!te_err)) {
		te_rec->seq = seq;
		ring_buffer_commit_bit(te_cb, te_bit);
	}
	return te_err;
}

/* The timed loop: out of line, so profiles show it by name. */
__noinline static void bt_run(struct bench_thread *t, uint64_t n)
{
	uint64_t i;

	(void)t;
	for (i = 0; i < n; i++)
		bench_trace_event1((uint32_t)i);
}

static int bt_setup(const struct bench_opts *o)
{
	uint64_t pages = o->buf_bytes / RB_PAGE_SIZE_DEFAULT;

	if (pages < 2 || pages > RB_MAX_PAGES) {
		fprintf(stderr, "baretrace: --buf-bytes gives %llu pages of 4 KiB; 2..%u allowed\n",
			(unsigned long long)pages, RB_MAX_PAGES);
		return -1;
	}
	return 0;
}

static int bt_thread_init(struct bench_thread *t, const struct bench_opts *o)
{
	struct rb_cpu_config cfg = {
		.cpu = t->idx,
		.nr_pages = (uint32_t)(o->buf_bytes / RB_PAGE_SIZE_DEFAULT),
		.page_size = RB_PAGE_SIZE_DEFAULT,
		.mode = RB_MODE_OVERWRITE,
	};
	size_t size = ring_buffer_cpu_size(cfg.nr_pages);
	struct bt_thread *bt = calloc(1, sizeof(*bt));
	uint8_t *mem;
	uint32_t i;

	if (!bt)
		return -1;
	bt->cb = aligned_alloc(CACHELINE_SIZE, ALIGN_UP(size, CACHELINE_SIZE));
	bt->pages = calloc(cfg.nr_pages + 1, sizeof(void *));
	/* One block, like the kernel's contiguous run of pages; touched now. */
	mem = aligned_alloc(cfg.page_size, (size_t)(cfg.nr_pages + 1) * cfg.page_size);
	if (!bt->cb || !bt->pages || !mem)
		return -1;
	memset(mem, 0, (size_t)(cfg.nr_pages + 1) * cfg.page_size);
	for (i = 0; i <= cfg.nr_pages; i++)
		bt->pages[i] = mem + (size_t)i * cfg.page_size;
	if (ring_buffer_cpu_init(bt->cb, size, &cfg, bt->pages) != 0) {
		fprintf(stderr, "baretrace: ring_buffer_cpu_init failed\n");
		return -1;
	}
	host_trace_level = 0;		/* task context, and its ready forms */
	bench_level_bit = 1u << host_trace_level;
	bench_ent_hi = (uint64_t)trace_ent_ctx(host_trace_level) << 32;
	bench_this_rb = bt->cb;
	t->priv = bt;
	return 0;
}

/* Every event stored, none refused or dropped; overrun is expected. */
static int bt_check(struct bench_thread *t, unsigned n, const struct bench_opts *o,
		    uint64_t expected, FILE *out)
{
	int bad = 0;
	unsigned i;

	(void)o;
	for (i = 0; i < n; i++) {
		struct bt_thread *bt = t[i].priv;
		struct rb_stats st;
		int ok;

		ring_buffer_stats(bt->cb, &st);
		ok = st.state == RB_STATE_RECORDING && st.written == expected &&
		     st.entries == expected && st.dropped == 0 && st.refused == 0 &&
		     st.rejected == 0;
		fprintf(out, "bench-host-check: peer=baretrace thread=%u written=%llu entries=%llu "
			"overrun=%llu dropped=%llu refused=%llu voided=%llu clock_backwards=%llu %s\n",
			i, (unsigned long long)st.written, (unsigned long long)st.entries,
			(unsigned long long)st.overrun, (unsigned long long)st.dropped,
			(unsigned long long)st.refused, (unsigned long long)st.voided,
			(unsigned long long)st.clock_backwards, ok ? "ok" : "FAIL");
		bad |= !ok;
	}
	return bad;
}

const struct bench_peer bench_peer_baretrace = {
	.name = "baretrace",
	.setup = bt_setup,
	.thread_init = bt_thread_init,
	.run = bt_run,
	.check = bt_check,
};
