/*
 * The constants arch/x86/ftrace_entry.asm reads C's layouts by: structure
 * offsets, event ids and header words, record sizes. Never linked: the
 * Makefile compiles this file to assembly and turns each line DEFINE()
 * marks into a NASM %define (build/gen/asm_offsets.inc), as Linux's kbuild
 * does with asm-offsets.c, so a changed layout changes the trampolines with
 * it instead of being typed twice and checked.
 *
 * What a constant cannot say, the asm's instruction forms, is asserted here
 * next to it: a field's width where the asm loads or compares it whole.
 */
#include <stddef.h>
#include <arch/ftrace.h>
#include <arch/percpu.h>
#include "kernel/trace_ctx.h"
#include "kernel/tracing.h"
#include "kernel/event_writers.h"
#include "ftrace/ftrace_stack.h"

/*
 * A line `->NAME value text` in the compiler's output; %c prints the
 * constant bare (no `$`). The Makefile's sed keeps only these lines.
 */
#define DEFINE(sym, val) \
	__asm__ __volatile__("\n.ascii \"->" #sym " %c0 " #val "\"" : : "i"((long)(val)))
#define OFFSET(sym, type, field)	DEFINE(sym, offsetof(type, field))
/* A per-CPU variable's (or its field's) place at %gs: `symbol+offset`. */
#define PERCPU(sym, var)		DEFINE(sym, percpu_offset(var))
#define WIDTH(type, field, bytes) \
	_Static_assert(sizeof(((type *)0)->field) == (bytes), #type "." #field " is " #bytes " bytes")

/* A fixed-size event as the trampolines write it: record, record word, header. */
#define EVENT(prefix, name)								\
	DEFINE(prefix##_REC, rb_data_record_size(sizeof(struct trace_ev_##name)));	\
	DEFINE(prefix##_WORD, rb_record_word(sizeof(struct trace_ev_##name) / 4, 0));	\
	DEFINE(prefix##_ENT, trace_ent_pack(TEV_##name, 0, TRACE_ENT_WORDS(name)))

/* The payloads are inline (one record word before them), with no length word. */
_Static_assert(sizeof(struct trace_ev_funcgraph_exit) <= RB_INLINE_MAX, "inline payloads");
_Static_assert(!CONFIG_TRACE_RESERVE_CMPXCHG, "the trampolines reserve with xadd");
_Static_assert(RB_DELTA_LIMIT <= 1ull << 31, "the delta compare is a 32-bit immediate");

WIDTH(struct trace_ctx, level_bit, 4);
WIDTH(struct trace_ctx, ent_hi, 8);
WIDTH(struct trace_ctx, graph_stack, 8);
_Static_assert(sizeof(ftrace_busy) == 4 && sizeof(ftrace_overrun) == 4, "32-bit per-CPU words");
_Static_assert(sizeof(tracing_rb) == 8, "the buffer pointer");
WIDTH(struct rb_cpu_buffer, guard, 8);
WIDTH(struct rb_cpu_buffer, nest, 4);
WIDTH(struct rb_cpu_buffer, write, 8);
WIDTH(struct rb_cpu_buffer, tail_base, 8);
WIDTH(struct rb_cpu_buffer, tail_page, 8);
WIDTH(struct rb_cpu_buffer, cap, 4);
WIDTH(struct rb_page_header, entries, 4);
WIDTH(struct ftrace_stack, depth, 4);
WIDTH(struct ftrace_stack, sp[0], 8);
WIDTH(struct ftrace_stack, ret[0], 8);
WIDTH(struct ftrace_stack, func[0], 8);
WIDTH(struct ftrace_stack, calltime[0], 8);
WIDTH(struct trace_ev_funcgraph_entry, depth, 4);
WIDTH(struct trace_ev_funcgraph_exit, depth, 4);
WIDTH(struct trace_ev_funcgraph_exit, overrun, 4);
_Static_assert(offsetof(struct rb_cpu_buffer, nest) == offsetof(struct rb_cpu_buffer, guard),
	       "nest is the guard's low half");
_Static_assert(offsetof(struct ftrace_stack, depth) == 0 && offsetof(struct ftrace_stack, busy) == 4,
	       "the stack's word: depth | busy << 32");
_Static_assert(sizeof(ftrace_graph_fast_limit) == 8, "compared with the 64-bit word");

void asm_offsets(void);
void asm_offsets(void)
{
	/*
	 * The calling CPU's per-CPU variables, at %gs: link-time offsets,
	 * symbol + constant (the trampolines declare the symbols extern)
	 */
	PERCPU(PC_LEVEL_BIT, trace_ctx.level_bit);
	PERCPU(PC_ENT_HI, trace_ctx.ent_hi);
	PERCPU(PC_GRAPH_STACK, trace_ctx.graph_stack);
	PERCPU(PC_FTRACE_BUSY, ftrace_busy);
	PERCPU(PC_RB, tracing_rb);
	PERCPU(PC_FTRACE_OVERRUN, ftrace_overrun);

	/* struct rb_cpu_buffer, and how rb_reserve() hands over to its slow path */
	OFFSET(CB_GUARD, struct rb_cpu_buffer, guard);
	OFFSET(CB_NEST, struct rb_cpu_buffer, nest);
	OFFSET(CB_WRITE, struct rb_cpu_buffer, write);
	OFFSET(CB_TAIL_BASE, struct rb_cpu_buffer, tail_base);
	OFFSET(CB_TAIL_PAGE, struct rb_cpu_buffer, tail_page);
	OFFSET(CB_CAP, struct rb_cpu_buffer, cap);
	DEFINE(RB_SLOW_AFTER_XADD, RB_SLOW_AFTER_XADD);
	DEFINE(RB_DELTA_LIMIT, RB_DELTA_LIMIT);

	/* the page */
	DEFINE(PAGE_HEADER, RB_PAGE_HEADER_SIZE);
	OFFSET(PAGE_ENTRIES, struct rb_page_header, entries);

	/* the static keys the trampolines start with */
	DEFINE(KEY_SIZE, sizeof(trace_event_keys[0]));

	/* function's event */
	EVENT(FN, function);
	DEFINE(TEV_FUNCTION, TEV_function);
	OFFSET(FN_IP, struct trace_ev_function, ip);
	OFFSET(FN_PARENT, struct trace_ev_function, parent_ip);

	/* function_graph: the shadow stack and its two events */
	OFFSET(ST_WORD, struct ftrace_stack, depth);
	OFFSET(ST_DEPTH, struct ftrace_stack, depth);
	OFFSET(ST_SP, struct ftrace_stack, sp);
	OFFSET(ST_RET, struct ftrace_stack, ret);
	OFFSET(ST_FUNC, struct ftrace_stack, func);
	OFFSET(ST_CALLTIME, struct ftrace_stack, calltime);
	EVENT(GE, funcgraph_entry);
	DEFINE(TEV_GRAPH_ENTRY, TEV_funcgraph_entry);
	OFFSET(GE_FUNC, struct trace_ev_funcgraph_entry, func);
	OFFSET(GE_DEPTH, struct trace_ev_funcgraph_entry, depth);
	EVENT(GX, funcgraph_exit);
	DEFINE(TEV_GRAPH_EXIT, TEV_funcgraph_exit);
	OFFSET(GX_FUNC, struct trace_ev_funcgraph_exit, func);
	OFFSET(GX_CYCLES, struct trace_ev_funcgraph_exit, cycles);
	OFFSET(GX_DEPTH, struct trace_ev_funcgraph_exit, depth);
	OFFSET(GX_OVERRUN, struct trace_ev_funcgraph_exit, overrun);

	DEFINE(SITE_LEN, FTRACE_SITE_LEN);
}
