/*
 * Architecture hooks of the trace ring buffer: the kernel's x86-64 side.
 * The contract is written out in the host shim (tests/host/include/arch/
 * trace_arch.h); in short:
 *
 *   arch_read_cycles()   raw TSC (rdtsc): the event stamp, nothing else
 *   arch_local_xadd()    xadd without LOCK: only this CPU and its own
 *                        interrupts touch the word, so one instruction is
 *                        atomic enough and costs no bus lock
 *   arch_local_cmpxchg() cmpxchg without LOCK, same reasoning
 *   arch_local_add32()   addl, same reasoning
 *   arch_trace_level()   0 task, 2 IRQ, 3 NMI: kept per CPU by trap_dispatch
 *                        at %gs:trace_level, read in one instruction
 *   arch_trace_warn()    report an integrity stop; safe in NMI: from NMI it
 *                        only records the reason, printed later by
 *                        trace_report_stops()
 */
#ifndef ARCH_TRACE_ARCH_H
#define ARCH_TRACE_ARCH_H

#include <stdint.h>
#include <arch/percpu.h>

/*
 * TRACE_STAMP selects the stamp instruction at build time: 0 rdtsc (the
 * kernel's), 1 rdtscp, 2 lfence; rdtsc. TRACE_STAMP_CONVERT=1 converts to
 * ns on the write path instead of leaving it to the reader. Only the
 * benchmark builds the other variants (kernel/bench_writer.c, compiled
 * once per variant), so that they can be compared on one kernel.
 */
#ifndef TRACE_STAMP
#define TRACE_STAMP 0
#endif
#ifndef TRACE_STAMP_CONVERT
#define TRACE_STAMP_CONVERT 0
#endif

#if TRACE_STAMP_CONVERT
long long trace_stamp_ns(uint64_t cycles);	/* kernel/bench.c: this CPU's clock */
#endif

static inline uint64_t arch_read_cycles(void)
{
	uint32_t lo, hi;

#if TRACE_STAMP == 1
	uint32_t aux;
	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
#elif TRACE_STAMP == 2
	__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
#else
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
#endif
#if TRACE_STAMP_CONVERT
	return (uint64_t)trace_stamp_ns(((uint64_t)hi << 32) | lo);
#else
	return ((uint64_t)hi << 32) | lo;
#endif
}

static inline uint64_t arch_local_xadd(uint64_t *p, uint64_t v)
{
	__asm__ __volatile__("xaddq %0, %1" : "+r"(v), "+m"(*p) : : "memory");
	return v;
}

static inline uint64_t arch_local_cmpxchg(uint64_t *p, uint64_t old, uint64_t new)
{
	__asm__ __volatile__("cmpxchgq %2, %1" : "+a"(old), "+m"(*p) : "r"(new) : "memory", "cc");
	return old;
}

static inline void arch_local_add32(uint32_t *p, uint32_t v)
{
	__asm__ __volatile__("addl %1, %0" : "+m"(*p) : "ir"(v) : "memory", "cc");
}

static inline unsigned arch_trace_level(void)
{
	uint32_t level;

	__asm__ __volatile__("movl %%gs:%c1, %0" : "=r"(level)
			     : "i"(__builtin_offsetof(struct percpu, trace_level)));
	return level;
}

void arch_trace_warn(unsigned cpu, const char *why);

#endif
