/*
 * Hard-lockup watchdog (arch/x86/watchdog.c, rule in
 * <arch/watchdog_rule.h>): a watched CPU that takes no interrupt
 * for watchdog.ms is reported from an NMI and the panic path ends the boot.
 *
 * Who is watched (the rule docs/options.md states): a CPU while it runs
 * work -- the boot CPU from the first job to the last, an application
 * processor while it runs a cross-CPU call -- and not while idle, booting,
 * while that work has the LAPIC timer for itself (lapic_timer_periodic()
 * or _oneshot() until lapic_timer_stop()), or while it waits, bounded by a
 * timeout of its own, for other CPUs that are watched themselves
 * (watchdog_pause(): smp_call_wait(), text_sync(), a buffer
 * reconfiguration's confirmations, run=fault's start) or for a person
 * (run=echo's line). Work that runs longer than watchdog.ms with
 * interrupts off on purpose calls watchdog_touch(), as Linux's
 * touch_nmi_watchdog(): the job runner, the ktest runner and the dump's
 * output do.
 *
 * The end of a pause whose wait was answered is a sign of life (R4); a
 * wait that expired counts whole, and the CPU is watched through its
 * waits until its next sign of life (R5): the CPU it waited for was not
 * watched (<arch/watchdog_rule.h>).
 *
 * A pause is one call at each end of the wait, not a touch in its loop:
 * under icount a waiting CPU's instructions are charged to the virtual
 * time the CPU it waits for measures (the vCPUs take turns), so a touch
 * per turn showed in a benchmark's figures.
 */
#ifndef ARCH_WATCHDOG_H
#define ARCH_WATCHDOG_H

#include <stdbool.h>
#include <arch/percpu.h>
#include <arch/trap.h>
#include <arch/watchdog_rule.h>

/* After the LAPIC timer is measured and the APs are up: print the watchdog: line. */
void watchdog_init(void);
/* This CPU starts or ends watched work (the job runner, an AP's call). */
void watchdog_work_begin(void);
void watchdog_work_end(void);
/* This CPU waits for another's call: not watched until watchdog_resume(its result). */
bool watchdog_pause(void);
void watchdog_resume(bool paused);
/* ... the wait expired: the waited-for CPU was not watched, so the wait counts (R5). */
void watchdog_resume_expired(bool paused);
/* This CPU stops being watched for good (the panic path). */
void watchdog_stop(void);

/* The LAPIC timer's own functions: the work took the timer; it gave it back. */
void watchdog_timer_lent(void);
void watchdog_timer_returned(void);

/* From trap_dispatch(), before any accounting: true if the NMI was the watchdog's. */
bool watchdog_nmi(struct trap_frame *f);
/* From trap_dispatch(): the probe (VEC_WATCHDOG) was taken. */
void watchdog_probe_taken(void);

/* This CPU's watchdog state (R1..R5): written by this CPU alone. */
DECLARE_PER_CPU(struct wd_cpu, watchdog_cpu);

void watchdog_touch_armed(void);

/* A sign of life: cheap when not watched (one load), a TSC read when watched. */
static inline void watchdog_touch(void)
{
	if (this_cpu_read(watchdog_cpu.state) == WD_ARMED)
		watchdog_touch_armed();
}

#endif
