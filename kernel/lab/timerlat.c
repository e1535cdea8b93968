/*
 * run=timerlat: timer interrupt latency on each CPU (docs/lab.md#timerlat).
 *
 * On each online CPU in turn (a cross-CPU call; the boot CPU inline), for
 * timerlat.samples samples:
 *
 *   deadline = rdtsc + period         (a known TSC instant)
 *   arm the LAPIC timer for it        (TSC-deadline mode if the CPU has it,
 *                                      else one-shot counted from now)
 *   spin, interrupts on, until the handler has stamped
 *   handler: t = rdtsc (its first act); latency = t - deadline
 *
 * The latency is what an interrupt costs to reach the kernel's handler:
 * the timer's own granularity, the CPU (or emulator) taking it, the
 * interrupt entry and trap_dispatch(). A handler before the deadline (the
 * one-shot count's rate measured with an error) counts as 0 and in early=.
 *
 * Contract: the handler runs on the CPU that armed the timer and writes
 * only that CPU's fired stamp (a relaxed store of a 64-bit value: the
 * interrupted spin on the same CPU reads it, no other CPU does). The timer
 * is lent by the watchdog for the CPU's run (lapic_timer_at()) and given
 * back by lapic_timer_stop(), which restores its one-shot NMI mode.
 */
#include <stdbool.h>
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/lab.h"
#include "kernel/pmm.h"
#include "kernel/tracing.h"
#include "trace/lab.h"

#define SAMPLES_MAX	100000
#define FIRE_WAIT_MS	1000	/* past its deadline, how long a sample waits for the handler */
#define CALL_WAIT_MS	30000	/* the boot CPU's wait for a CPU, per 1000 samples and period */

static uint64_t samples = 1000;
static uint64_t period_us = 100;
CMDLINE_OPTION(timerlat_samples, .name = "timerlat.samples", .type = OPT_UINT, .var = &samples,
	       .min = 1, .max = SAMPLES_MAX, .help = "run=timerlat: timer interrupts per CPU");
CMDLINE_OPTION(timerlat_period, .name = "timerlat.period_us", .type = OPT_UINT,
	       .var = &period_us, .min = 1, .max = 1000000,
	       .help = "run=timerlat: from arming the timer to its deadline, us");

/* One CPU's results: written by that CPU during its run, read after it. */
struct tl_cpu {
	uint64_t fired;			/* the handler's TSC stamp, 0 = not yet */
	uint64_t taken;			/* samples whose interrupt came */
	uint64_t early;			/* ... of which before the deadline (counted as 0) */
	uint64_t missed;		/* samples whose interrupt did not come in FIRE_WAIT_MS */
	uint64_t max_ns, p99_ns, p50_ns;
	uint64_t hist[LAB_HIST_BUCKETS];	/* latencies by lab_log2_bucket(ns) */
	bool ran;
} __aligned(CACHELINE_SIZE);

static struct tl_cpu res[MAX_CPUS];
static uint64_t *lat;		/* samples latencies of the CPU running, ns */
static uint64_t lat_pages;
static bool use_deadline;	/* the boot CPU has TSC-deadline mode: every CPU uses it */

static void timerlat_irq(struct trap_frame *f)
{
	uint64_t t = rdtsc();	/* first: the latency ends here */

	(void)f;
	__atomic_store_n(&res[this_cpu()->cpu].fired, t, __ATOMIC_RELAXED);
	lapic_eoi();
}

static void timerlat_cpu_run(void *arg)
{
	uint32_t cpu = this_cpu()->cpu;
	struct tl_cpu *r = &res[cpu];
	uint64_t period = (uint64_t)((unsigned __int128)period_us * 1000 * tsc.hz / 1000000000u);
	uint64_t wait = tsc_ms_to_cycles(FIRE_WAIT_MS), flags = read_rflags();
	uint64_t n = 0;

	(void)arg;
	r->ran = true;
	irq_enable();
	for (uint64_t s = 0; s < samples; s++) {
		uint64_t armed, deadline, fired, ns;

		__atomic_store_n(&r->fired, 0, __ATOMIC_RELAXED);
		armed = rdtsc();
		deadline = armed + (period ? period : 1);
		lapic_timer_at(deadline, VEC_TIMERLAT, use_deadline);
		while (!(fired = __atomic_load_n(&r->fired, __ATOMIC_RELAXED)) &&
		       rdtsc() - armed < period + wait)	/* bounded: FIRE_WAIT_MS late */
			cpu_relax();
		if (!fired) {
			r->missed++;
			continue;
		}
		if (fired < deadline) {
			r->early++;
			ns = 0;
		} else {
			ns = (uint64_t)((unsigned __int128)(fired - deadline) * 1000000000u /
					tsc.hz);
		}
		lat[n++] = ns;
		r->hist[lab_log2_bucket(ns)]++;
		if (ns > r->max_ns)
			r->max_ns = ns;
		trace_timerlat(ns, (uint32_t)n);
		watchdog_touch();
	}
	lapic_timer_stop();	/* the watchdog's one-shot NMI mode again */
	if (!(flags & RFLAGS_IF))
		irq_disable();
	r->taken = n;
	r->p99_ns = lab_percentile(lat, n, 99);
	r->p50_ns = lab_percentile(lat, n, 50);
}

static void timerlat_report(unsigned c)
{
	const struct tl_cpu *r = &res[c];
	char hist[256];

	printk("timerlat: cpu=%u samples=%llu max_ns=%llu p99_ns=%llu p50_ns=%llu early=%llu "
	       "missed=%llu\n", c, (unsigned long long)r->taken, (unsigned long long)r->max_ns,
	       (unsigned long long)r->p99_ns, (unsigned long long)r->p50_ns,
	       (unsigned long long)r->early, (unsigned long long)r->missed);
	printk("timerlat: cpu=%u hist%s\n", c,
	       lab_hist_format(hist, sizeof(hist), r->hist, LAB_HIST_BUCKETS));
}

bool timerlat_job(void)
{
	uint64_t limit = CALL_WAIT_MS + samples * (period_us / 1000 + 1);
	bool ok = true;

	if (!tsc.hz || tsc_now_ns() < 0 || !lapic_timer_hz) {
		printk("timerlat: the TSC or the LAPIC timer is not calibrated\n");
		return false;
	}
	use_deadline = lapic_timer_has_tsc_deadline();
	lat_pages = (samples * sizeof(uint64_t) + PAGE_SIZE - 1) / PAGE_SIZE;
	lat = (uint64_t *)(uintptr_t)pmm_alloc(lat_pages, 1);
	if (!lat) {
		printk("timerlat: no memory for %llu pages of samples\n",
		       (unsigned long long)lat_pages);
		return false;
	}
	memset(res, 0, sizeof(res));
	trap_set_handler(VEC_TIMERLAT, timerlat_irq);
	printk("timerlat: samples=%llu period_us=%llu mode=%s\n", (unsigned long long)samples,
	       (unsigned long long)period_us, use_deadline ? "tsc-deadline" : "one-shot");
	for (unsigned c = 0; c < cpu_count && ok; c++) {
		if (!cpus[c] || !cpus[c]->online)
			continue;
		if (c == 0) {
			timerlat_cpu_run(NULL);
		} else if (!smp_call_async(c, timerlat_cpu_run, NULL)) {
			printk("timerlat: cpu=%u did not take the call\n", c);
			continue;
		} else if (!smp_call_wait(c, limit)) {
			printk("timerlat: cpu=%u did not finish within %llu ms\n", c,
			       (unsigned long long)limit);
			ok = false;	/* it may still write lat: left allocated */
			break;
		}
		timerlat_report(c);
		if (res[c].missed)
			ok = false;
	}
	if (ok)
		pmm_free((uintptr_t)lat, lat_pages);
	return ok;
}
