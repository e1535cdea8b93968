/*
 * run=fault: touch an unmapped address on purpose, to show (and test) the
 * panic path. Before it faults, the faulting CPU records fault.marks bench
 * events with seq 1..fault.marks, which the panic dump must end with; the
 * other online CPUs record bench events with seq ((cpu + 1) << 24) + 1,
 * 2, ... at a slow pace until they are stopped.
 *
 * Recording is switched on first, whatever the jobs before left.
 *
 * fault.cpu=<n> picks the CPU that faults (0, the boot CPU, by default);
 * fault.cpu=all makes every online CPU fault: the boot CPU after its marks,
 * every other one as soon as it sees recording stop (the boot CPU's panic
 * has begun), so that they panic while its report runs, which must still
 * give one report.
 */
#include <stdbool.h>
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/jobs.h"
#include "kernel/kstring.h"
#include "kernel/tracing.h"

#define UNMAPPED	0x00007F0000000000ull	/* no page maps it */
#define MARK_PACE	2000			/* pause loops between background marks */
#define READY_WAIT_NS	2000000000ll		/* for fault.cpu=all: the others to be ready */

static char fault_cpu[8] = "0";
static uint64_t fault_marks = 16;

CMDLINE_OPTION(fault_cpu, .name = "fault.cpu", .type = OPT_STRING, .var = fault_cpu,
	       .size = sizeof(fault_cpu), .help = "run=fault: the CPU that faults, or all");
CMDLINE_OPTION(fault_marks, .name = "fault.marks", .type = OPT_UINT, .var = &fault_marks,
	       .min = 0, .max = 1000000, .help = "run=fault: bench events (seq 1..N) written just before");

static uint32_t started;	/* CPUs recording in the background */
static uint32_t ready;		/* fault.cpu=all: CPUs waiting for the panic */

static void write_marks(void)
{
	for (uint64_t i = 1; i <= fault_marks; i++)
		trace_bench((uint32_t)i);
}

/* The fault itself, in a function named so the report shows where. */
static __noinline bool job_fault_read(void)
{
	volatile uint64_t *unmapped = (volatile uint64_t *)UNMAPPED;

	return *unmapped == 0;
}

/* A CPU that does not fault: records until the panic's NMI stops it. */
static void background(void *arg)
{
	uint32_t seq = (this_cpu()->cpu + 1) << 24;

	(void)arg;
	trace_bench(++seq);
	__atomic_fetch_add(&started, 1, __ATOMIC_ACQ_REL);
	for (;;) {
		trace_bench(++seq);
		for (int i = 0; i < MARK_PACE; i++)
			cpu_relax();
	}
}

/* Bounded: until n CPUs count in *ctr, or READY_WAIT_NS. */
static void wait_for(uint32_t *ctr, uint32_t n)
{
	long long t0 = tsc_now_ns();
	bool paused = watchdog_pause();	/* bounded, and the CPUs waited for are watched */

	while (__atomic_load_n(ctr, __ATOMIC_ACQUIRE) < n && tsc_now_ns() - t0 < READY_WAIT_NS)
		cpu_relax();
	watchdog_resume(paused);
}

static uint32_t background_cpus;	/* how many run background() */

static void fault_here(void *arg)
{
	(void)arg;
	wait_for(&started, background_cpus);
	write_marks();
	job_fault_read();
}

/* fault.cpu=all, on the APs: fault once the boot CPU's panic has stopped recording. */
static void fault_after(void *arg)
{
	long long t0 = tsc_now_ns();

	(void)arg;
	__atomic_fetch_add(&ready, 1, __ATOMIC_ACQ_REL);
	while (tracing_on() && tsc_now_ns() - t0 < READY_WAIT_NS)
		cpu_relax();
	job_fault_read();
}

static bool parse_cpu(uint32_t *cpu)
{
	uint32_t v = 0;

	if (!fault_cpu[0])
		return false;
	for (const char *p = fault_cpu; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (uint32_t)(*p - '0');
	}
	*cpu = v;
	return true;
}

static bool fault_all(void)
{
	unsigned posted = 0;

	for (unsigned c = 1; c < cpu_count; c++)
		posted += smp_call_async(c, fault_after, NULL);
	printk("fault: every CPU (%u) reading unmapped address %p, cpu=0 first\n", posted + 1,
	       (void *)UNMAPPED);
	wait_for(&ready, posted);
	write_marks();
	return job_fault_read();
}

/* Deliberately touch an unmapped address: shows the panic report works. */
__noinline bool job_fault(void)
{
	uint32_t cpu;

	/* A job before this one (run=demo,fault) may have stopped recording: the
	 * marks must be recorded for the panic dump to end with them. */
	tracing_start();
	if (!strcmp(fault_cpu, "all"))
		return fault_all();
	if (!parse_cpu(&cpu) || cpu >= cpu_count || !cpus[cpu] || !cpus[cpu]->online) {
		printk("fault: fault.cpu=%s is not an online CPU\n", fault_cpu);
		return false;
	}
	printk("fault: cpu=%u reading unmapped address %p on purpose after %llu marks\n", cpu,
	       (void *)UNMAPPED, (unsigned long long)fault_marks);
	background_cpus = cpu_count - 1;	/* every online CPU but the one that faults */
	for (unsigned c = 1; c < cpu_count; c++)
		if (c != cpu && !smp_call_async(c, background, NULL))
			background_cpus--;
	if (cpu == 0) {
		wait_for(&started, background_cpus);
		volatile uint64_t *unmapped = (volatile uint64_t *)UNMAPPED;

		write_marks();
		return *unmapped == 0;	/* here, so the report names job_fault */
	}
	smp_call_async(cpu, fault_here, NULL);
	background(NULL);	/* counted in background_cpus already */
	return false;
}
