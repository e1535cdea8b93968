/*
 * <arch/trace_arch.h>, the benchmark's: the kernel's ring buffer hooks with
 * the stamp instruction swapped, for kernel/tracer/bench_writer.c only (its
 * objects are built with -Ikernel/bench_stamp first, once per variant), so
 * that one kernel can compare stamp instructions on the real inlined write
 * path.  The kernel's own hooks, everywhere else, stamp with rdtsc.
 *
 * TRACE_STAMP selects the instruction: 0 rdtsc (the kernel's), 1 rdtscp,
 * 2 lfence; rdtsc.  TRACE_STAMP_CONVERT=1 converts to ns on the write path
 * (tsc_cycles_to_ns(), arch/x86/time/tsc.c) instead of leaving it to the reader.
 *
 * How: the kernel's header is included with its two clock hooks renamed
 * out of the way, then they are defined again here; every other hook is
 * the kernel's, unchanged.
 */
#ifndef BENCH_STAMP_TRACE_ARCH_H
#define BENCH_STAMP_TRACE_ARCH_H

#ifndef TRACE_STAMP
#error "build kernel/tracer/bench_writer.c with -DTRACE_STAMP=0|1|2"
#endif
#ifndef TRACE_STAMP_CONVERT
#define TRACE_STAMP_CONVERT 0
#endif

#define arch_read_cycles	kernel_arch_read_cycles
#define arch_cycles_since	kernel_arch_cycles_since
#include_next <arch/trace_arch.h>
#undef arch_read_cycles
#undef arch_cycles_since

long long tsc_cycles_to_ns(uint64_t cycles);	/* <arch/tsc.h>: this CPU's clock */

/* The variant's stamp: a compiler barrier like the kernel's, its
 * instruction listed in tsc_sites like the kernel's (inject.tsc_skew). */
static __always_inline void bench_stamp(uint64_t *lo, uint64_t *hi)
{
	uint64_t a, d;
#if TRACE_STAMP == 1
	uint32_t aux;
	__asm__ __volatile__("1: rdtscp\n\t" TSC_SITE(TSC_SITE_RDTSCP)
			     : "=a"(a), "=d"(d), "=c"(aux) : : "memory");
#elif TRACE_STAMP == 2
	__asm__ __volatile__("lfence\n1: rdtsc\n\t" TSC_SITE(TSC_SITE_RDTSC)
			     : "=a"(a), "=d"(d) : : "memory");
#else
	__asm__ __volatile__("1: rdtsc\n\t" TSC_SITE(TSC_SITE_RDTSC)
			     : "=a"(a), "=d"(d) : : "memory");
#endif
	/* Both zero the top halves of rax and rdx, as the kernel's stamp says. */
	if (a > UINT32_MAX || d > UINT32_MAX)
		__builtin_unreachable();
	*lo = a;
	*hi = d;
}

static inline uint64_t arch_read_cycles(void)
{
	uint64_t lo, hi;

	bench_stamp(&lo, &hi);
#if TRACE_STAMP_CONVERT
	return (uint64_t)tsc_cycles_to_ns((hi << 32) | lo);
#else
	return (hi << 32) | lo;
#endif
}

static __always_inline bool arch_cycles_since(const uint64_t *base, uint32_t *delta)
{
#if TRACE_STAMP_CONVERT
	uint64_t d = arch_read_cycles() - *base;

	*delta = (uint32_t)d;
	return d >> 32 == 0;
#else
	uint64_t lo, hi;

	bench_stamp(&lo, &hi);
	return x86_tsc_since(lo, (uint32_t)hi, base, delta);
#endif
}

#endif
