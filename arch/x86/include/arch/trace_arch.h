/*
 * <arch/trace_arch.h>, the kernel's: the trace ring buffer's architecture
 * hooks on x86-64, for every kernel object (-Iarch/x86/include).  Host
 * tests get tests/host/include/arch/trace_arch.h by their -I order instead.
 * The contract is written out in <trace/ring_buffer.h>; in short:
 *
 *   arch_read_cycles()   raw TSC (rdtsc): the event stamp, nothing else
 *   arch_cycles_since()  the same stamp as a difference from a base in
 *                        memory, when it fits 32 bits: rdtsc, sub, sbb
 *   arch_local_xadd()    xadd without LOCK: only this CPU and its own
 *                        interrupts touch the word, so one instruction is
 *                        atomic enough and costs no bus lock
 *   arch_local_cmpxchg() cmpxchg without LOCK, same reasoning
 *   arch_local_add32()   addl, same reasoning; or32, and32 likewise
 *   arch_local_sub32_zero() subl, answering from its zero flag
 *   arch_trace_level_bit() 1 << the context level (0 task, 2 IRQ, 3 NMI),
 *                        the tracer's per-CPU trace_ctx.level_bit, which
 *                        trap_dispatch switches, read in one instruction
 *   arch_trace_level()   the level itself (not a ring buffer hook: for the
 *                        kernel's own tests), trace_ctx.level
 *   arch_trace_warn()    report an integrity stop; safe in NMI: from NMI it
 *                        only records the reason, printed later by
 *                        arch_trace_report_stops() (arch/x86/trace_warn.c)
 */
#ifndef ARCH_TRACE_ARCH_H
#define ARCH_TRACE_ARCH_H

#include <stdbool.h>
#include <stdint.h>
#include <arch/local_ops.h>
#include <arch/percpu.h>
#include <arch/tsc_site.h>
#include "kernel/trace_ctx.h"

/*
 * The stamp instruction: the clock's two halves.  The "memory" clobber is
 * the compiler barrier the timestamp proof needs (docs/ring-buffer.md,
 * section 4): the write word's load at /A/ stays before the stamp at /B/,
 * and the xadd at /C/ after it, whatever the compiler schedules.  The CPU
 * keeps that order on its own for this CPU's interrupts (they are precise).
 * Each stamp lists its instruction in tsc_sites (arch/tsc_site.h: a data
 * record, no code), where inject.tsc_skew finds it.  (The benchmark
 * compares other stamp instructions with its own copy of these hooks:
 * kernel/tracer/bench_stamp/arch/trace_arch.h, whose stamps are listed too.)
 */
static __always_inline void arch_stamp(uint64_t *lo, uint64_t *hi)
{
	uint64_t a, d;

	__asm__ __volatile__("1: rdtsc\n\t" TSC_SITE(TSC_SITE_RDTSC)
			     : "=a"(a), "=d"(d) : : "memory");
	/* rdtsc zeroes the top halves of rax and rdx: told, so never redone. */
	if (a > UINT32_MAX || d > UINT32_MAX)
		__builtin_unreachable();
	*lo = a;
	*hi = d;
}

static inline uint64_t arch_read_cycles(void)
{
	uint64_t lo, hi;

	arch_stamp(&lo, &hi);
	return (hi << 32) | lo;
}

/*
 * Read the clock; if it is ahead of *base by less than 2^32, true with the
 * difference in *delta.  The raw TSC's two halves go straight into a
 * subtract and subtract-with-borrow against *base in memory: the high
 * half's result is zero exactly when the difference fits 32 bits.
 */
static __always_inline bool arch_cycles_since(const uint64_t *base, uint32_t *delta)
{
	uint64_t lo, hi;

	arch_stamp(&lo, &hi);
	return x86_tsc_since(lo, (uint32_t)hi, base, delta);
}

static inline uint64_t arch_local_xadd(uint64_t *p, uint64_t v)
{
	return x86_local_xadd(p, v);
}

/*
 * A 32-bit load into a 64-bit register, which zero-extends: returned as
 * 64 bits so that the guard compare (64 bits) needs no extension of its own.
 */
static inline uint64_t arch_trace_level_bit(void)
{
	uint64_t v;

	__asm__ __volatile__("movl %%gs:%c1+%c2, %k0" : "=r"(v)
			     : "i"(&trace_ctx.level_bit), "i"(PERCPU_VARS_OFFSET));
	return v;
}

static inline unsigned arch_trace_level(void)
{
	return this_cpu_read(trace_ctx.level);
}

void arch_trace_warn(unsigned cpu, const char *why);
/* Print the stops arch_trace_warn() kept in NMI context (not from NMI). */
void arch_trace_report_stops(void);

#endif
