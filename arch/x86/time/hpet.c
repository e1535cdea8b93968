/*
 * HPET main counter as a calibration reference (IA-PC HPET specification
 * 1.0a). The counter period is in the capabilities register, in
 * femtoseconds; the specification bounds it to (0, 100 ns], and we refuse
 * periods below 100 ps (10 GHz) as Linux does: no HPET counts that fast,
 * and a window of a period that small would wait for ever.  The period is
 * what the firmware's hardware says, not a fact: calibration checks it
 * against the PIT and PM timer (tsc.c), whose rates are architectural.
 * A 32-bit counter wraps (every ~43 s at 100 MHz): windows use modular
 * deltas, and a window longer than half the wrap is refused.
 *
 * inject.hpet_period_fs= (a test facility) makes the kernel take the
 * capabilities register to report that period, as a misreporting HPET
 * would.  inject.hpet_fault=stop|backwards (another) makes the counter,
 * as hpet_read() returns it, freeze at its value when the clock watchdog
 * starts (hpet_inject_fault()), or count down from it at its own rate:
 * the reference the watchdog reads goes wrong after calibration.
 *
 * A window reads the counter bracketed by rdtsc at both ends; each end is
 * then known to within its bracket (midpoints used), and the count to one
 * tick:  err <= (bracket_start + bracket_end) / 2 / tsc_delta + 1 / ticks.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/io.h>
#include <arch/timers.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"

#define HPET_CAP		0x000	/* general capabilities and ID */
#define HPET_CONF		0x010	/* general configuration */
#define HPET_COUNTER		0x0F0	/* main counter */
#define CAP_COUNT_SIZE_64	(1ull << 13)
#define CAP_PERIOD_SHIFT	32
#define CONF_ENABLE		(1ull << 0)
#define PERIOD_MAX_FS		100000000ull	/* 100 ns */
#define PERIOD_MIN_FS		100000ull	/* 100 ps */
#define WAIT_LIMIT		400000000ull	/* reads before giving up */

static uint64_t base;		/* MMIO base, 0 = not usable */
static int fault;		/* inject.hpet_fault=, once armed; 0 = none */
static uint64_t fault_at;	/* the counter when the fault began */
static uint64_t period_fs;	/* counter tick, femtoseconds */
static bool is64;		/* 64-bit main counter */

static uint64_t inject_period_fs;	/* inject.hpet_period_fs=, 0 = none */
CMDLINE_OPTION(inject_hpet_period, .name = "inject.hpet_period_fs", .type = OPT_UINT,
	       .var = &inject_period_fs, .min = 1, .max = 0xFFFFFFFFull,
	       .help = "test facility: take the HPET to report this counter period (fs), "
		       "as a misreporting one would");

enum { FAULT_NONE, FAULT_STOP, FAULT_BACKWARDS };
static const char *const fault_choices[] = { "none", "stop", "backwards", NULL };
static int inject_fault;	/* index in fault_choices */
CMDLINE_OPTION(inject_hpet_fault, .name = "inject.hpet_fault", .type = OPT_ENUM,
	       .var = &inject_fault, .choices = fault_choices,
	       .help = "test facility: from the clock watchdog's start the HPET's counter reads "
		       "one frozen value (stop) or counts down (backwards)");

const char *hpet_init(uint64_t mmio)
{
	uint64_t cap;

	base = 0;
	if (!mmio || mmio & 0x3FF)
		return "HPET address is missing or misaligned";
	cap = mmio_read64(mmio + HPET_CAP);
	if (cap == ~0ull)
		return "HPET registers read all ones (not an HPET?)";
	period_fs = cap >> CAP_PERIOD_SHIFT;
	if (inject_period_fs) {
		printk("hpet: inject.hpet_period_fs=%llu: taking the counter period to be "
		       "%llu fs (it reports %llu)\n", (unsigned long long)inject_period_fs,
		       (unsigned long long)inject_period_fs, (unsigned long long)period_fs);
		period_fs = inject_period_fs;
	}
	if (period_fs == 0 || period_fs > PERIOD_MAX_FS)
		return "HPET counter period is impossible: not in (0, 100 ns]";
	if (period_fs < PERIOD_MIN_FS)
		return "HPET counter period is below 100 ps: no HPET counts that fast";
	is64 = cap & CAP_COUNT_SIZE_64;
	mmio_write64(mmio + HPET_CONF, mmio_read64(mmio + HPET_CONF) | CONF_ENABLE);
	base = mmio;
	/* It must move. */
	uint64_t a = hpet_read();
	for (uint32_t i = 0; i < 100000 && hpet_read() == a; i++)
		cpu_relax();
	if (hpet_read() == a) {
		base = 0;
		return "HPET counter does not advance";
	}
	return NULL;
}

bool hpet_ready(void) { return base != 0; }
uint64_t hpet_period_fs(void) { return period_fs; }
bool hpet_is_64bit(void) { return is64; }

uint64_t hpet_read(void)
{
	uint64_t v = is64 ? mmio_read64(base + HPET_COUNTER) : mmio_read32(base + HPET_COUNTER);

	if (fault == FAULT_STOP)
		return fault_at;
	if (fault == FAULT_BACKWARDS)	/* as far below fault_at as the counter is above it */
		return is64 ? 2 * fault_at - v : (uint32_t)(2 * fault_at - v);
	return v;
}

void hpet_inject_fault(void)
{
	if (!inject_fault || fault)
		return;
	if (!base) {
		printk("hpet: inject.hpet_fault=%s: no HPET in use; nothing injected\n",
		       fault_choices[inject_fault]);
		return;
	}
	fault_at = hpet_read();
	fault = inject_fault;	/* hpet_read() runs on the boot CPU only: no ordering needed */
	printk("hpet: inject.hpet_fault=%s: the counter %s %llu from now on\n",
	       fault_choices[fault], fault == FAULT_STOP ? "reads" : "counts down from",
	       (unsigned long long)fault_at);
}

static uint64_t delta(uint64_t a, uint64_t b)
{
	return is64 ? b - a : (uint32_t)(b - a);
}

const char *hpet_window(struct calib_window *w, uint64_t window_ns, uint64_t max_cycles)
{
	uint64_t want = (uint64_t)((unsigned __int128)window_ns * 1000000ull / period_fs);
	uint64_t t0a, t0b, t1a, t1b, h0, h1 = 0;
	uint64_t i;

	if (!base)
		return "no HPET";
	if (!is64 && want >= 1ull << 31)
		return "window too long for the HPET's 32-bit counter";
	t0a = rdtsc();
	h0 = hpet_read();
	t0b = rdtsc();
	for (i = 0; i < WAIT_LIMIT; i++) {
		t1a = rdtsc();
		h1 = hpet_read();
		t1b = rdtsc();
		if (delta(h0, h1) >= want)
			break;
		if (max_cycles && t1b - t0a > max_cycles)
			return "HPET window took far longer than its period says (period wrong?)";
	}
	if (i == WAIT_LIMIT)
		return "HPET window never ended";
	w->tsc_delta = (t1a + (t1b - t1a) / 2) - (t0a + (t0b - t0a) / 2);
	w->tsc_uncert = ((t0b - t0a) + (t1b - t1a) + 1) / 2;
	w->ref_ticks = delta(h0, h1);
	w->ref_uncert_ticks = 1;
	w->ref_period_fs = period_fs;
	return NULL;
}
