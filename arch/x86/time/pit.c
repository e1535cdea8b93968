/*
 * PIT (8254) channel 2 as a calibration reference. Channel 2's gate is
 * bit 0 of port 0x61 and its output can be read back in bit 5, so it can
 * be used without interrupts (bit 1 is the speaker: kept off).
 *
 * Two methods:
 *
 * MSB polling. Load 0xFFFF in mode 0 and read the latched count over and
 * over. The high byte steps every 256 ticks exactly. Each read is
 * bracketed by rdtsc: a step is seen between the previous read's first
 * rdtsc and this read's last, so each end of the window is known to half
 * that bracket (midpoints used), and the tick count is exact:
 *	err <= (bracket_start + bracket_end) / 2 / tsc_delta
 * With ~0.3 us brackets over 200 steps (42.9 ms) that is ~7 ppm on TCG,
 * far less under icount where a port read costs one instruction.
 *
 * Gated countdown. Load N ticks with the gate low, raise the gate, poll
 * OUT2 until it rises. The start is bracketed from before the count's
 * last byte to after the gate write: an 8254 starts counting at the gate's
 * rise (to within a tick, carried as reference quantisation), QEMU's mode
 * 0 ignores the gate and counts from the load, and the bracket holds
 * both. The end is bracketed from the rdtsc before the read that last saw
 * OUT2 low to the rdtsc after the read that saw it high (a stall between
 * that low read and the rdtsc after it would otherwise escape: a loaded
 * TCG host once put the PIT 1% off beyond a 0.86% bound). Midpoints:
 *	err <= (start_bracket + end_bracket) / 2 / tsc_delta + 1 / N
 * Every poll interval goes in a log2 histogram. A stall in the middle of
 * the window does not move its ends, so it costs nothing; but when either
 * bracket (about two polls) is more than REJECT_FACTOR times the median
 * poll's, something stole the CPU at an end (an SMI, the emulator's
 * thread descheduled) and the window is rejected.
 *
 * Presence. Hardware-reduced ACPI machines may have no 8254 at all; its
 * ports then read as a floating bus (0xFF), the count never changes, and
 * the methods above would poll POLL_LIMIT times per window, nine windows
 * each: minutes at a real port's ~1 us. pit_probe() first reads the count
 * PROBE_READS times: a PIT ticks every 838 ns and one read is three port
 * accesses (>= ~0.3 us even on a fast bus, 1 ns each under icount, where
 * it is still ~10 instructions), so a present PIT changes within a few
 * reads and 100000 unchanged reads (at least ~1 ms, at most ~0.3 s) mean
 * there is none (QEMU's -machine pit=off: 80 s of polling before, 2 s now).
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/io.h>
#include <arch/timers.h>
#include <arch/tsc.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"

#define PIT_CH2		0x42
#define PIT_CMD		0x43
#define PORT_B		0x61
#define PORTB_GATE2	0x01
#define PORTB_SPEAKER	0x02
#define PORTB_OUT2	0x20
#define CMD_CH2_LOHI_MODE0 0xB0	/* channel 2, lobyte/hibyte, mode 0, binary */
#define CMD_CH2_LATCH	0x80	/* counter latch command for channel 2 */

#define POLL_LIMIT	20000000u	/* reads before giving up (absent PIT) */
#define REJECT_FACTOR	16		/* interval > 16x median bucket: rejected */
#define PROBE_READS	100000u		/* unchanged count reads: no PIT */

static uint16_t read_count(void)
{
	uint8_t lo, hi;

	outb(PIT_CMD, CMD_CH2_LATCH);
	lo = inb(PIT_CH2);
	hi = inb(PIT_CH2);
	return (uint16_t)(hi << 8 | lo);
}

static void load_mode0(uint16_t count, bool gate)
{
	uint8_t b = inb(PORT_B) & ~(PORTB_SPEAKER | PORTB_GATE2);

	outb(PORT_B, b | (gate ? PORTB_GATE2 : 0));
	outb(PIT_CMD, CMD_CH2_LOHI_MODE0);
	outb(PIT_CH2, count & 0xFF);
	outb(PIT_CH2, count >> 8);
}

/*
 * Wait for the high byte to leave `from`; returns the step's bracket.
 * *seen is the rdtsc taken just before the last read that saw `from`
 * (by us or by the caller): the step happened after it and before the
 * rdtsc after the read that sees the new value.  Starting the bracket
 * anywhere later (at our own entry, say) would let a stall between that
 * read and our first one escape it.  On return *seen is the rdtsc before
 * the read that saw the new value.
 */
static bool wait_msb_step(uint8_t from, uint64_t *seen, uint64_t *mid, uint64_t *width,
			  uint8_t *now)
{
	for (uint32_t i = 0; i < POLL_LIMIT; i++) {
		uint64_t t0 = rdtsc();
		uint8_t msb = read_count() >> 8;
		uint64_t t1 = rdtsc();
		if (msb != from) {
			*width = t1 - *seen;
			*mid = *seen + *width / 2;
			*now = msb;
			*seen = t0;
			return true;
		}
		*seen = t0;
	}
	return false;
}

const char *pit_probe(void)
{
	uint16_t first;

	load_mode0(0xFFFF, true);
	first = read_count();
	for (uint32_t i = 0; i < PROBE_READS; i++)
		if (read_count() != first)
			return NULL;
	return first == 0xFFFF ? "channel 2 reads 0xFFFF and does not count (no legacy PIT)"
			       : "channel 2 does not count";
}

/*
 * Test facility: every MSB window taken once the TSC is calibrated (the
 * in-kernel check's) spins this many TSC cycles halfway through, as a host
 * that takes the vCPU away would. A multiple of the counter's 65536-tick
 * wrap leaves the high byte where it was: no step is seen skipped.
 */
static uint64_t inject_pit_stall;
CMDLINE_OPTION(inject_pit_stall, .name = "inject.pit_stall_cycles", .type = OPT_UINT,
	       .var = &inject_pit_stall, .min = 0, .max = 100000000000ull,
	       .help = "test facility: stall each PIT window taken after calibration this "
		       "many TSC cycles halfway through; 0 = off");

static void stall_if_injected(void)
{
	uint64_t t0 = rdtsc();

	if (!inject_pit_stall || !tsc.hz)
		return;
	printk("pit: inject.pit_stall_cycles=%llu: the window stalls here\n",
	       (unsigned long long)inject_pit_stall);
	while (rdtsc() - t0 < inject_pit_stall)
		cpu_relax();
}

/*
 * A window of msb_steps steps of the counter's high byte (256 ticks each),
 * timed at the steps' edges. A stall that skips steps leaves the high byte
 * short of where the steps counted say: refused. A stall of a whole wrap
 * (65536 ticks, 55 ms) or several leaves it where it was; its step is then
 * at least 256 times as long as the others: refused when any step is over
 * twice the window's mean.
 */
const char *pit_window_msb(struct calib_window *w, unsigned msb_steps)
{
	uint64_t mid0, wid0, mid1, wid1, seen, prev, longest = 0;
	uint8_t msb0, msb1;

	if (msb_steps == 0 || msb_steps > 250)
		return "msb_steps out of range";
	load_mode0(0xFFFF, true);
	/* First step: synchronise with an edge (the reload may be partial). */
	seen = rdtsc();
	msb0 = read_count() >> 8;
	if (!wait_msb_step(msb0, &seen, &mid0, &wid0, &msb0))
		return "the PIT counter does not move (no PIT?)";
	if (!wait_msb_step(msb0, &seen, &mid0, &wid0, &msb0))
		return "the PIT counter stopped";
	msb1 = msb0;
	prev = mid0;
	for (unsigned step = 0; step < msb_steps; step++) {
		if (step == msb_steps / 2)
			stall_if_injected();
		if (!wait_msb_step(msb1, &seen, &mid1, &wid1, &msb1))
			return "the PIT counter stopped";
		if (mid1 - prev > longest)
			longest = mid1 - prev;
		prev = mid1;
	}
	/* A stall longer than 256 ticks skips a step: the count is then wrong. */
	if (msb1 != (uint8_t)(msb0 - msb_steps))
		return "the PIT counter skipped a step (window disturbed)";
	if (longest > 2 * ((mid1 - mid0) / msb_steps))
		return "a step of the PIT counter took over twice the window's mean "
		       "(the counter wrapped during a stall)";
	w->tsc_delta = mid1 - mid0;
	w->tsc_uncert = (wid0 + wid1 + 1) / 2;
	w->ref_ticks = 256ull * msb_steps;
	w->ref_uncert_ticks = 0;
	w->ref_period_fs = PIT_PERIOD_FS;
	return NULL;
}

const char *pit_window_gate(struct calib_window *w, uint16_t ticks)
{
	uint32_t hist[64] = { 0 };
	uint64_t g0, g1, e0 = 0, e1 = 0, prev, t0;	/* TSC cycles */
	uint32_t polls = 0, half, acc = 0;
	unsigned median_bucket = 0;
	uint8_t b;

	if (ticks < 1000)
		return "window too short";
	b = inb(PORT_B) & ~(PORTB_SPEAKER | PORTB_GATE2);
	outb(PORT_B, b);
	outb(PIT_CMD, CMD_CH2_LOHI_MODE0);
	outb(PIT_CH2, ticks & 0xFF);
	/*
	 * The start bracket opens before the count's last byte: an 8254
	 * starts at the gate's rise, but QEMU's mode 0 ignores the gate and
	 * counts from the load.  [g0, g1] holds either start.
	 */
	g0 = rdtsc();
	outb(PIT_CH2, ticks >> 8);
	outb(PORT_B, b | PORTB_GATE2);
	g1 = rdtsc();
	prev = g1;
	for (;;) {
		bool high;

		t0 = rdtsc();
		high = inb(PORT_B) & PORTB_OUT2;
		if (high) {
			/*
			 * OUT2 rose after the read that last saw it low and
			 * before this one: the end bracket opens at the rdtsc
			 * before that read (e0), not after it, so a stall
			 * between that read and the next rdtsc is inside it.
			 */
			e1 = rdtsc();
			if (!polls)
				e0 = g0;	/* rose before the first poll */
			break;
		}
		hist[63 - __builtin_clzll((t0 - prev) | 1)]++;
		prev = t0;
		e0 = t0;
		if (++polls == POLL_LIMIT)
			return "OUT2 never rose (no PIT channel 2?)";
	}
	/* Median poll interval, to within its power-of-two bucket. */
	half = polls / 2;
	for (unsigned i = 0; i < 64; i++) {
		acc += hist[i];
		if (acc > half) {
			median_bucket = i;
			break;
		}
	}
	/* Each end spans about two polls: rejected beyond 16 times that. */
	if (e1 - e0 > (uint64_t)REJECT_FACTOR << (median_bucket + 2) ||
	    g1 - g0 > (uint64_t)REJECT_FACTOR << (median_bucket + 2))
		return "an end of the window took far longer than the median poll "
		       "(SMI or emulator stall)";
	/* Midpoints of the two brackets, each known to half its width. */
	w->tsc_delta = (e0 + (e1 - e0) / 2) - (g0 + (g1 - g0) / 2);
	w->tsc_uncert = ((e1 - e0) + (g1 - g0) + 1) / 2 + 1;
	w->ref_ticks = ticks;
	w->ref_uncert_ticks = 1;
	w->ref_period_fs = PIT_PERIOD_FS;
	return NULL;
}
