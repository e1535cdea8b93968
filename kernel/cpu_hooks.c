/*
 * The per-CPU bring-up hooks' table (<kernel/cpu_hooks.h>): the
 * "cpu_hooks" section, walked in link order. Never traced: start() runs
 * on a CPU whose trace buffer a hook is about to build, and an entry
 * recorded before it would return into the new buffer unmatched.
 */
#include "kernel/cpu_hooks.h"

extern const struct cpu_hook __start_cpu_hooks[];
extern const struct cpu_hook __stop_cpu_hooks[];

void cpu_hooks_prepare(unsigned cpu)
{
	for (const struct cpu_hook *h = __start_cpu_hooks; h < __stop_cpu_hooks; h++)
		if (h->prepare)
			h->prepare(cpu);
}

void cpu_hooks_start(unsigned cpu)
{
	for (const struct cpu_hook *h = __start_cpu_hooks; h < __stop_cpu_hooks; h++)
		if (h->start)
			h->start(cpu);
}
