/* The TSC: properties, calibration, and the kernel clock built on it. */
#ifndef ARCH_TSC_H
#define ARCH_TSC_H

#include <stdbool.h>
#include <stdint.h>
#include <arch/percpu.h>
#include "trace/clock.h"

struct tsc_info {
	uint64_t hz;			/* calibrated frequency; 0 = unconverted cycles */
	uint64_t err_ppb;		/* its bound against the reference (measurement) */
	uint64_t tol_ppb;		/* the reference oscillator's own tolerance */
	const char *ref;		/* pit, hpet, pmtimer, cpuid, user or none */
	int ref_id;			/* TSC_REF_* of the winner (not for user or none) */
	bool disputed;			/* the vote left a reference out: err_ppb covers them all */
	uint64_t vote_err_ppb;		/* disputed: the winner's own err (a right majority) */
	uint64_t spread_ppb;		/* disputed: the largest difference from hz */
	char used[32];			/* disputed: the winning group, "pit,hpet" */
	char left_out[32];		/* disputed: the references outvoted */
	bool invariant;			/* CPUID 0x80000007 EDX[8] */
	bool tsc_adjust;		/* IA32_TSC_ADJUST exists */
	bool hypervisor;		/* CPUID 1 ECX[31] */
	char hv_vendor[13];		/* CPUID 0x40000000 signature */
};

extern struct tsc_info tsc;
extern struct clock_latch tsc_clock_boot;	/* the boot CPU's conversion */
/* Each CPU's own conversion (per-CPU; written by its CPU, read by any). */
DECLARE_PER_CPU(struct clock_latch, tsc_clock);

/*
 * Each CPU's TSC against the boot CPU's (per-CPU, tsc_sync.c's): cycles,
 * this CPU's TSC minus cpu 0's. Written by the boot CPU when it measures
 * an AP (before the AP's clock is set), trusted cleared by the clock
 * watchdog; read by any CPU. The boot CPU's is 0 and trusted (tsc_init()).
 */
struct tsc_skew {
	int64_t skew;			/* measured offset */
	int64_t uncert;			/* its bound */
	uint64_t warps;			/* backwards steps seen in the warp test */
	bool trusted;			/* skew bounded and no warps */
};
DECLARE_PER_CPU(struct tsc_skew, tsc_skew);

enum { TSC_REF_PIT, TSC_REF_HPET, TSC_REF_PMTIMER, TSC_REF_CPUID };

/* ms of TSC time in cycles (3 GHz assumed before calibration): a wait's bound. */
static inline uint64_t tsc_ms_to_cycles(uint64_t ms)
{
	return (tsc.hz ? tsc.hz : 3000000000ull) / 1000 * ms;
}

/* TSC cycles a reference window of window_ns may take (0: no bound yet). */
uint64_t tsc_window_deadline(uint64_t window_ns);

/*
 * What reference ref_id (TSC_REF_*) gave at calibration: the TSC's rate
 * against it and that figure's bound.  False if it was absent, failed, or
 * was left out by the consensus (then nothing should be compared with it).
 */
bool tsc_ref_result(int ref_id, uint64_t *hz, uint64_t *err_ppb);

/* Detect properties, calibrate, install the conversion and printk's clock. */
void tsc_init(void);

/*
 * A TSC reading in ns on the calling CPU's own clock (an AP's skew
 * corrected), or -1 before that CPU has a clock: before calibration on the
 * boot CPU, before its skew is measured on an AP.  The one cycles-to-ns
 * path of the kernel: printk's clock, delays, the ktests, the benchmark's
 * write-time conversion.
 */
long long tsc_cycles_to_ns(uint64_t cycles);
/* tsc_cycles_to_ns(now). */
long long tsc_now_ns(void);

#endif
