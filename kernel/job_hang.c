/*
 * run=hang: one CPU spins with interrupts off, to show (and test) the
 * hard-lockup watchdog (arch/x86/watchdog.c). Before it spins, that CPU
 * records hang.marks bench events with seq 1..hang.marks, which the
 * watchdog's panic dump must end with.
 *
 * hang.cpu=<n> picks the CPU (0, the boot CPU, by default). hang.ms=<n>
 * ends the spin after n ms of TSC time (0 = never), so that a run with the
 * watchdog off (watchdog.ms=0) ends: the job then passes, saying the hang
 * was not reported. While an application processor hangs, the boot CPU
 * waits for it in smp_call_wait(), which is not watched (that CPU is).
 * hang.sync=1 (with hang.cpu an AP): the hung CPU asks a code-change sync
 * at every turn, which the waiting boot CPU never answers, so each
 * expires: the watchdog must count those waits (R5, <arch/watchdog_rule.h>).
 */
#include <stdbool.h>
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/text_poke.h>
#include <arch/tsc.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/jobs.h"
#include "kernel/tracing.h"

#define AP_EXTRA_MS	10000	/* a bounded AP hang: how long past hang.ms to wait for it */

static uint64_t hang_cpu;
static uint64_t hang_ms;
static uint64_t hang_marks = 16;
static uint64_t hang_sync;

CMDLINE_OPTION(hang_cpu, .name = "hang.cpu", .type = OPT_UINT, .var = &hang_cpu,
	       .min = 0, .max = MAX_CPUS - 1, .help = "run=hang: the CPU that hangs");
CMDLINE_OPTION(hang_ms, .name = "hang.ms", .type = OPT_UINT, .var = &hang_ms,
	       .min = 0, .max = 600000,
	       .help = "run=hang: end the hang after this many ms (0 = never)");
CMDLINE_OPTION(hang_sync, .name = "hang.sync", .type = OPT_UINT, .var = &hang_sync,
	       .min = 0, .max = 1,
	       .help = "run=hang: 1 = the hung CPU asks a code-change sync (text_sync()) at "
		       "every turn, as a patch loop that never ends; with hang.cpu an AP, the boot "
		       "CPU, waiting with interrupts off, answers none (each sync expires)");
CMDLINE_OPTION(hang_marks, .name = "hang.marks", .type = OPT_UINT, .var = &hang_marks,
	       .min = 0, .max = 1000000,
	       .help = "run=hang: bench events (seq 1..N) written just before the hang");

/*
 * The hang itself, in a function named so that the report shows where.
 * No pause in the loop: under icount a pause hands the emulator to the next
 * CPU at every turn, which makes the run crawl without changing what it
 * shows.
 */
static __noinline void job_hang_spin(uint64_t cycles)
{
	uint64_t t0 = rdtsc();

	irq_disable();
	while (!cycles || rdtsc() - t0 < cycles) {
		if (hang_sync)
			text_sync();	/* each a watchdog pause; an expired one is counted (R5) */
		barrier();
	}
}

static void hang_here(void *arg)
{
	uint64_t cycles = tsc.hz / 1000 * hang_ms;
	uint64_t flags = read_rflags();

	(void)arg;
	for (uint64_t i = 1; i <= hang_marks; i++)
		trace_bench((uint32_t)i);
	job_hang_spin(cycles);
	if (flags & RFLAGS_IF)
		irq_enable();
}

bool job_hang(void)
{
	if (hang_cpu >= cpu_count || !cpus[hang_cpu] || !cpus[hang_cpu]->online) {
		printk("hang: hang.cpu=%llu is not an online CPU\n", (unsigned long long)hang_cpu);
		return false;
	}
	printk("hang: cpu=%llu spinning with interrupts off for %llu ms (0 = ever) after %llu "
	       "marks\n", (unsigned long long)hang_cpu, (unsigned long long)hang_ms,
	       (unsigned long long)hang_marks);
	if (hang_cpu == this_cpu()->cpu)
		hang_here(NULL);
	else if (!smp_call_async(hang_cpu, hang_here, NULL))
		return false;
	else if (!hang_ms)
		for (;;)	/* the watchdog's report ends the boot from that CPU */
			smp_call_wait(hang_cpu, AP_EXTRA_MS);
	else if (!smp_call_wait(hang_cpu, hang_ms + AP_EXTRA_MS))
		return false;
	printk("hang: cpu=%llu ended its hang; the watchdog did not report it\n",
	       (unsigned long long)hang_cpu);
	return true;
}
