/*
 * The benchmark's loops over the kernel's own writers: the generated
 * trace_<name>() of <kernel/event_writers.h> and trace_printk(), compiled
 * with the kernel's ordinary flags, so that each loop measures exactly
 * what a call site in kernel code costs (its stamp, its reservation on
 * this CPU's buffer, its context level, its stores).  bench.c runs them
 * like its raw loops (`bench ring event=u32|u64|str16|printk`): the same
 * loop with recording off and around a null tracepoint, subtracted.
 *
 * bench_ev_<kind>(cb, n, cmpxchg, len): n writes; returns those refused.
 * cb, cmpxchg and len are the raw loops' and unused: the writers find
 * their buffer, reserve with xadd and know their record's size.
 */
#include <stdint.h>
#include "kernel/bench.h"
#include "kernel/trace_printk.h"
#include "kernel/tracing.h"

uint64_t bench_ev_u32(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len);
uint64_t bench_ev_u64(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len);
uint64_t bench_ev_str16(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len);
uint64_t bench_ev_printk(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len);

/* 15 characters and the NUL: a 16-byte string, at its bound but not cut. */
static const char bench_name[16] = "bench_string_15";

_Static_assert(sizeof(bench_name) == 16 && sizeof("bench_string_15") == 16,
	       "str16 records a string of 16 bytes with its NUL");

/* One field of 4 bytes: the bench event (the 28-instruction goal). */
uint64_t bench_ev_u32(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len)
{
	uint64_t failed = 0;

	(void)cb, (void)cmpxchg, (void)len;
	for (uint64_t i = 0; i < n; i++)
		failed += trace_bench((uint32_t)i) != 0;
	return failed;
}

/* One u64 field. */
uint64_t bench_ev_u64(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len)
{
	uint64_t failed = 0;

	(void)cb, (void)cmpxchg, (void)len;
	for (uint64_t i = 0; i < n; i++)
		failed += trace_bench_u64(i) != 0;
	return failed;
}

/* A bounded string of 16 bytes: measured, then copied (F_STR(name, 16)). */
uint64_t bench_ev_str16(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len)
{
	uint64_t failed = 0;

	(void)cb, (void)cmpxchg, (void)len;
	for (uint64_t i = 0; i < n; i++) {
		const char *s = bench_name;

		/* The compiler must not know the string: a call site rarely does. */
		__asm__ __volatile__("" : "+r"(s));
		failed += trace_bench_str(s) != 0;
	}
	return failed;
}

/* trace_printk with two integer arguments, encoded at run time. */
uint64_t bench_ev_printk(struct rb_cpu_buffer *cb, uint64_t n, int cmpxchg, uint32_t len)
{
	uint64_t failed = 0;

	(void)cb, (void)cmpxchg, (void)len;
	for (uint64_t i = 0; i < n; i++)
		failed += trace_printk("bench %u %u\n", (unsigned)i, (unsigned)(i >> 3)) != 0;
	return failed;
}
