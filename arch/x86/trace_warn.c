/*
 * The ring buffer's warning hook on x86: an integrity stop is printed at
 * once, unless the CPU is in NMI context, where printk (which takes the
 * console lock) must not run; then the reason is kept in the CPU's area
 * and printed later by arch_trace_report_stops(), from a context that may.
 */
#include <arch/percpu.h>
#include <arch/trace_arch.h>
#include "kernel/console.h"

void arch_trace_warn(unsigned cpu, const char *why)
{
	struct percpu *pc = cpu < MAX_CPUS ? cpus[cpu] : NULL;

	if (pc && this_cpu()->nmi_depth) {	/* no printk in NMI: keep it */
		pc->trace_stop_why = why;
		return;
	}
	printk("trace: cpu=%u recording stopped: %s\n", cpu, why);
}

void arch_trace_report_stops(void)
{
	for (unsigned c = 0; c < cpu_count; c++) {
		struct percpu *pc = cpus[c];
		const char *why = pc ? pc->trace_stop_why : NULL;
		if (why) {
			pc->trace_stop_why = NULL;
			printk("trace: cpu=%u recording stopped: %s\n", c, why);
		}
	}
}
