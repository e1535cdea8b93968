/*
 * In-kernel test of the calibrated clock against an independent timer:
 * over 100 ms of HPET time, the TSC delta converted to ns must match the
 * HPET's ns within the calibration's stated bound (plus the rdtsc
 * brackets around the HPET reads and 1 ns of conversion rounding).
 */
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/timers.h>
#include <arch/tsc.h>
#include "kernel/console.h"
#include "kernel/ktest.h"

#define WINDOW_NS	100000000ull

KTEST(tsc_matches_hpet_100ms)
{
	uint64_t t0a, t0b, t1a, t1b, h0, h1, ticks;
	int64_t n0, n1;
	uint64_t hpet_ns, tsc_ns, diff, allowed, bracket_ns;

	if (!tsc.hz)
		return "the TSC is not calibrated";
	if (!hpet_ready())
		return KT_SKIP("no HPET");
	ticks = WINDOW_NS * 1000000ull / hpet_period_fs();
	t0a = rdtsc();
	h0 = hpet_read();
	t0b = rdtsc();
	do {
		t1a = rdtsc();
		h1 = hpet_read();
		t1b = rdtsc();
	} while (h1 - h0 < ticks && (hpet_is_64bit() || (uint32_t)(h1 - h0) < ticks));
	KT_ASSERT(!clock_latch_cycles_to_ns(&tsc_clock_boot, t0a + (t0b - t0a) / 2, &n0));
	KT_ASSERT(!clock_latch_cycles_to_ns(&tsc_clock_boot, t1a + (t1b - t1a) / 2, &n1));
	hpet_ns = (uint64_t)((unsigned __int128)(hpet_is_64bit() ? h1 - h0 : (uint32_t)(h1 - h0)) *
			     hpet_period_fs() / 1000000);
	tsc_ns = (uint64_t)(n1 - n0);
	diff = tsc_ns > hpet_ns ? tsc_ns - hpet_ns : hpet_ns - tsc_ns;
	bracket_ns = (uint64_t)((unsigned __int128)((t0b - t0a) + (t1b - t1a)) * 1000000000ull / tsc.hz) / 2;
	allowed = (uint64_t)((unsigned __int128)hpet_ns * tsc.err_ppb / 1000000000ull) +
		  bracket_ns + hpet_period_fs() / 1000000 + 1;
	printk("ktest: tsc_ns=%llu hpet_ns=%llu diff_ns=%llu allowed_ns=%llu\n",
	       (unsigned long long)tsc_ns, (unsigned long long)hpet_ns,
	       (unsigned long long)diff, (unsigned long long)allowed);
	KT_ASSERT(diff <= allowed);
	return NULL;
}
