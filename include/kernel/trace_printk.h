/*
 * trace_printk(fmt, ...): a printf-style line in the trace, as cheap as
 * ftrace's binary printk: the record keeps the calling function's address,
 * a reference to the constant format and the arguments in binary
 * (<trace/bprint.h>); the text is made when the trace is read.  The format
 * must be a string literal: it is kept in the trace_printk_fmts section,
 * whose formats every binary dump carries (PRINTK frames).  Checked like
 * printf by the compiler.  trace_puts(s): the string alone.
 *
 * Prints as "<function>: <message>" (one trailing newline dropped).
 *
 * Each call site tests printk:bprint's static key first: while that event
 * is disabled the site is one NOP and neither the arguments nor their
 * encoding are evaluated (an argument with side effects has none then);
 * the value is -RB_EOFF.
 */
#ifndef KERNEL_TRACE_PRINTK_H
#define KERNEL_TRACE_PRINTK_H

#include "baretrace/compiler.h"
#include "kernel/tracing.h"

int __trace_printk(const char *fmt, ...) __printf(1, 2);

#define trace_printk(fmt, ...)							\
	({									\
		static const char te_fmt[] = fmt;				\
		static const char *const te_fmt_ref				\
			__attribute__((section("trace_printk_fmts"), used)) = te_fmt; \
		(void)te_fmt_ref;						\
		trace_event_enabled(bprint) ?					\
			__trace_printk(te_fmt, ##__VA_ARGS__) : -RB_EOFF;	\
	})

#define trace_puts(s)	trace_printk("%s", (s))

/* The formats, in section order; and the one at addr, or NULL. */
extern const char *const __start_trace_printk_fmts[], *const __stop_trace_printk_fmts[];
const char *trace_printk_format(uint64_t addr);

#endif
