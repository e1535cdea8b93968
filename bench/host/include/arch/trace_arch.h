/*
 * <arch/trace_arch.h>, the host benchmark's (bench/host/, first on its -I
 * path): the ring buffer's hooks as the host test shim has them, with the
 * clock and the context's nest bit swapped for the kernel's way of getting
 * them.  The contract is in <trace/ring_buffer.h>.
 *
 * The host test shim (the next <arch/trace_arch.h> on the include path,
 * reached with #include_next) reads CLOCK_MONOTONIC in a hosted build,
 * because its stress test lets threads migrate between host CPUs.  The
 * kernel's arch_read_cycles() is a bare rdtsc, and a benchmark of the write
 * path must pay for the clock the kernel pays for, not for a vDSO call.
 * The benchmark's threads are pinned, so a raw TSC read is as monotonic per
 * "CPU" as the hook contract asks.  Likewise the shim derives the nest bit
 * from the thread's level on every call, where the kernel reads it ready.
 * The replacements take the kernel's forms (arch/x86's <arch/trace_arch.h>)
 * so that the write loop compiles to the kernel's instructions: the stamp's
 * halves as 64-bit values known to be zero-extended, the nest bit a 32-bit
 * load returned as 64 bits.
 *
 * How: the shim is included with its arch_read_cycles, arch_cycles_since
 * and arch_trace_level_bit renamed out of the way, then the names are
 * defined again here.  Every other hook (the local read-modify-write
 * instructions without LOCK, the thread-local context level, the warning
 * printer) is the shim's own, unchanged.  Build with HOST_TRACE_NO_HOOKS so
 * the shim's test injection points and fake clock are compiled out.
 *
 * BENCH_CLOCK selects the clock at build time:
 *   0  rdtsc, what the kernel runs (default)
 *   1  the shim's clock (clock_gettime), to see what the swap buys
 */
#ifndef BENCH_ARCH_TRACE_ARCH_H
#define BENCH_ARCH_TRACE_ARCH_H

#ifndef HOST_TRACE_NO_HOOKS
#error "the benchmark measures the kernel's write path: build with -DHOST_TRACE_NO_HOOKS"
#endif

#ifndef BENCH_CLOCK
#define BENCH_CLOCK 0
#endif

#define arch_read_cycles host_shim_read_cycles
#define arch_cycles_since host_shim_cycles_since
#define arch_trace_level_bit host_shim_trace_level_bit
#include_next <arch/trace_arch.h>
#undef arch_read_cycles
#undef arch_cycles_since
#undef arch_trace_level_bit
#include <baretrace/compiler.h>	/* __always_inline */

/*
 * The context as the kernel keeps it per CPU (struct trace_ctx), here per
 * thread: the nest bit ready-made, one %fs load where the kernel does one
 * %gs load.  peer_baretrace.c defines it beside the payload's form of the
 * context (bench_ent_hi, the kernel's trace_ctx.ent_hi, which is not an arch
 * hook) and sets both from host_trace_level.
 */
extern __thread uint32_t bench_level_bit;	/* 1 << host_trace_level */

/*
 * As the kernel's: a 32-bit load into a 64-bit register, which
 * zero-extends, returned as 64 bits so that the guard compare (64 bits)
 * needs no extension of its own; volatile asm like the kernel's %gs
 * accessor, so the compiler places it as it places that one.
 */
static inline uint64_t arch_trace_level_bit(void)
{
	uint64_t v;

	__asm__ __volatile__("movl %1, %k0" : "=r"(v) : "m"(bench_level_bit));
	return v;
}

#if BENCH_CLOCK == 0
/*
 * The kernel's stamp (without its tsc_sites entry, which is data, not
 * code): rdtsc with a compiler barrier, its halves as 64-bit values whose
 * top halves are said to be zero, so the compiler never clears them again.
 */
static __always_inline void arch_stamp(uint64_t *lo, uint64_t *hi)
{
	uint64_t a, d;

	__asm__ __volatile__("rdtsc" : "=a"(a), "=d"(d) : : "memory");
	if (a > UINT32_MAX || d > UINT32_MAX)
		__builtin_unreachable();
	*lo = a;
	*hi = d;
}
#endif

static inline uint64_t arch_read_cycles(void)
{
#if BENCH_CLOCK == 0
	uint64_t lo, hi;

	arch_stamp(&lo, &hi);
	return (hi << 32) | lo;
#else
	return host_shim_read_cycles();
#endif
}

/* As the kernel's: rdtsc's halves subtracted from *base in memory. */
static __always_inline bool arch_cycles_since(const uint64_t *base, uint32_t *delta)
{
#if BENCH_CLOCK == 0
	uint64_t lo, hi;

	arch_stamp(&lo, &hi);
	return x86_tsc_since(lo, (uint32_t)hi, base, delta);	/* arch/local_ops.h, via the shim */
#else
	uint64_t d = arch_read_cycles() - *base;

	*delta = (uint32_t)d;
	return d >> 32 == 0;
#endif
}

#endif
