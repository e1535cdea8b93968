/* Application processors: start-up, cross-CPU calls, TSC synchronisation. */
#ifndef ARCH_SMP_H
#define ARCH_SMP_H

#include <stdbool.h>
#include <stdint.h>

/* Start every CPU the MADT lists (up to maxcpus=), measure each one's TSC. */
void smp_init(void);
/* CPUs smp_init() will try to start (MADT enabled entries, maxcpus=); before it runs. */
unsigned smp_cpus_planned(void);

/*
 * Run fn(arg) on CPU cpu (from its idle loop, woken by an IPI) and return
 * without waiting; smp_call_wait() waits for it. cpu 0 runs it inline.
 * Returns false if the CPU is not online or still busy.
 */
bool smp_call_async(unsigned cpu, void (*fn)(void *), void *arg);
bool smp_call_wait(unsigned cpu, uint64_t timeout_ms);

/* A lower bound of CPU cpu's TSC minus the calling CPU's (cycles). */
int64_t smp_tsc_ahead_min(unsigned cpu);

/* Is a TSC skew bound of uncert_cycles at hz at most 20 us, exactly? */
bool smp_skew_bound_ok(uint64_t uncert_cycles, uint64_t hz);

/*
 * The clock watchdog's re-measure of AP cpu's TSC skew against the boot
 * CPU's (boot CPU only): the bring-up ping-pong, answered from an
 * interrupt handler on the AP, the whole of it bounded by max_ms.  On
 * SMP_RESYNC_OK, *skew and *uncert are the new measurement and its bound
 * (cycles).  An AP with interrupts off does not answer: SMP_RESYNC_TIMEOUT
 * after max_ms.
 */
enum { SMP_RESYNC_OK, SMP_RESYNC_NONE, SMP_RESYNC_TIMEOUT, SMP_RESYNC_VECTOR };
#define VEC_TSC_RESYNC	0xF4	/* after VEC_CALL, VEC_TEST (arch/lapic.h), VEC_TEXT_SYNC */
int smp_tsc_remeasure(unsigned cpu, uint64_t max_ms, int64_t *skew, int64_t *uncert);

#endif
