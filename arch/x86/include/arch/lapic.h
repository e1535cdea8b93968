/* Local APIC: xAPIC (MMIO) or x2APIC (MSRs), IPIs, timer, EOI. */
#ifndef ARCH_LAPIC_H
#define ARCH_LAPIC_H

#include <stdbool.h>
#include <stdint.h>

#define VEC_TIMER	0x40	/* LAPIC timer */
#define VEC_TIMERLAT	0x41	/* LAPIC timer, run=timerlat's deadlines */
#define VEC_CALL	0xF0	/* cross-CPU call-function IPI */
#define VEC_TEST	0xF1	/* IPI used by tests */
#define VEC_WATCHDOG	0xF3	/* the watchdog's probe, a CPU to itself; 0xF2 is VEC_TEXT_SYNC */
#define VEC_ERROR	0xFE	/* LAPIC error */
#define VEC_SPURIOUS	0xFF	/* spurious interrupt (no EOI) */

extern bool lapic_x2apic;		/* x2APIC mode in use */
extern uint64_t lapic_timer_hz;		/* timer ticks per second (after divide) */

/* Boot CPU: pick the mode, map and enable, mask the 8259s. */
void lapic_init_bsp(void);
/* Every CPU (including the BSP): enable this CPU's APIC in the chosen mode. */
void lapic_init_cpu(void);
uint32_t lapic_id(void);
/* NULL if this CPU's APIC is enabled, in x2APIC mode exactly when
 * lapic_x2apic, and its ID register says this CPU's APIC ID; else what is not. */
const char *lapic_check_cpu(void);
void lapic_eoi(void);

void lapic_send_ipi(uint32_t apic_id, uint8_t vector);
void lapic_send_ipi_all_others(uint8_t vector);
void lapic_send_nmi(uint32_t apic_id);
void lapic_send_init(uint32_t apic_id);
void lapic_send_sipi(uint32_t apic_id, uint8_t page);

/* Measure the timer against the TSC (boot CPU, once). */
void lapic_timer_calibrate(void);
void lapic_timer_periodic(uint32_t hz);
void lapic_timer_oneshot(uint64_t ns);
/* Does this CPU's timer have TSC-deadline mode (CPUID 1 ECX[24])? */
bool lapic_timer_has_tsc_deadline(void);
/*
 * One interrupt on vector when the TSC reaches deadline: in TSC-deadline
 * mode if tsc_deadline, else one-shot counted from now. Lends the timer,
 * as lapic_timer_oneshot() does, until lapic_timer_stop().
 */
void lapic_timer_at(uint64_t deadline, uint8_t vector, bool tsc_deadline);
void lapic_timer_stop(void);
/* The watchdog's: one-shot deadline delivered as an NMI; stop; has it run out? */
void lapic_timer_nmi_oneshot(uint32_t count);
void lapic_timer_nmi_stop(void);
bool lapic_timer_expired(void);

#endif
