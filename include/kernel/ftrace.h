/*
 * The function tracer (kernel/tracer/ftrace/ftrace.c; design in docs/ftrace.md).
 *
 * Every function of the traced files starts with a 5-byte NOP (a site).
 * A tracer other than nop turns the selected sites into calls of the
 * trampoline, which records one event per call (function) or one at entry
 * and one at return (function_graph, through a per-CPU shadow stack of
 * return addresses, one per context level). Filters pick the sites.
 *
 * Contract: the setters run in task context with interrupts on, never in
 * an interrupt or NMI handler (they patch code and wait for every CPU);
 * they are serialised among themselves; each returns 0, or -1 after one
 * console line saying what was wrong (nothing changed then).
 */
#ifndef KERNEL_FTRACE_H
#define KERNEL_FTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ftrace_tracer {
	FTRACE_NOP = 0,		/* every site a NOP */
	FTRACE_FUNCTION,	/* event "function": ip <-parent */
	FTRACE_GRAPH,		/* events funcgraph_entry/exit */
	FTRACE_TRACERS
};

enum ftrace_list {
	FTRACE_FILTER = 0,	/* trace only these (empty: all) */
	FTRACE_NOTRACE,		/* never these */
	FTRACE_GRAPH_FUNCTION,	/* function_graph: only calls made below these (empty: all) */
	FTRACE_LISTS
};

#define FTRACE_STACK_FRAMES	63	/* shadow-stack frames per CPU and context level */

/* Boot CPU, after text_poke_init() and ACPI, before the APs: the site table. */
void ftrace_init(void);
/* Once the ring buffers exist: start the tracer ftrace= names. */
void ftrace_boot(void);

int ftrace_set_tracer(enum ftrace_tracer t);
enum ftrace_tracer ftrace_tracer(void);
const char *ftrace_tracer_name(enum ftrace_tracer t);
/* By name: nop, function, function_graph; -2 if unknown (not reported), else as above. */
int ftrace_set_tracer_by_name(const char *name);

/*
 * Set one list (comma list of names and globs; "" clears it). Items that
 * match no traceable function are left out, the others apply: 1, and why
 * names them. A list none of whose items matches changes nothing: -1, as
 * for a list too long or a change refused now (why says which). 0: all
 * applied. why may be NULL.
 */
int ftrace_set_list(enum ftrace_list which, const char *list, char *why, size_t cap);
const char *ftrace_list_get(enum ftrace_list which);
const char *ftrace_list_option(enum ftrace_list which);	/* "ftrace.filter", ... */
/* function_graph's depth limit: frames per context level; 0 = FTRACE_STACK_FRAMES. */
void ftrace_set_graph_depth(uint32_t depth);
uint32_t ftrace_graph_depth(void);	/* the limit now: 1..FTRACE_STACK_FRAMES */

/* The traceable functions: count, and the i-th's name, site and state. */
unsigned ftrace_site_count(void);
const char *ftrace_site_name(unsigned i);
uint64_t ftrace_site_addr(unsigned i);
bool ftrace_site_enabled(unsigned i);	/* holds a call now */
bool ftrace_site_selected(unsigned i);	/* the filters pick it */

/* Counters over all CPUs, for the shell and the tests. */
struct ftrace_stats {
	uint32_t sites;		/* in the table */
	uint32_t enabled;	/* holding a call now */
	uint64_t dropped;	/* boot: table entries outside the code, or duplicates */
	uint64_t refused;	/* sites whose bytes were not what the table said */
	uint64_t patches;	/* sites rewritten, since boot */
	uint64_t int3_hits;	/* CPUs that met a site mid-patch */
	uint64_t overrun;	/* graph entries not taken: the context's shadow stack was full */
	uint64_t recursion;	/* hooks entered again at a level they were running at */
	uint64_t stale;		/* shadow frames dropped: their function did not return through us */
	uint64_t nostack;	/* graph entries on a CPU without a shadow stack */
	uint64_t max_depth;	/* deepest shadow stack seen */
};
void ftrace_get_stats(struct ftrace_stats *st);
/* Frames on cpu's shadow stack of one context level now (tests: 0 when idle). */
uint32_t ftrace_graph_depth_now(unsigned cpu, unsigned level);
/* The site of the function called name, or 0. */
uint64_t ftrace_site_of(const char *name);

/*
 * For a backtrace: the return address a frame-pointer walk should print
 * for ret, read from the return slot at slot, given the context (CPU cpu,
 * level) the walk is in. ret is returned as it is unless it is
 * function_graph's return trampoline and that context's shadow stack st
 * holds the frame whose slot this is (frame sp == slot + 1); then the
 * address the trampoline will return to. *idx is the walk's place on st: 0 before its
 * first slot, kept between calls, so that the walk, going up the stack,
 * searches only frames older than the last one found (a tail call's two
 * frames share one slot: the older holds the real address). Any context,
 * also the panic path's with the CPU stopped elsewhere; reads only.
 */
uint64_t ftrace_graph_ret_addr(unsigned cpu, unsigned level, int *idx, uint64_t ret,
			       const uint64_t *slot);

#endif
