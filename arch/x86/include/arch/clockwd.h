/*
 * Clock watchdog (clock.watchdog_ms=): while tracing, the TSC's rate is
 * compared with the HPET or PM timer and each AP's skew is measured again;
 * a drift or a skew change beyond its bound is reported and the clocks it
 * touches are marked untrusted.  See arch/x86/clockwd.c and docs/clock.md.
 */
#ifndef ARCH_CLOCKWD_H
#define ARCH_CLOCKWD_H

#include <stdbool.h>

/*
 * Who the watchdog works for: the code that stamps with the TSC (the
 * tracer registers itself).  The watchdog knows nothing of it but this,
 * and decides nothing for it:
 *   in_use()		are the clocks stamping anything now?  Checks run only
 *			while they are; an interval starts afresh after.
 *   untrusted(cpu)	the watchdog has just cleared cpu's tsc_trusted; what
 *			follows for what was stamped is the client's call.
 * One client, registered before the first poll; without one nothing is
 * in use and nothing is checked.
 */
struct clock_watchdog_client {
	bool (*in_use)(void);			/* the clocks are in use now */
	void (*untrusted)(unsigned cpu);	/* cpu's clock was just found untrustworthy */
};
void clock_watchdog_register(const struct clock_watchdog_client *c);

/*
 * Boot CPU, after bring-up: choose the reference, print the watchdog's
 * line (or why it is off), and apply inject.tsc_step=.
 */
void clock_watchdog_init(void);

/*
 * A check if one is due: the boot CPU, at task level, from the loops that
 * wait (the shell between keys, the demo).  Costs one rdtsc and a compare
 * when none is due; does nothing on other CPUs or while the client says
 * the clocks are not in use.
 * quiet: an AP that does not answer the skew re-measure is only counted,
 * not reported (the shell: a line would split its prompt).
 */
void clock_watchdog_poll(bool quiet);

/* The watchdog's figures so far: one line, then one per AP (the shell's clock). */
void clock_watchdog_print(void);

#endif
