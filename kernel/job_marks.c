/*
 * run=marks: every online CPU records marks.count bench events with seq
 * ((cpu + 1) << 24) + 1, 2, ..., and the job prints, per CPU, how many the
 * writer said it stored:
 *
 *   marks: cpu=<n> stored=<k> dropped=<d> first=<seq> last=<seq>
 *
 * counted from the writer's own return values, independently of the ring's
 * counters and of any dump, for tests to compare with what a dump or the
 * next boot's persistent range (trace.persist=) shows. Recording stays on.
 *
 * run=triple: reset the machine at once through a triple fault, the kernel
 * recording nothing about it (no end record, no seal): what the reset
 * button or a crash the kernel cannot report leaves to the next boot.
 * With triple.in_event, it first reserves a bench event on this CPU and
 * resets before committing it: a writer caught mid-event, which the next
 * boot must find on the tail page, refuse and count (fault injection for
 * what a reset from outside does at the wrong instant).
 */
#include <stdbool.h>
#include <stdint.h>
#include <arch/exit.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/jobs.h"
#include "kernel/tracing.h"
#include "trace/ring_buffer.h"

static uint64_t marks_count = 1000;
CMDLINE_OPTION(marks_count, .name = "marks.count", .type = OPT_UINT, .var = &marks_count,
	       .min = 1, .max = 100000000, .help = "run=marks: bench events each CPU records");

static struct {
	uint32_t stored, dropped, first, last;
} result[MAX_CPUS];

static void marks_here(void *arg)
{
	unsigned c = this_cpu()->cpu;
	uint32_t base = (c + 1) << 24;

	(void)arg;
	for (uint32_t i = 1; i <= marks_count; i++) {
		if (trace_bench(base + i) == 0) {
			if (!result[c].stored)
				result[c].first = base + i;
			result[c].last = base + i;
			result[c].stored++;
		} else {
			result[c].dropped++;
		}
	}
}

bool job_marks(void)
{
	bool ok = true;

	for (unsigned c = 1; c < cpu_count; c++)
		if (cpus[c] && cpus[c]->online && !smp_call_async(c, marks_here, NULL))
			printk("marks: cpu=%u did not take the call\n", c);
	marks_here(NULL);
	for (unsigned c = 1; c < cpu_count; c++)
		if (cpus[c] && cpus[c]->online && !smp_call_wait(c, 60000)) {
			printk("marks: cpu=%u did not finish within 60 s\n", c);
			ok = false;
		}
	for (unsigned c = 0; c < cpu_count; c++)
		if (cpus[c] && cpus[c]->online)
			printk("marks: cpu=%u stored=%u dropped=%u first=%u last=%u\n", c,
			       result[c].stored, result[c].dropped, result[c].first, result[c].last);
	return ok;
}

static bool triple_in_event;
CMDLINE_OPTION(triple_in_event, .name = "triple.in_event", .type = OPT_FLAG,
	       .var = &triple_in_event,
	       .help = "run=triple: reset between a bench event's reserve and its commit");

bool job_triple(void)
{
	printk("triple: resetting through a triple fault; the kernel records no end\n");
	if (triple_in_event) {
		void *data;
		int err;

		printk("triple: inside a bench event on cpu=%u\n", this_cpu()->cpu);
		/* Never committed: the reset leaves this CPU's writer mid-event.
		 * Nothing may print between the two: a line could be an event. */
		err = ring_buffer_reserve(this_cpu_rb(), 8, &data);
		if (err)
			printk("triple: the reserve was refused (%d): no writer mid-event\n", err);
	}
	machine_triple_fault();
}
