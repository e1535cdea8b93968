/*
 * ACPI PM timer (ACPI 6.x, 4.8.3.3): a 3.579545 MHz counter at an I/O
 * port, 24 bits wide unless the FADT says 32 (TMR_VAL_EXT). It wraps every
 * 4.7 s (24-bit); windows use modular deltas. Same bracketing and bound as
 * the HPET (hpet.c).
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/io.h>
#include <arch/timers.h>

#define WAIT_LIMIT	100000000ull

static uint16_t port;	/* 0 = not usable */
static uint32_t mask;	/* 0xFFFFFF or 0xFFFFFFFF */

void pmtimer_init(uint16_t p, unsigned bits)
{
	port = p;
	mask = bits == 32 ? 0xFFFFFFFFu : 0xFFFFFFu;
	if (port) {	/* it must move */
		uint32_t a = inl(port) & mask;
		for (uint32_t i = 0; i < 100000 && (inl(port) & mask) == a; i++)
			;
		if ((inl(port) & mask) == a)
			port = 0;
	}
}

bool pmtimer_ready(void) { return port != 0; }
uint32_t pmtimer_read(void) { return inl(port) & mask; }
uint32_t pmtimer_mask(void) { return mask; }

const char *pmtimer_window(struct calib_window *w, uint64_t window_ns, uint64_t max_cycles)
{
	uint64_t want = window_ns * PMTIMER_HZ / 1000000000ull;
	uint64_t t0a, t0b, t1a, t1b, i;
	uint32_t p0, p1 = 0;

	if (!port)
		return "no ACPI PM timer";
	if (want >= mask / 2)
		return "window too long for the PM timer's width";
	t0a = rdtsc();
	p0 = inl(port) & mask;
	t0b = rdtsc();
	for (i = 0; i < WAIT_LIMIT; i++) {
		t1a = rdtsc();
		p1 = inl(port) & mask;
		t1b = rdtsc();
		if (((p1 - p0) & mask) >= want)
			break;
		if (max_cycles && t1b - t0a > max_cycles)
			return "PM timer window took far longer than its rate says";
	}
	if (i == WAIT_LIMIT)
		return "PM timer window never ended";
	w->tsc_delta = (t1a + (t1b - t1a) / 2) - (t0a + (t0b - t0a) / 2);
	w->tsc_uncert = ((t0b - t0a) + (t1b - t1a) + 1) / 2;
	w->ref_ticks = (p1 - p0) & mask;
	w->ref_uncert_ticks = 1;
	w->ref_period_fs = PMTIMER_PERIOD_FS;
	return NULL;
}
