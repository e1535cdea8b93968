/*
 * The function tracer's workload (ftrace_work.c, built with sites although
 * it lives in kernel/tracer/): a known call chain for the tests and a leaf
 * for the benchmark. Not a kernel interface.
 */
#ifndef KERNEL_TRACER_FTRACE_WORK_H
#define KERNEL_TRACER_FTRACE_WORK_H

#include <stdint.h>

/* a calls b once; b calls c twice (c is a leaf): a -> b -> { c, c }. */
void ftrace_work_a(uint32_t x);
void ftrace_work_b(uint32_t x);
void ftrace_work_c(uint32_t x);
/* A leaf that does almost nothing: the benchmark's traced call. */
uint32_t ftrace_work_leaf(uint32_t x);
/*
 * Fill depth[l] with this CPU's shadow-stack depth at context level l, as
 * seen from inside a traced call (whose own frame is on its level's stack).
 */
void ftrace_depth_probe(uint32_t depth[4]);
/* Call the leaf n times; returns the TSC cycles the loop took (untraced itself). */
uint64_t ftrace_work_loop(uint32_t n);

#endif
