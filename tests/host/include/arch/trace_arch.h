/*
 * <arch/trace_arch.h>, the host test shim: the ring buffer's architecture
 * hooks for host tests (tests/host/, via -Itests/host/include), where a
 * "CPU" is a thread and an "interrupt" is a signal delivered to that
 * thread.  The kernel's hooks are arch/x86/include/arch/trace_arch.h; the
 * host benchmark's (bench/host/include/arch/trace_arch.h) wraps this one.
 * Which of the three a build gets is decided by its -I order.  The hook
 * contract all three meet is written in <trace/ring_buffer.h>, next to
 * the code that relies on it.
 *
 * Host implementation notes:
 *   - Clock: CLOCK_MONOTONIC in ns (monotonic across the host CPUs a thread
 *     migrates between, unlike a raw TSC on some hosts), plus a per-thread
 *     skew the stress test only ever increases to force extends and
 *     absolute stamps.  Unit tests may switch to a fake clock.  Freestanding
 *     builds (the kernel compile check) read the TSC instead.
 *   - xadd/cmpxchg/add/or/and/sub: the kernel's own inline assembly
 *     WITHOUT lock (arch/x86/include/arch/local_ops.h, included by path).
 *     ThreadSanitizer cannot see inside asm, so under -fsanitize=thread the
 *     same hooks are __atomic builtins with relaxed order: TSan then sees
 *     every access to these words.  The choice is sound because the words
 *     are only ever touched by their own thread and its signal handlers;
 *     the reader thread never reads them before a release/acquire pair.
 *   - Level: a thread-local (host_trace_level) the test's signal handlers
 *     raise and restore; the bit is derived from it on each call.
 *   - Test injection (host only, never in the kernel): host_hook_clock runs
 *     at the end of arch_read_cycles (after the value is taken) and
 *     host_hook_xadd right after the xadd, to place an "interrupt" at
 *     exactly those points; host_hook_step runs at arch_rb_step(), right
 *     after each labelled step of the ring buffer (enum rb_step), where a
 *     test places an interrupt or a reader on another CPU.
 */
#ifndef ARCH_TRACE_ARCH_H
#define ARCH_TRACE_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#if __STDC_HOSTED__
#include <time.h>
#include <unistd.h>
#endif

/* Host state, defined once by a test file with TRACE_ARCH_HOST_DEFINE. */
extern __thread unsigned host_trace_level;	/* context level of this thread */
extern __thread uint64_t host_clock_skew;	/* added to the clock; only grows */
extern int host_fake_clock_on;			/* unit tests: use host_fake_now */
extern uint64_t host_fake_now;			/* fake clock value */
extern uint64_t host_fake_step;			/* added to host_fake_now per read */
extern void (*host_hook_clock)(void);		/* injected after a clock read */
extern void (*host_hook_xadd)(void);		/* injected after a local xadd */
extern void (*host_hook_step)(int step);	/* injected after a labelled step */
extern const char *host_warn_last;		/* last integrity-stop reason */
extern unsigned host_warn_count;		/* integrity stops reported */
extern int host_warn_quiet;			/* do not print reasons */

#ifdef TRACE_ARCH_HOST_DEFINE
__thread unsigned host_trace_level;
__thread uint64_t host_clock_skew;
int host_fake_clock_on;
uint64_t host_fake_now;
uint64_t host_fake_step;
void (*host_hook_clock)(void);
void (*host_hook_xadd)(void);
void (*host_hook_step)(int step);
const char *host_warn_last;
unsigned host_warn_count;
int host_warn_quiet;
#endif

/*
 * HOST_TRACE_NO_HOOKS compiles the injection points and the fake clock out,
 * leaving what the kernel's hooks do: used to count fast-path instructions.
 */
#ifdef HOST_TRACE_NO_HOOKS
#define host_run_hook(hook)	do { } while (0)
#else
static inline void host_run_hook(void (**hook)(void))
{
	void (*fn)(void) = *hook;

	if (fn)
		fn();
}

/* The ring buffer's step hook (enum rb_step in <trace/ring_buffer.h>). */
static inline void host_run_step(int step)
{
	void (*fn)(int) = host_hook_step;

	if (fn)
		fn(step);
}
#define arch_rb_step(step)	host_run_step((int)(step))
#endif

static inline uint64_t host_clock_now(void)
{
#if __STDC_HOSTED__
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
	       __atomic_load_n(&host_clock_skew, __ATOMIC_RELAXED);
#else
	return __builtin_ia32_rdtsc();
#endif
}

static inline uint64_t arch_read_cycles(void)
{
	uint64_t now;

#ifndef HOST_TRACE_NO_HOOKS
	if (host_fake_clock_on) {
		now = host_fake_now;
		host_fake_now += host_fake_step;
	} else
#endif
		now = host_clock_now();
	/* An "interrupt" here lands after the stamp was taken. */
	host_run_hook(&host_hook_clock);
	return now;
}

static inline bool arch_cycles_since(const uint64_t *base, uint32_t *delta)
{
	uint64_t d = arch_read_cycles() - *base;

	*delta = (uint32_t)d;
	return d >> 32 == 0;
}

#ifdef __SANITIZE_THREAD__
static inline uint64_t arch_local_xadd(uint64_t *p, uint64_t v)
{
	uint64_t old = __atomic_fetch_add(p, v, __ATOMIC_RELAXED);

	host_run_hook(&host_hook_xadd);
	return old;
}

static inline uint64_t arch_local_cmpxchg(uint64_t *p, uint64_t old, uint64_t new)
{
	__atomic_compare_exchange_n(p, &old, new, 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	return old;
}

static inline void arch_local_add32(uint32_t *p, uint32_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static inline void arch_local_or32(uint32_t *p, uint64_t v)
{
	__atomic_fetch_or(p, (uint32_t)v, __ATOMIC_RELAXED);
}

static inline void arch_local_and32(uint32_t *p, uint32_t v)
{
	__atomic_fetch_and(p, v, __ATOMIC_RELAXED);
}

static inline bool arch_local_sub32_zero(uint32_t *p, uint64_t v)
{
	return __atomic_sub_fetch(p, (uint32_t)v, __ATOMIC_RELAXED) == 0;
}
#else
/* The kernel's own instructions: cmpxchg, add32, or32, and32, sub32_zero. */
#include "../../../../arch/x86/include/arch/local_ops.h"

static inline uint64_t arch_local_xadd(uint64_t *p, uint64_t v)
{
	uint64_t old = x86_local_xadd(p, v);

	host_run_hook(&host_hook_xadd);
	return old;
}

#endif

static inline uint64_t arch_trace_level_bit(void)
{
	unsigned level = host_trace_level;

	return level < 4u ? 1u << level : 0u;
}

static inline void arch_trace_warn(unsigned cpu, const char *why)
{
	host_warn_last = why;
	host_warn_count++;
#if __STDC_HOSTED__
	if (!host_warn_quiet) {
		static const char pfx[] = "ring buffer stopped: ";
		char c = (char)('0' + cpu % 10u);
		const char *e = why;

		while (*e)
			e++;
		/* write(2) only: this may run in a signal handler. */
		if (write(2, pfx, sizeof(pfx) - 1) < 0 || write(2, "cpu ", 4) < 0 ||
		    write(2, &c, 1) < 0 || write(2, ": ", 2) < 0 ||
		    write(2, why, (size_t)(e - why)) < 0 || write(2, "\n", 1) < 0)
			return;
	}
#else
	(void)cpu;
#endif
}

#endif
