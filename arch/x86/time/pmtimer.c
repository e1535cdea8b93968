/*
 * ACPI PM timer (ACPI 6.x, 4.8.3.3): a 3.579545 MHz counter at an I/O
 * port.  The FADT's TMR_VAL_EXT flag claims 32 bits, else 24.  The kernel
 * counts 24 bits whatever the claim, as Linux does (ACPI_PM_MASK):
 *  - a 24-bit timer claimed as 32 (firmware gets this wrong) wraps every
 *    2^24 / 3579545 Hz = 4.687 s while a 32-bit mask takes it to wrap
 *    every 1200 s; an interval that spans a real wrap then reads 2^24
 *    ticks short (the watchdog saw a 6 s interval as a 3.6e6 ppm drift);
 *  - a true 32-bit timer's low 24 bits are a correct 24-bit timer, so
 *    masking loses only length: a calibration window must stay below half
 *    the 4.687 s wrap (2.34 s; tsc.refine_ms= allows 2000 ms, the usual
 *    windows are 50 ms), and the watchdog's interval is capped at a
 *    quarter of it (1171 ms), so that one polled up to twice late still
 *    ends below half.
 * Windows use modular deltas.  Same bracketing and bound as the HPET
 * (hpet.c).
 *
 * inject.pm_timer_bits=24|32 (a test facility) makes the kernel take the
 * FADT to claim that width.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/io.h>
#include <arch/timers.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"

#define WAIT_LIMIT	100000000ull

static uint16_t port;	/* 0 = not usable */
#define PMTIMER_MASK	0xFFFFFFu	/* 24 bits, whatever the FADT claims */

static const uint32_t mask = PMTIMER_MASK;

/* inject.pm_timer_bits=: what the FADT is taken to claim (test facility). */
static const char *const claim_choices[] = { "fadt", "24", "32", NULL };
static int inject_claim;	/* index in claim_choices; 0 = the FADT's own claim */
CMDLINE_OPTION(inject_pm_timer_bits, .name = "inject.pm_timer_bits", .type = OPT_ENUM,
	       .var = &inject_claim, .choices = claim_choices,
	       .help = "test facility: take the FADT to claim this PM timer width (24 or 32 bits), "
		       "whatever the timer's own");

/*
 * inject.pmtimer_ppm=P (test facility): the timer counts P ppm fast.  The
 * kernel reads V = floor(E * (10^6 + P) / 10^6) mod 2^24, E the real count
 * extended to 64 bits at each read (pmtimer_read() runs on the boot CPU
 * only, at least once a wrap while anything measures with it: calibration
 * windows and the watchdog's evaluated intervals are shorter than half of
 * one).  Deltas of V are then P ppm more ticks than elapsed, within one
 * tick.
 */
static int64_t inject_ppm;	/* inject.pmtimer_ppm=, 0 = none */
CMDLINE_OPTION(inject_pmtimer_ppm, .name = "inject.pmtimer_ppm", .type = OPT_INT,
	       .var = &inject_ppm, .min = -500000, .max = 500000,
	       .help = "test facility: the PM timer counts this many ppm fast (negative: slow)");
static uint64_t ext;		/* the real count, extended */
static uint32_t last_raw;	/* the last real reading */

static uint32_t raw_read(void)
{
	uint32_t raw = inl(port) & mask;

	if (!inject_ppm)
		return raw;
	ext += (raw - last_raw) & mask;
	last_raw = raw;
	return (uint32_t)((unsigned __int128)ext * (uint64_t)(1000000 + inject_ppm) / 1000000) &
	       mask;
}

void pmtimer_init(uint16_t p, unsigned bits)
{
	if (inject_claim) {
		unsigned claim = inject_claim == 1 ? 24 : 32;
		printk("pmtimer: inject.pm_timer_bits=%u: taking the FADT to claim %u bits "
		       "(it claims %u)\n", claim, claim, bits);
		bits = claim;
	}
	port = p;
	if (bits == 32)
		printk("pmtimer: the FADT claims 32 bits; counting 24, which every PM timer "
		       "has (a 24-bit one claimed as 32 would read 2^24 ticks short across a wrap)\n");
	if (port && inject_ppm) {
		last_raw = inl(port) & mask;
		printk("pmtimer: inject.pmtimer_ppm=%lld: the PM timer counts that many ppm fast\n",
		       (long long)inject_ppm);
	}
	if (port) {	/* it must move */
		uint32_t a = inl(port) & mask;
		for (uint32_t i = 0; i < 100000 && (inl(port) & mask) == a; i++)
			;
		if ((inl(port) & mask) == a)
			port = 0;
	}
}

bool pmtimer_ready(void) { return port != 0; }
uint32_t pmtimer_read(void) { return raw_read(); }
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
	p0 = raw_read();
	t0b = rdtsc();
	for (i = 0; i < WAIT_LIMIT; i++) {
		t1a = rdtsc();
		p1 = raw_read();
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
