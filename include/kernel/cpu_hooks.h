/*
 * Per-CPU bring-up hooks: a subsystem that keeps state per CPU registers
 * what to do when a CPU comes, with CPU_HOOK() in the "cpu_hooks" linker
 * section, next to its code (as Linux's subsystems register a CPU-hotplug
 * state). CPU bring-up calls every hook in link order and knows none of
 * them:
 *
 *   prepare(cpu)  on the boot CPU, after cpu's per-CPU area exists and
 *                 before cpu runs: memory the CPU will need, its per-CPU
 *                 variables (per_cpu_ptr(var, cpu))
 *   start(cpu)    on cpu itself, once its clock is final (no TSC write
 *                 comes after), before it idles: what needs the CPU's own
 *                 stamps or its own context
 *
 * Either may be NULL. Neither can refuse: a hook that cannot do its part
 * says so itself and leaves the CPU without it. A CPU that does not start
 * after its prepare gets no start; its next id is prepared again for the
 * next CPU (a prepare must take a slot it left ready as it is).
 */
#ifndef KERNEL_CPU_HOOKS_H
#define KERNEL_CPU_HOOKS_H

#include "baretrace/compiler.h"

struct cpu_hook {
	const char *name;		/* the subsystem, for reports */
	void (*prepare)(unsigned cpu);	/* boot CPU, before cpu runs; or NULL */
	void (*start)(unsigned cpu);	/* cpu itself, its clock final; or NULL */
};

#define CPU_HOOK(id, ...)						\
	static const struct cpu_hook __cpu_hook_##id			\
	__section("cpu_hooks") __used __aligned(8) = { __VA_ARGS__ }

/* Every hook's prepare(cpu), then start(cpu) on cpu: for CPU bring-up. */
void cpu_hooks_prepare(unsigned cpu);
void cpu_hooks_start(unsigned cpu);

#endif
