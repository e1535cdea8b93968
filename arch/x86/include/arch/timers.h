/*
 * Reference timers for TSC calibration: PIT channel 2, HPET, ACPI PM
 * timer. Each measures one window against the TSC and fills a
 * struct calib_window (<arch/calib.h>); the arithmetic is generic.
 */
#ifndef ARCH_TIMERS_H
#define ARCH_TIMERS_H

#include <stdbool.h>
#include <stdint.h>
#include <arch/calib.h>

#define PIT_HZ		1193182ull	/* 14.31818 MHz / 12 */
#define PIT_PERIOD_FS	838095345ull	/* 1e15 / PIT_HZ, rounded */
#define PMTIMER_HZ	3579545ull	/* 14.31818 MHz / 4 */
#define PMTIMER_PERIOD_FS 279365115ull	/* 1e15 / PMTIMER_HZ, rounded */

/*
 * PIT: does channel 2 count at all? NULL, or why not (hardware-reduced
 * machines may have no PIT); bounded to PROBE_READS reads.
 */
const char *pit_probe(void);

/*
 * PIT, fast method: follow the counter's high byte (one step = 256 ticks)
 * for msb_steps steps; both ends bracketed by rdtsc. NULL or why it failed.
 */
const char *pit_window_msb(struct calib_window *w, unsigned msb_steps);

/*
 * PIT, gated countdown: mode 0 on channel 2, poll OUT2 in port 0x61 until
 * terminal count. A poll interval far above the median (an SMI, or the
 * emulator descheduled) rejects the window. NULL or why it failed.
 */
const char *pit_window_gate(struct calib_window *w, uint16_t ticks);

/* HPET at MMIO base: validate and enable. NULL or why it is unusable. */
const char *hpet_init(uint64_t base);
bool hpet_ready(void);
uint64_t hpet_period_fs(void);
uint64_t hpet_read(void);	/* counter, widened to 64 bits by the caller's deltas */
bool hpet_is_64bit(void);
/*
 * inject.hpet_fault= (test facility): from this call on (the clock
 * watchdog's start), hpet_read() returns the counter frozen or counting
 * down; says so.  Nothing without the option.
 */
void hpet_inject_fault(void);
/*
 * One calibration window of window_ns.  max_cycles bounds the wait in TSC
 * cycles (from a provisional TSC rate), 0 for no time bound: then only the
 * read count bounds it.
 */
const char *hpet_window(struct calib_window *w, uint64_t window_ns, uint64_t max_cycles);

/* ACPI PM timer at an I/O port; bits is the FADT's claim, 24 or 32 (24 are counted). */
void pmtimer_init(uint16_t port, unsigned bits);
bool pmtimer_ready(void);
uint32_t pmtimer_read(void);	/* the counter, masked to its width */
uint32_t pmtimer_mask(void);	/* 0xFFFFFF: 24 bits, whatever the FADT claims */
const char *pmtimer_window(struct calib_window *w, uint64_t window_ns, uint64_t max_cycles);

#endif
