/*
 * The function tracer's workload: functions that exist to be traced (the
 * Makefile gives this file sites, unlike the rest of kernel/tracer/).
 * noipa keeps GCC from inlining, cloning or dropping them, so each call
 * in the source is one call through one site.
 */
#include <arch/cpu.h>
#include <arch/percpu.h>
#include "kernel/ftrace.h"
#include "baretrace/compiler.h"
#include "ftrace_work.h"

#define noipa	__attribute__((noipa))

static volatile uint32_t sink;	/* the chain's side effect */

noipa void ftrace_work_c(uint32_t x)
{
	sink += x;
}

/* The stores after the calls keep them calls, not tail jumps (whose return is the caller's). */
noipa void ftrace_work_b(uint32_t x)
{
	ftrace_work_c(x);
	ftrace_work_c(x + 1);
	sink += 2;
}

noipa void ftrace_work_a(uint32_t x)
{
	ftrace_work_b(x);
	sink += 1;
}

noipa uint32_t ftrace_work_leaf(uint32_t x)
{
	return x * 3 + 1;
}

noipa void ftrace_depth_probe(uint32_t depth[4])
{
	unsigned cpu = percpu_read32(cpu);

	for (unsigned l = 0; l < 4; l++)
		depth[l] = ftrace_graph_depth_now(cpu, l);
}

/*
 * The benchmark's loop: n calls of the leaf between two TSC reads. Under
 * icount a cycle is an instruction, so the difference over n is the
 * instructions per iteration: the loop's own, the call, the leaf, and
 * whatever its site costs (a NOP, or the tracer).
 */
notrace noipa uint64_t ftrace_work_loop(uint32_t n)
{
	uint32_t acc = 0;
	uint64_t t0 = rdtsc();

	for (uint32_t i = 0; i < n; i++)
		acc = ftrace_work_leaf(acc);
	sink += acc;
	return rdtsc() - t0;
}
