/*
 * The hard-lockup watchdog's rule, portable (no x86 here: host-tested in
 * tests/host/test_watchdog.c). The x86 side (arch/x86/watchdog.c) owns
 * the timer and the NMI and asks this rule what a sample means.
 *
 * Terms (times in TSC cycles, P = watchdog.ms / 2):
 *   life    the last sign of life: an interrupt taken, watchdog_touch(),
 *           the start of watched work, or a sample that found interrupts on
 *   kick    when the deadline timer was last restarted (for P)
 *   sample  the deadline's expiry: an NMI, P after the last kick
 *   probe   a fixed-vector interrupt the CPU sends itself at a sample that
 *           found interrupts off; taken (a sign of life) the moment they
 *           come back on
 *
 * The rule, at a sample (the deadline ran out: no sign of life restarted
 * it for P):
 *   R1  interrupts on in the interrupted context: alive (the CPU can take an
 *       interrupt; it just had none).
 *   R2  interrupts off and no probe pending since the last sign of life:
 *       send a probe.
 *   R3  interrupts off and a probe pending, sent at least P / 2 ago with no
 *       sign of life since: stuck, for now - life.
 *   R4  a pause (the CPU waits, bounded, for other CPUs that are watched
 *       themselves: watchdog_pause()) that ends with every CPU answered is
 *       a sign of life: the waiter's bounded operation went on, and those
 *       it waited for were watched meanwhile. A long patch batch (four
 *       syncs a batch, many batches, interrupts off) is no report however
 *       slow the host, as long as its syncs are answered.
 *   R5  a pause that ends because the wait expired is no sign of life and
 *       is counted whole: the CPU that did not answer within the wait's
 *       bound was not watched itself (a watched one is reported sooner),
 *       so nobody else will report. Until its next sign of life the
 *       waiter does not pause again (it is watched through its next
 *       waits). So a CPU whose syncs keep expiring, interrupts off (two
 *       patchers each waiting for the other, before text_sync() answered
 *       from its loop: 26 s and no report), is reported.
 * A CPU is therefore reported only after interrupts were off at two samples
 * P apart with the probe untaken in between (off the whole time: it would
 * have been taken at once), and with no interrupt or touch for at least
 * 2P - P / 8 = watchdog.ms less the touch rate limit (wd_touch() restarts
 * the deadline at most every P / 8): a short interrupts-off window that a
 * sample happens to land in is never a report.
 *
 * Written only by the CPU it describes, from its task context and from its
 * own NMI; no other CPU reads it. Plain fields: the NMI sees the task's
 * stores in program order (one CPU), and the compiler is kept from
 * caching them by the out-of-line calls both sides make.
 */
#ifndef ARCH_WATCHDOG_RULE_H
#define ARCH_WATCHDOG_RULE_H

#include <stdbool.h>
#include <stdint.h>

enum wd_state {
	WD_OFF = 0,	/* not watched: idle, booting, panicking, or watchdog.ms=0 */
	WD_ARMED,	/* watched: the deadline timer is the watchdog's */
	WD_LENT,	/* watched work took the LAPIC timer for itself: not watched */
	WD_PAUSED,	/* waiting for another CPU's call (smp_call_wait): not watched */
};

struct wd_cpu {
	uint64_t life;		/* TSC of the last sign of life */
	uint64_t kick;		/* TSC the deadline was last restarted at */
	uint64_t probe;		/* TSC the pending probe was sent at; 0 = none */
	uint32_t expired;	/* a wait expired since the last sign of life: no pause (R5) */
	uint32_t state;		/* enum wd_state */
	uint32_t samples;	/* deadline NMIs taken (for tests and the docs' figures) */
};

enum wd_verdict {
	WD_RESTART,	/* alive, or a probe not yet due: restart the deadline */
	WD_PROBE,	/* send the probe, restart the deadline */
	WD_STUCK,	/* report: stuck for now - life */
};

/* Start watching: alive now, deadline restarted now, no probe. */
void wd_begin(struct wd_cpu *w, uint64_t now);
/* A sign of life at now; true if the deadline should be restarted (rate limit gap). */
bool wd_touch(struct wd_cpu *w, uint64_t now, uint64_t gap);
/*
 * A pause ended at now with its wait expired (R5): nothing moves, the CPU
 * is marked; returns the cycles left until the deadline (period p), at
 * least 1. (An answered one is wd_begin(), R4.)
 */
uint64_t wd_resume_expired(struct wd_cpu *w, uint64_t now, uint64_t p);
/* The deadline expired at now (period p): R1..R3 above. Updates w. */
enum wd_verdict wd_sample(struct wd_cpu *w, uint64_t now, uint64_t p, bool irqs_on);
/* cycles at hz as whole milliseconds, without overflow (hz > 0). */
uint64_t wd_cycles_to_ms(uint64_t cycles, uint64_t hz);
/*
 * Half of ms milliseconds in ticks of a timer at hz, for a 32-bit down
 * counter: at least 1, at most 0xFFFFFFFF (then the samples come sooner
 * than P; the rule still holds, only measured against a shorter P).
 */
uint32_t wd_half_period_ticks(uint64_t ms, uint64_t hz);

#endif
