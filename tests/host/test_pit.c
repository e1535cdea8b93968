/*
 * Host test of the PIT calibration windows (arch/x86/time/pit.c) against a
 * model: a TSC at exactly 1 GHz (1 cycle = 1 ns of model time) and an 8254
 * channel 2 counting at 1e15 / PIT_PERIOD_FS Hz.  Each rdtsc costs 10 ns,
 * each port access 500 ns, as on a slow bus.  A "steal" (an SMI, the
 * emulator's thread descheduled) stops the CPU for a while at one chosen
 * rdtsc: the test puts one at every rdtsc of a window in turn and checks
 * that the window is either rejected or its stated bound covers its true
 * error.  The bugs this catches: in the MSB method, a step bracket that
 * starts at the waiting function's entry instead of at the last read that
 * saw the old value, which lets a stall between those two escape the
 * bound; in the gated countdown, an end bracket that opens after the read
 * that last saw OUT2 low (a stall before the next rdtsc escapes it: a CI
 * run under a loaded TCG host had the PIT 1% off beyond a 0.86% bound),
 * and a start bracket that assumes the count starts at the gate's rise
 * (QEMU's mode 0 counts from the load, gate or not).  The model counts
 * either way: from the load (QEMU) or from the gate's rise (an 8254).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <arch/timers.h>
#include <arch/tsc.h>
#include "kernel/console.h"

/* pit.c's inject.pit_stall_cycles= stalls only once calibrated: never here. */
struct tsc_info tsc;

int printk(const char *fmt, ...)
{
	(void)fmt;
	return 0;
}

#define RDTSC_NS	10
#define PORT_NS		500
#define TRUE_HZ		1000000000ull

static struct {
	uint64_t t;		/* model time, ns */
	uint64_t t_load;	/* when channel 2 was loaded */
	uint16_t load;		/* the count loaded */
	uint8_t lsb_next;	/* next write to 0x42 is the low byte */
	uint8_t low;		/* low byte written */
	uint16_t latched;	/* latched count */
	uint8_t read_hi;	/* next read of 0x42 gives the high byte */
	uint8_t port61;		/* gate and speaker bits */
	uint64_t rdtscs;	/* rdtsc calls so far */
	uint64_t steal_at;	/* stall at this rdtsc (1-based), 0 = never */
	uint64_t steal_ns;	/* for this long */
	bool honour_gate;	/* 8254: mode 0 counts only once the gate is high */
	bool counting;		/* with honour_gate: the gate has risen since the load */
	bool absent;		/* no 8254: its ports read as a floating bus (0xFF) */
	bool stuck;		/* an 8254 whose count never moves */
	uint64_t port_ops;	/* port accesses so far */
} m;

static uint64_t ticks_since_load(void)
{
	if ((m.honour_gate && !m.counting) || m.stuck)
		return 0;
	return (uint64_t)((unsigned __int128)(m.t - m.t_load) * 1000000ull / PIT_PERIOD_FS);
}

uint64_t model_rdtsc(void)
{
	uint64_t now;

	if (++m.rdtscs == m.steal_at)
		m.t += m.steal_ns;
	now = m.t;
	m.t += RDTSC_NS;
	return now;
}

uint8_t model_inb(uint16_t port)
{
	uint8_t v = 0;

	m.t += PORT_NS;
	m.port_ops++;
	if (port == 0x42 && m.absent)
		return 0xFF;
	if (port == 0x42) {
		v = m.read_hi ? (uint8_t)(m.latched >> 8) : (uint8_t)m.latched;
		m.read_hi ^= 1;
	} else if (port == 0x61) {
		v = m.port61;
		if (ticks_since_load() >= m.load)
			v |= 0x20;	/* OUT2: mode 0 reached terminal count */
	}
	return v;
}

void model_outb(uint16_t port, uint8_t v)
{
	m.t += PORT_NS;
	m.port_ops++;
	if (port == 0x43) {
		if (v == 0x80) {	/* latch channel 2 */
			m.latched = (uint16_t)(m.load - ticks_since_load());
			m.read_hi = 0;
		} else {
			m.lsb_next = 1;
		}
	} else if (port == 0x42) {
		if (m.lsb_next) {
			m.low = v;
			m.lsb_next = 0;
		} else {
			m.load = (uint16_t)(m.low | v << 8);
			m.t_load = m.t;
			m.counting = m.port61 & 0x01;
		}
	} else if (port == 0x61) {
		if (m.honour_gate && !(m.port61 & 0x01) && (v & 0x01)) {
			m.t_load = m.t;		/* counting starts at the rise */
			m.counting = true;
		}
		m.port61 = v & 0x03;
	}
}

/* One MSB window with a stall at rdtsc number steal_at (0: none). */
static const char *window(unsigned steps, uint64_t steal_at, uint64_t steal_ns,
			  struct calib_window *w)
{
	m = (typeof(m)){ .t = 123456789, .steal_at = steal_at, .steal_ns = steal_ns };
	return pit_window_msb(w, steps);
}

static void test_msb_exact_without_stalls(void **state)
{
	struct calib_window w;
	uint64_t hz, err;

	(void)state;
	assert_null(window(200, 0, 0, &w));
	assert_true(calib_window_eval(&w, &hz, &err));
	assert_true(calib_diff_ppb(hz, TRUE_HZ) <= err);
	assert_true(err < 100000);	/* brackets of two 1.5 us polls over 42.9 ms */
}

/*
 * A stall at every rdtsc of the window in turn, of lengths around one and
 * two steps (256 ticks = 214.6 us): every window is rejected or bounded.
 */
static void test_msb_bound_holds_under_any_stall(void **state)
{
	/*
	 * And whole wraps of the 16-bit counter (65536 ticks, 54.93 ms), which
	 * leave the high byte where it was: one, two (a CI run beside
	 * stress-ng saw 42.9 ms of PIT for 152.8 ms of TSC), one and a bit.
	 */
	static const uint64_t stalls_ns[] = { 5000, 150000, 230000, 300000, 420000, 700000,
					      54925407, 109850814, 55025407 };
	const unsigned steps = 12;
	struct calib_window w;
	uint64_t hz, err, calls, rejected = 0, bounded = 0;

	(void)state;
	assert_null(window(steps, 0, 0, &w));
	calls = m.rdtscs;
	for (unsigned s = 0; s < sizeof(stalls_ns) / sizeof(stalls_ns[0]); s++) {
		for (uint64_t k = 1; k <= calls + 2; k++) {
			if (window(steps, k, stalls_ns[s], &w)) {
				rejected++;
				continue;
			}
			assert_true(calib_window_eval(&w, &hz, &err));
			if (calib_diff_ppb(hz, TRUE_HZ) > err)
				fail_msg("stall of %llu ns at rdtsc %llu of %llu: %llu Hz is %llu ppb "
					 "off, beyond its bound of %llu ppb",
					 (unsigned long long)stalls_ns[s], (unsigned long long)k,
					 (unsigned long long)calls, (unsigned long long)hz,
					 (unsigned long long)calib_diff_ppb(hz, TRUE_HZ),
					 (unsigned long long)err);
			bounded++;
		}
	}
	printf("msb windows: %llu bounded, %llu rejected, %llu rdtscs each\n",
	       (unsigned long long)bounded, (unsigned long long)rejected,
	       (unsigned long long)calls);
	assert_true(bounded > 0);
}

#define GATE_TICKS	59659	/* tsc.c's PIT_GATE_TICKS: 50.0 ms */

/* One gated window with a stall at rdtsc number steal_at (0: none). */
static const char *gate_window(bool honour_gate, uint64_t steal_at, uint64_t steal_ns,
			       struct calib_window *w)
{
	m = (typeof(m)){ .t = 123456789, .steal_at = steal_at, .steal_ns = steal_ns,
			 .honour_gate = honour_gate };
	return pit_window_gate(w, GATE_TICKS);
}

static void test_gate_bounded_without_stalls(void **state)
{
	struct calib_window w;
	uint64_t hz, err;

	(void)state;
	for (int honour = 0; honour <= 1; honour++) {
		assert_null(gate_window(honour, 0, 0, &w));
		assert_true(calib_window_eval(&w, &hz, &err));
		if (calib_diff_ppb(hz, TRUE_HZ) > err)
			fail_msg("gate %s: %llu Hz is %llu ppb off, beyond its bound of %llu ppb",
				 honour ? "honoured" : "ignored", (unsigned long long)hz,
				 (unsigned long long)calib_diff_ppb(hz, TRUE_HZ),
				 (unsigned long long)err);
		/* brackets of a few port accesses, and 1 tick, over 50 ms */
		assert_true(err < 100000);
	}
}

/*
 * A stall at every rdtsc of the window in turn, of lengths from a few
 * polls to several ms, with the gate honoured (8254) and ignored (QEMU):
 * every window is rejected or bounded.  Only the rdtscs at the ends are
 * tried (the first 8 and the last 8): a stall in the middle moves no end.
 */
static void test_gate_bound_holds_under_any_stall(void **state)
{
	static const uint64_t stalls_ns[] = { 3000, 20000, 150000, 500000, 2000000 };
	struct calib_window w;
	uint64_t hz, err, calls, rejected = 0, bounded = 0;

	(void)state;
	for (int honour = 0; honour <= 1; honour++) {
		assert_null(gate_window(honour, 0, 0, &w));
		calls = m.rdtscs;
		for (unsigned s = 0; s < sizeof(stalls_ns) / sizeof(stalls_ns[0]); s++) {
			for (uint64_t k = 1; k <= calls + 2; k++) {
				if (k == 9 && calls > 20)
					k = calls - 8;
				if (gate_window(honour, k, stalls_ns[s], &w)) {
					rejected++;
					continue;
				}
				assert_true(calib_window_eval(&w, &hz, &err));
				if (calib_diff_ppb(hz, TRUE_HZ) > err)
					fail_msg("gate %s, stall of %llu ns at rdtsc %llu of %llu: "
						 "%llu Hz is %llu ppb off, beyond its bound of %llu ppb",
						 honour ? "honoured" : "ignored",
						 (unsigned long long)stalls_ns[s],
						 (unsigned long long)k, (unsigned long long)calls,
						 (unsigned long long)hz,
						 (unsigned long long)calib_diff_ppb(hz, TRUE_HZ),
						 (unsigned long long)err);
				bounded++;
			}
		}
	}
	printf("gate windows: %llu bounded, %llu rejected\n", (unsigned long long)bounded,
	       (unsigned long long)rejected);
	assert_true(bounded > 0);
	assert_true(rejected > 0);
}

/*
 * pit_probe(): a counting PIT is found within a few reads; a missing one
 * (floating bus) and a stuck one are said so, each
 * after a bounded number of port accesses (three per count read: at most
 * PROBE_READS + 1 reads, plus the load), never a long poll.
 */
static void test_probe(void **state)
{
	const uint64_t bound = 3 * (100000 + 1) + 8;
	const char *why;

	(void)state;
	m = (typeof(m)){ .t = 1000 };
	assert_null(pit_probe());
	assert_true(m.port_ops < 3 * 4 + 8);	/* one tick is 838 ns: under 2 reads */

	m = (typeof(m)){ .t = 1000, .absent = true };
	why = pit_probe();
	assert_non_null(why);
	assert_non_null(strstr(why, "no legacy PIT"));
	assert_true(m.port_ops <= bound);

	m = (typeof(m)){ .t = 1000, .stuck = true };
	why = pit_probe();
	assert_non_null(why);
	assert_non_null(strstr(why, "does not count"));	/* loaded 0xFFFF: reads as absent */
	assert_true(m.port_ops <= bound);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msb_exact_without_stalls),
		cmocka_unit_test(test_msb_bound_holds_under_any_stall),
		cmocka_unit_test(test_gate_bounded_without_stalls),
		cmocka_unit_test(test_gate_bound_holds_under_any_stall),
		cmocka_unit_test(test_probe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
