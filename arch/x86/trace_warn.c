/*
 * The ring buffer's warning hook on x86: an integrity stop is printed at
 * once, unless the CPU is in NMI context, where printk (which takes the
 * console lock) must not run; then the reason is kept per CPU
 * and printed later by arch_trace_report_stops(), from a context that may.
 */
#include <arch/percpu.h>
#include <arch/trace_arch.h>
#include "kernel/console.h"

/* An integrity stop seen in NMI, to print. */
static DEFINE_PER_CPU(const char *volatile, trace_stop_why);

void arch_trace_warn(unsigned cpu, const char *why)
{
	/* No printk in NMI: keep it. */
	if (cpu < MAX_CPUS && cpus[cpu] && this_cpu()->nmi_depth) {
		*per_cpu_ptr(trace_stop_why, cpu) = why;
		return;
	}
	printk("trace: cpu=%u recording stopped: %s\n", cpu, why);
}

void arch_trace_report_stops(void)
{
	for (unsigned c = 0; c < cpu_count; c++) {
		const char *why = cpus[c] ? *per_cpu_ptr(trace_stop_why, c) : NULL;
		if (why) {
			*per_cpu_ptr(trace_stop_why, c) = NULL;
			printk("trace: cpu=%u recording stopped: %s\n", c, why);
		}
	}
}
