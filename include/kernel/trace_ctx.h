/*
 * The context trace writers run in, per CPU (the tracer's per-CPU
 * variables, kernel/tracer/trace_ctx.c): held in the forms writers use it,
 * so that each is one %gs-relative instruction, and switched whole by
 * interrupt entry and exit (trace_ctx_enter() and trace_ctx_leave(), from
 * the tracer's trap hook in trace_ctx.c, which trap_dispatch() calls).
 *
 *   trace_ctx              the current context: what writers read
 *   trace_ctx_stack[l]     this CPU's shadow stack at level l, for the
 *                          context entry builds (trace_ctx_build())
 *
 * Only the CPU itself and its own interrupts write its trace_ctx; an
 * interrupt saves the context it found and puts it back whole, so a
 * context it interrupted half-written is still half-written, then
 * finished, as if it had not come.
 */
#ifndef KERNEL_TRACE_CTX_H
#define KERNEL_TRACE_CTX_H

#include <stdint.h>
#include <arch/percpu.h>
#include "trace/events.h"

#define TRACE_CTX_LEVELS	4	/* context levels: RB_NEST_MAX, FTRACE_LEVELS */

struct trace_ctx {
	uint32_t level;			/* 0 task, 2 IRQ, 3 NMI (TRACE_LEVEL_*) */
	uint32_t level_bit;		/* 1 << level: the ring buffer's nest bit */
	/*
	 * trace_ent_ctx(level), as event payloads carry it, in the high half
	 * of a 64-bit word whose low half is 0: OR-ed as it is into a record's
	 * first 8 bytes (rb_head_word(): record word, then event header).
	 */
	union {
		uint64_t ent_hi;
		struct {
			uint32_t ent_zero;	/* always 0 */
			uint32_t ent_ctx;
		};
	};
	/*
	 * This CPU's and context's function-graph shadow stack
	 * (ftrace_stacks[cpu][level], kernel/tracer/ftrace/ftrace.c), for the
	 * trampolines' one load; never NULL.
	 */
	struct ftrace_stack *graph_stack;
};

/* Level l's context with shadow stack st (a constant expression, if st is). */
#define TRACE_CTX(l, st)	{ (l), 1u << (l), { (uint64_t)trace_ent_ctx(l) << 32 }, (st) }

DECLARE_PER_CPU(struct trace_ctx, trace_ctx);
DECLARE_PER_CPU(struct ftrace_stack *[TRACE_CTX_LEVELS], trace_ctx_stack);

/*
 * Interrupt entry at level on the CPU whose area is pc (the caller's own):
 * *saved gets the context it interrupts, to give back on exit.
 */
static __always_inline struct trace_ctx *trace_ctx_enter(struct percpu *pc, uint32_t level,
							 struct trace_ctx *saved)
{
	struct trace_ctx *cur = percpu_area_ptr(pc, trace_ctx);

	*saved = *cur;
	*cur = (struct trace_ctx)TRACE_CTX(level, (*percpu_area_ptr(pc, trace_ctx_stack))[level]);
	return cur;
}

static __always_inline void trace_ctx_leave(struct trace_ctx *cur, const struct trace_ctx *saved)
{
	*cur = *saved;
}

/*
 * CPU cpu's stacks again, from the function tracer's: an AP's before it
 * runs (its CPU hook), the calling CPU's once they are in place
 * (ftrace_init()); its current context keeps its level.
 */
void trace_ctx_build(unsigned cpu);

#endif
