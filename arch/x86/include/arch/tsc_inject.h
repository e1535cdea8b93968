/*
 * Test facility inject.tsc_skew=<cycles>: every AP's TSC, as every reader
 * in the kernel sees it (trace stamps included), runs that many cycles
 * ahead of the boot CPU's. See arch/x86/time/tsc_inject.c.
 */
#ifndef ARCH_TSC_INJECT_H
#define ARCH_TSC_INJECT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Boot CPU, before any AP runs kernel code: if inject.tsc_skew (or
 * inject.tsc_skew_others), inject.tsc_drift_ppm or inject.tsc_step is set
 * and can be honoured, rewrite every TSC read to trap and return true;
 * otherwise false (nothing touched).
 */
bool tsc_inject_init(void);

/* The skew to store in CPU cpu's offset before it starts (its CPU hook) (0: none). */
int64_t tsc_inject_skew(unsigned cpu);

/*
 * inject.tsc_step=: at the end of bring-up (the clock watchdog calls it as
 * it starts), step the chosen CPU's TSC now, or arm the step to happen
 * inject.tsc_step_ms= later; once.  Nothing without the option.
 */
void tsc_inject_step(void);

/* Boot CPU, from a poll: say once that an armed step happened. */
void tsc_inject_step_poll(void);

/* True once tsc_inject_init() has rewritten the TSC reads. */
bool tsc_inject_active(void);

/*
 * Reads listed in the tsc_sites section, and how many of them hold the
 * instruction they were built with (a check that nothing was patched).
 */
unsigned tsc_sites_count(void);
unsigned tsc_sites_intact(void);

#endif
