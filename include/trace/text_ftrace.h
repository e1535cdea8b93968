/*
 * The function tracer's events as text (trace/text_ftrace.c), for the
 * text dump (trace/text.c), which the kernel and the decoder share.
 *
 *   function:        the usual prefix, then "ip <-parent_ip"
 *   function_graph:  one line per call and return, as Linux's
 *                    function_graph tracer prints them with its
 *                    funcgraph-abstime and funcgraph-proc options
 *                    (docs/ftrace.md), the time to the nanosecond:
 *
 *   <time>          |  <cpu>)   <task>     | <mark> <duration>|  <indent>func() {
 *       0.050239372 |  0)    task/0-1    |               |    pmm_alloc() {
 *       0.050239542 |  0)    task/0-1    |    0.441 us   |      scan();
 *       0.050440293 |  0)    task/0-1    | ! 201.932 us  |    }
 *
 *   task is the context as the event lines name it (each context has its
 *   own depth); the indent is two spaces per depth; a call whose return is
 *   the next event of its CPU (a leaf) is one line "func();", a return a
 *   bare "}"; durations are Linux's: microseconds with as many nanosecond
 *   digits as fit 7 digits, after a mark for long calls ('+' over 10 us,
 *   '!' 100 us, '#' 1 ms, '*' 10 ms, '@' 100 ms, '$' 1 s).
 *
 * Events are recognised by system and name ("ftrace", "function", ...)
 * and their fields by name, so a capture's own catalog works as well as
 * the built-in one.
 */
#ifndef TRACE_TEXT_FTRACE_H
#define TRACE_TEXT_FTRACE_H

#include <stddef.h>
#include <stdint.h>
#include "trace/event_fmt.h"

enum trace_ftrace_kind {
	TRACE_FTRACE_NONE = 0,		/* not one of the function tracer's */
	TRACE_FTRACE_FUNCTION,		/* ftrace:function */
	TRACE_FTRACE_ENTRY,		/* ftrace:funcgraph_entry */
	TRACE_FTRACE_EXIT,		/* ftrace:funcgraph_exit */
};

/* Which of the function tracer's events d is (NONE for any other, or NULL). */
enum trace_ftrace_kind trace_ftrace_kind(const struct trace_event_def *d);

/* Linux's mark for a function_graph duration: '+', '!', '#', '*', '@', '$' or ' '. */
char trace_ftrace_mark(uint64_t dur_ns);

/* A field of an accepted view by name, 0 if it has none of that name. */
uint64_t trace_ftrace_field(const struct trace_event_view *v, const char *name);

/* "ip <-parent_ip" of a function event (snprintf semantics). */
int trace_ftrace_function(const struct trace_event_view *v, const struct trace_symbols *syms,
			  char *buf, size_t size);

/*
 * One function_graph line (snprintf semantics). ev is an entry or an exit;
 * leaf, if not NULL, is the exit that follows entry ev at once (one line
 * for both). ns is the event's time; dur_ns the exit's duration (exit or
 * leaf lines only).
 */
int trace_ftrace_graph(const struct trace_event_view *ev, const struct trace_event_view *leaf,
		       uint32_t cpu, int64_t ns, int64_t dur_ns,
		       const struct trace_symbols *syms, char *buf, size_t size);

#endif
