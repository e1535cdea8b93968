/*
 * The benchmark's write loops, compiled once per stamp variant (the
 * Makefile builds this file with -DTRACE_STAMP=0/1/2 and
 * -DTRACE_STAMP_CONVERT=0/1 and -DBENCH_VARIANT=<name>), so that each
 * variant is the real inlined write path with nothing chosen at run time.
 *
 * bench_loop_<variant>(cb, n, cmpxchg, len): n writes of len payload bytes;
 * returns the writes that failed (off, full, ...).
 */
#include <stdint.h>
#include "kernel/tracing.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define BENCH_FN CAT(bench_loop_, BENCH_VARIANT)

uint64_t BENCH_FN(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len);

uint64_t BENCH_FN(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len)
{
	uint64_t failed = 0;

	for (uint64_t i = 0; i < n; i++) {
		uint32_t *p;
		int err = cmpxchg ? ring_buffer_reserve_cmpxchg(cb, len, (void **)&p)
				  : ring_buffer_reserve_xadd(cb, len, (void **)&p);
		if (__builtin_expect(err == 0, 1)) {
			p[0] = (uint32_t)TEV_BENCH | ((len / 4 - 1) << 24);
			p[1] = (uint32_t)i;
			ring_buffer_commit(cb);
		} else {
			failed++;
		}
	}
	return failed;
}
