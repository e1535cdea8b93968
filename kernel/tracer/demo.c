/*
 * The main job (run=demo, the default of make run): every CPU traces real
 * activity for about a second -- its LAPIC timer ticking at DEMO_TICK_HZ,
 * IPIs sent round the ring of CPUs every DEMO_IPI_US, and a producer loop
 * writing an event every DEMO_PRODUCE_US -- then the kernel prints the
 * merged dump of the most recent events, the per-CPU statistics and the
 * clocks, and the jobs after it (the shell by default) take over.
 */
#include <stddef.h>
#include <arch/clockwd.h>
#include <arch/cpu.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/demo.h"
#include "kernel/dump.h"
#include "kernel/record.h"
#include "kernel/shell.h"
#include "kernel/tracing.h"

#define DEMO_TICK_HZ		1000
#define DEMO_IPI_US		2000
#define DEMO_PRODUCE_US		50

static uint64_t demo_ms = 1000;
CMDLINE_OPTION(demo_ms, .name = "demo.ms", .type = OPT_UINT, .var = &demo_ms,
	       .min = 10, .max = 60000, .help = "how long run=demo traces, in ms");

/* Test facility: an integrity stop on one CPU halfway through the demo. */
static int64_t inject_ring_stop = -1;
CMDLINE_OPTION(inject_ring_stop, .name = "inject.ring_stop", .type = OPT_INT,
	       .var = &inject_ring_stop, .min = (uint64_t)-1, .max = MAX_CPUS - 1,
	       .help = "test facility: stop CPU n's ring buffer halfway through run=demo, "
		       "as a failed integrity check would; -1 = never");

/*
 * Test facility: every CPU but the boot CPU prints a line every
 * demo.print_ms while the demo runs, as other CPUs' printk meets a
 * trace.record=serial stream (the console lock lets each out between two
 * frames).  The count each printed is said after the stream.
 */
static uint64_t demo_print_ms;
CMDLINE_OPTION(demo_print_ms, .name = "demo.print_ms", .type = OPT_UINT, .var = &demo_print_ms,
	       .min = 0, .max = 60000,
	       .help = "test facility: every CPU but the boot CPU prints a line this often (ms) "
		       "while run=demo traces; 0 = never");
static uint32_t printed[MAX_CPUS];		/* demo.print_ms lines, per CPU */

static volatile uint32_t ipi_from[MAX_CPUS];	/* who sent the last demo IPI */

static void on_demo_ipi(struct trap_frame *f)
{
	struct percpu *pc = this_cpu();

	(void)f;
	trace_ipi_recv(ipi_from[pc->cpu], VEC_TEST);
	lapic_eoi();
}

static void demo_cpu(void *arg)
{
	struct percpu *pc = this_cpu();
	uint64_t start = rdtsc(), us = tsc.hz / 1000000;
	uint64_t end = start + (uint64_t)(uintptr_t)arg * us * 1000;
	uint64_t next_ipi = start, next_produce = start, value = pc->cpu * 1000;
	uint64_t stop_at = inject_ring_stop == (int64_t)pc->cpu ? start + (end - start) / 2 : ~0ull;
	uint64_t print_every = pc->cpu ? demo_print_ms * us * 1000 : 0;
	uint64_t next_print = start + print_every;
	uint32_t seq = 0;
	unsigned target = (pc->cpu + 1) % cpus_online;

	irq_enable();
	lapic_timer_periodic(DEMO_TICK_HZ);
	for (uint64_t now = rdtsc(); now < end; now = rdtsc()) {
		if (now >= stop_at) {
			ring_buffer_stop(this_cpu_rb(), "stopped by inject.ring_stop");
			stop_at = ~0ull;
		}
		if (now >= next_produce) {
			value = value * 6364136223846793005ull + 1442695040888963407ull;
			trace_producer(seq++, (uint32_t)(value >> 40));
			next_produce += DEMO_PRODUCE_US * us;
		}
		if (cpus_online > 1 && now >= next_ipi) {
			ipi_from[target] = pc->cpu;
			trace_ipi_send(target, VEC_TEST);
			lapic_send_ipi(cpus[target]->apic_id, VEC_TEST);
			next_ipi += DEMO_IPI_US * us;
		}
		if (print_every && now >= next_print) {
			printk("demo: cpu=%u line=%u\n", pc->cpu, ++printed[pc->cpu]);
			next_print += print_every;
		}
		if (pc->cpu == 0) {
			clock_watchdog_poll(false);	/* a check if one is due */
			record_poll();			/* trace.record=usb: full pages out */
		}
		cpu_relax();
	}
	lapic_timer_stop();
}

bool demo_run(void)
{
	void *ms = (void *)(uintptr_t)demo_ms;

	if (!tsc.hz) {
		printk("demo: the TSC is not calibrated; nothing to time the demo with\n");
		return false;
	}
	trap_set_handler(VEC_TEST, on_demo_ipi);
	tracing_reconfigure(trace_pages, trace_mode);	/* start from empty buffers */
	tracing_start();
	printk("demo: %u CPUs tracing for %llu ms: LAPIC ticks at %u Hz, IPIs every %u us, "
	       "an event every %u us\n", cpus_online, (unsigned long long)demo_ms,
	       DEMO_TICK_HZ, DEMO_IPI_US, DEMO_PRODUCE_US);
	record_begin();		/* after the line: over the console, no line inside the stream */
	for (unsigned c = 1; c < cpu_count; c++)
		if (cpus[c] && cpus[c]->online)
			smp_call_async(c, demo_cpu, ms);
	demo_cpu(ms);
	for (unsigned c = 1; c < cpu_count; c++)
		if (cpus[c] && cpus[c]->online && !smp_call_wait(c, demo_ms + 10000))
			printk("demo: cpu=%u did not finish\n", c);
	tracing_stop();
	record_end(NULL);
	tracing_flush_all();
	printk("demo: done; recording stopped\n");
	for (unsigned c = 1; demo_print_ms && c < cpu_count; c++)
		if (cpus[c] && cpus[c]->online)
			printk("demo: cpu=%u printed=%u\n", c, printed[c]);
	bool ok = dump_default();
	char clock[] = "clock";
	shell_exec(clock);	/* the clocks the dump was converted with */
	return ok;
}
