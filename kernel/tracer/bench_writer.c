/*
 * The benchmark's write loops, compiled once per stamp variant (the
 * Makefile builds this file with -DTRACE_STAMP=0/1/2 and
 * -DTRACE_STAMP_CONVERT=0/1 and -DBENCH_VARIANT=<name>), so that each
 * variant is the real inlined write path with nothing chosen at run time.
 *
 * bench_loop_<variant>(cb, n, cmpxchg, len): n writes of len payload bytes;
 * returns the writes that failed (off, full, ...).  Each payload write
 * fills the event header and one field, as trace_event1() does.
 */
#include <stdint.h>
#include <arch/cpu.h>
#include "kernel/bench.h"
#include "kernel/tracing.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define BENCH_FN CAT(bench_loop_, BENCH_VARIANT)
#define BENCH_EVENT_FN CAT(bench_stamped_, BENCH_VARIANT)

uint64_t BENCH_FN(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len);
void BENCH_EVENT_FN(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len,
		    struct bench_lat *lat);

/* A refusal the compiler cannot see through: the null tracepoint. */
static __always_inline int null_reserve(void **p)
{
	int err;

	__asm__ __volatile__("movl %1, %0" : "=r"(err) : "i"(-RB_EOFF));
	*p = NULL;
	return err;
}

static __always_inline uint64_t write_loop(struct rb_cpu_buffer *cb, uint64_t n,
					   const bool cmpxchg, const uint32_t len,
					   const bool null)
{
	uint64_t failed = 0;

	for (uint64_t i = 0; i < n; i++) {
		uint32_t *p;
		int err = null ? null_reserve((void **)&p)
			: cmpxchg ? ring_buffer_reserve_cmpxchg(cb, len, (void **)&p)
				  : ring_buffer_reserve_xadd(cb, len, (void **)&p);
		if (__builtin_expect(err == 0, 1)) {
			p[0] = trace_ent_pack(TEV_bench, trace_ent_ctx(0), len / 4 - 1);
			p[1] = (uint32_t)i;
			ring_buffer_commit(cb);
		} else {
			failed++;
		}
	}
	return failed;
}

/*
 * A tracepoint's payload size is a constant its compiler folds into the
 * write path, so the usual sizes get a loop compiled for that size; any
 * other size runs a loop that knows it only at run time (a few
 * instructions more per event, for computing the record's size and kind).
 */
/* The payload sizes that get a loop of their own. */
#define BENCH_SIZES(X) X(4) X(8) X(12) X(16) X(24) X(32) X(64) X(128) X(256) X(512) X(1024)

#define SIZED(l) case l: return cmpxchg ? write_loop(cb, n, true, l, false) \
					  : write_loop(cb, n, false, l, false);

uint64_t BENCH_FN(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len)
{
	switch (len) {
	BENCH_SIZES(SIZED)
	}
	return cmpxchg ? write_loop(cb, n, true, len, false) : write_loop(cb, n, false, len, false);
}

/* bench event: n single writes, each between two rdtsc. */
static __always_inline void stamped_loop(struct rb_cpu_buffer *cb, uint64_t n,
					 const bool cmpxchg, const uint32_t len,
					 struct bench_lat *lat)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t a = rdtsc();

		write_loop(cb, 1, cmpxchg, len, false);
		bench_lat_add(lat, rdtsc() - a);
	}
}

#define STAMPED(l) case l: { cmpxchg ? stamped_loop(cb, n, true, l, lat) \
				     : stamped_loop(cb, n, false, l, lat); return; }

void BENCH_EVENT_FN(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len,
		    struct bench_lat *lat)
{
	switch (len) {
	BENCH_SIZES(STAMPED)
	}
	cmpxchg ? stamped_loop(cb, n, true, len, lat) : stamped_loop(cb, n, false, len, lat);
}

#if BENCH_NULL_LOOP
/*
 * The same loop around a "tracepoint" that refuses at once without looking
 * at the buffer (one instruction): the baseline that shows what the real
 * check costs when recording is off.
 */
uint64_t bench_loop_null(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len)
{
	(void)cmpxchg, (void)len;
	return write_loop(cb, n, false, 8, true);
}
#endif
