/*
 * The context trace writers run in, per CPU (<kernel/trace_ctx.h>): the
 * variables, their initial values and their rebuilding.
 *
 * The template's values are every CPU's until trace_ctx_build() runs for
 * it: the task level current, no shadow stacks at any level
 * (ftrace_stack_none, whose depth is at every limit), so that a writer is
 * right from the first instruction a CPU runs, before the tracer is set up.
 */
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/trap.h>
#include "kernel/cpu_hooks.h"
#include "kernel/trace_ctx.h"
#include "ftrace/ftrace_stack.h"

DEFINE_PER_CPU(struct trace_ctx, trace_ctx) = TRACE_CTX(0, &ftrace_stack_none);
DEFINE_PER_CPU(struct ftrace_stack *[TRACE_CTX_LEVELS], trace_ctx_stack) = {
	[0 ... TRACE_CTX_LEVELS - 1] = &ftrace_stack_none,
};

/* Interrupts off around the current context on the calling CPU: an interrupt saves it whole. */
void trace_ctx_build(unsigned cpu)
{
	bool on = read_rflags() & RFLAGS_IF;
	struct ftrace_stack **st;
	struct trace_ctx *cur;

	if (cpu >= MAX_CPUS || !cpus[cpu])
		return;
	st = *per_cpu_ptr(trace_ctx_stack, cpu);
	cur = per_cpu_ptr(trace_ctx, cpu);
	for (uint32_t l = 0; l < TRACE_CTX_LEVELS; l++)
		st[l] = ftrace_stacks[cpu][l];
	irq_disable();
	cur->graph_stack = st[cur->level];
	if (on)
		irq_enable();
}

CPU_HOOK(trace_ctx, .name = "trace_ctx", .prepare = trace_ctx_build);

/*
 * Interrupt entry and exit (TRAP_HOOK, <arch/trap.h>): the handler runs
 * in its level's context, and the interrupted one comes back whole.
 */
_Static_assert(sizeof(struct trace_ctx) <= sizeof(struct trap_hook_save),
	       "a trace_ctx must fit the trap hook's save slot");

static void trace_ctx_trap_enter(uint32_t level, struct trap_hook_save *save)
{
	struct trace_ctx saved;

	trace_ctx_enter(this_cpu(), level, &saved);
	__builtin_memcpy(save, &saved, sizeof(saved));
}

static void trace_ctx_trap_leave(const struct trap_hook_save *save)
{
	struct trace_ctx saved;

	__builtin_memcpy(&saved, save, sizeof(saved));
	trace_ctx_leave(this_cpu_ptr(trace_ctx), &saved);
}

TRAP_HOOK(trace_ctx, .name = "trace_ctx", .enter = trace_ctx_trap_enter,
	  .leave = trace_ctx_trap_leave);
