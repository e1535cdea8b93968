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

/*
 * The context as the kernel keeps it per CPU (struct trace_ctx), here per
 * thread: ready-made forms, each one %fs load where the kernel does one %gs
 * load.  peer_baretrace.c sets them with host_trace_level.
 */
extern __thread uint32_t bench_level_bit;	/* 1 << host_trace_level */
extern __thread uint32_t bench_ent_ctx;		/* trace_ent_ctx(host_trace_level) */

static inline uint32_t arch_trace_level_bit(void)
{
	return bench_level_bit;
}

static inline uint64_t arch_read_cycles(void)
{
#if BENCH_CLOCK == 0
	return __builtin_ia32_rdtsc();	/* the kernel's: rdtsc, no fence */
#else
	return host_shim_read_cycles();
#endif
}

/* As the kernel's: rdtsc's halves subtracted from *base in memory. */
static inline bool arch_cycles_since(const uint64_t *base, uint32_t *delta)
{
#if BENCH_CLOCK == 0
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return x86_tsc_since(lo, hi, base, delta);	/* arch/local_ops.h, via the shim */
#else
	uint64_t d = arch_read_cycles() - *base;

	*delta = (uint32_t)d;
	return d >> 32 == 0;
#endif
}

#endif
