/*
 * Peer "floor": the least a trace write can cost on this machine.
 *
 * rdtsc, then the same 12-byte record baretrace writes (a 4-byte record
 * header of the ring format carrying the delta from the previous stamp,
 * then the 8-byte payload) stored into a plain per-thread array that wraps.
 * No reservation, no nesting guard, no page structure, no commit.  The
 * array has the ring's size, so both touch the same amount of memory.
 *
 * The compiler cannot drop the stores: the array is reached through a
 * pointer it cannot see the end of, and a compiler barrier after the loop
 * makes the stores due.  rdtsc is volatile, so it runs once per event.
 */
#include <stdlib.h>
#include <string.h>

#include <baretrace/compiler.h>
#include <trace/ring_format.h>

#include "bench_host.h"

struct floor_thread {
	uint32_t *w;		/* the array, in 32-bit words */
	uint32_t nwords;	/* its length, a multiple of 3 */
	uint32_t pos;		/* next record, in words */
	uint64_t last;		/* previous stamp */
	uint64_t stored;	/* records written */
};

__noinline static void floor_run(struct bench_thread *t, uint64_t n)
{
	struct floor_thread *f = t->priv;
	const uint32_t ent = bench_ent_word(TEV_bench, 0, 1);
	const uint32_t lim = f->nwords - 3;
	uint32_t *w = f->w, pos = f->pos;
	uint64_t last = f->last, i;

	for (i = 0; i < n; i++) {
		uint64_t now = __builtin_ia32_rdtsc();

		w[pos] = rb_record_word(8 / 4, (uint32_t)(now - last));
		w[pos + 1] = ent;
		w[pos + 2] = (uint32_t)i;
		last = now;
		pos = pos < lim ? pos + 3 : 0;
	}
	__asm__ __volatile__("" : : "r"(w) : "memory");
	f->pos = pos;
	f->last = last;
	f->stored += n;
}

static int floor_setup(const struct bench_opts *o)
{
	(void)o;
	return 0;
}

static int floor_thread_init(struct bench_thread *t, const struct bench_opts *o)
{
	struct floor_thread *f = calloc(1, sizeof(*f));
	uint64_t words = o->buf_bytes / 4 / 3 * 3;

	if (!f || words > UINT32_MAX)
		return -1;
	f->nwords = (uint32_t)words;
	f->w = aligned_alloc(4096, ALIGN_UP(o->buf_bytes, 4096));
	if (!f->w)
		return -1;
	memset(f->w, 0, ALIGN_UP(o->buf_bytes, 4096));
	f->last = __builtin_ia32_rdtsc();
	t->priv = f;
	return 0;
}

static int floor_check(struct bench_thread *t, unsigned n, const struct bench_opts *o,
		       uint64_t expected, FILE *out)
{
	int bad = 0;
	unsigned i;

	(void)o;
	for (i = 0; i < n; i++) {
		struct floor_thread *f = t[i].priv;
		int ok = f->stored == expected &&
			 rb_record_kind(f->w[0]) == 2 && f->w[1] == bench_ent_word(TEV_bench, 0, 1);

		fprintf(out, "bench-host-check: peer=floor thread=%u stored=%llu %s\n", i,
			(unsigned long long)f->stored, ok ? "ok" : "FAIL");
		bad |= !ok;
	}
	return bad;
}

const struct bench_peer bench_peer_floor = {
	.name = "floor",
	.setup = floor_setup,
	.thread_init = floor_thread_init,
	.run = floor_run,
	.check = floor_check,
};
