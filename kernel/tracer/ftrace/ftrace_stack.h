/*
 * function_graph's shadow stack: one per CPU and context level, and the
 * per-CPU state beside it, shared by the C hooks (ftrace.c), the contexts
 * that point at the stacks (trace_ctx.c) and the trampolines (arch/x86/ftrace_entry.asm,
 * which read its layout from the generated asm offsets: asm_offsets.c).
 * Not a kernel interface.
 */
#ifndef KERNEL_TRACER_FTRACE_STACK_H
#define KERNEL_TRACER_FTRACE_STACK_H

#include <stdint.h>
#include <arch/percpu.h>
#include "kernel/ftrace.h"
#include "kernel/trace_ctx.h"

/*
 * Frame d lives in column d of each array, so that the trampolines reach
 * any of its fields as stack + d * 8 + the column's offset.
 */
struct ftrace_stack {
	uint32_t depth;			/* frames in use */
	uint32_t busy;			/* a C hook of this level runs (1), or not (0) */
	uint64_t sp[FTRACE_STACK_FRAMES];	/* return slot + 8; once used, never 0 again */
	uint64_t ret[FTRACE_STACK_FRAMES];	/* the real return address */
	uint64_t func[FTRACE_STACK_FRAMES];	/* the function (its site) */
	uint64_t calltime[FTRACE_STACK_FRAMES];	/* stamp at entry */
};

/* The trampolines' depth limit: below it the fast path pushes (ftrace.c). */
extern uint64_t ftrace_graph_fast_limit;

/* The stacks by [cpu][level], never NULL; none's depth is at every limit. */
extern struct ftrace_stack *ftrace_stacks[][TRACE_CTX_LEVELS];
extern struct ftrace_stack ftrace_stack_none;

/* The calling CPU's level bits of C hooks running; its overruns (low half). */
DECLARE_PER_CPU(uint32_t, ftrace_busy);
DECLARE_PER_CPU(uint32_t, ftrace_overrun);

#endif
