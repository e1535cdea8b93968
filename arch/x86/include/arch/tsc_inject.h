/*
 * Test facility inject.tsc_skew=<cycles>: every AP's TSC, as every reader
 * in the kernel sees it (trace stamps included), runs that many cycles
 * ahead of the boot CPU's. See arch/x86/tsc_inject.c.
 */
#ifndef ARCH_TSC_INJECT_H
#define ARCH_TSC_INJECT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Boot CPU, before any AP runs kernel code: if inject.tsc_skew,
 * inject.tsc_drift_ppm or inject.tsc_step is set and can be honoured,
 * rewrite every TSC read to trap and return the skew to store in each
 * AP's percpu.tsc_inject (0 without inject.tsc_skew); otherwise 0
 * (nothing touched).
 */
int64_t tsc_inject_init(void);

/*
 * inject.tsc_step=: step the chosen CPU's TSC now, once (the clock watchdog
 * calls it as it starts; nothing without the option).
 */
void tsc_inject_step(void);

/* True once tsc_inject_init() has rewritten the TSC reads. */
bool tsc_inject_active(void);

/*
 * Reads listed in the tsc_sites section, and how many of them hold the
 * instruction they were built with (a check that nothing was patched).
 */
unsigned tsc_sites_count(void);
unsigned tsc_sites_intact(void);

#endif
