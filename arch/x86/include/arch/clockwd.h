/*
 * Clock watchdog (clock.watchdog_ms=): while tracing, the TSC's rate is
 * compared with the HPET or PM timer and each AP's skew is measured again;
 * a drift or a skew change beyond its bound is reported and the clocks it
 * touches are marked untrusted.  See arch/x86/clockwd.c and docs/clock.md.
 */
#ifndef ARCH_CLOCKWD_H
#define ARCH_CLOCKWD_H

/*
 * A check if one is due: the boot CPU, at task level, from the loops that
 * wait (the shell between keys, the demo).  Costs one rdtsc and a compare
 * when none is due; does nothing on other CPUs or while recording is off.
 */
void clock_watchdog_poll(void);

/* The watchdog's figures so far: one line, then one per AP (the shell's clock). */
void clock_watchdog_print(void);

#endif
