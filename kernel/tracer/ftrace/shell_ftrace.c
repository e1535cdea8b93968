/*
 * Shell commands of the function tracer: tracer (show or switch),
 * functions (list the traceable ones), ftrace (filters, depth, counters,
 * and the test workload).
 */
#include <stddef.h>
#include "kernel/console.h"
#include "kernel/ftrace.h"
#include "kernel/ftrace_sites.h"
#include "kernel/kstring.h"
#include "kernel/shell.h"
#include "ftrace_work.h"

static void show_stats(void)
{
	struct ftrace_stats st;

	ftrace_get_stats(&st);
	cprintf("ftrace: tracer=%s sites=%u enabled=%u refused=%llu patches=%llu int3_hits=%llu "
		"overrun=%llu recursion=%llu stale=%llu nostack=%llu max_depth=%llu\n",
		ftrace_tracer_name(ftrace_tracer()), st.sites, st.enabled,
		(unsigned long long)st.refused, (unsigned long long)st.patches,
		(unsigned long long)st.int3_hits, (unsigned long long)st.overrun,
		(unsigned long long)st.recursion, (unsigned long long)st.stale,
		(unsigned long long)st.nostack, (unsigned long long)st.max_depth);
	for (int w = 0; w < FTRACE_LISTS; w++)
		cprintf("%s=%s\n", ftrace_list_option((enum ftrace_list)w),
			ftrace_list_get((enum ftrace_list)w));
	cprintf("ftrace.graph_depth=%u\n", ftrace_graph_depth());
}

static int cmd_tracer(int argc, char **argv)
{
	if (argc > 2) {
		cprintf("error: usage: tracer [nop|function|function_graph]\n");
		return 1;
	}
	if (argc == 2) {
		int rc = ftrace_set_tracer_by_name(argv[1]);

		if (rc == -2)
			cprintf("error: tracer: unknown tracer '%.32s'; tracers are nop, function, "
				"function_graph\n", argv[1]);
		else if (rc)
			cprintf("error: tracer %.32s: the function tracer cannot change now\n",
				argv[1]);
		if (rc)
			return 1;
	}
	show_stats();
	return 0;
}
SHELL_COMMAND(tracer, .name = "tracer", .usage = "[nop|function|function_graph]",
	      .help = "show or switch the function tracer", .fn = cmd_tracer);

static int cmd_functions(int argc, char **argv)
{
	unsigned shown = 0, n = ftrace_site_count();

	if (argc > 2) {
		cprintf("error: usage: functions [glob]\n");
		return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		const char *name = ftrace_site_name(i);

		if (!name || (argc == 2 && !trace_glob_match(argv[1], name)))
			continue;
		cprintf("%s%s\n", name, ftrace_site_enabled(i) ? " [on]" :
			ftrace_site_selected(i) ? "" : " [off]");
		shown++;
	}
	if (argc == 2 && !shown) {
		cprintf("error: no traceable function matches %s\n", argv[1]);
		return 1;
	}
	cprintf("functions: %u of %u\n", shown, n);
	return 0;
}
SHELL_COMMAND(functions, .name = "functions", .usage = "[glob]",
	      .help = "list the traceable functions ([on]: traced now, [off]: filtered out)",
	      .fn = cmd_functions);

/*
 * bench: instructions per call of ftrace_work_leaf() under icount (a TSC
 * cycle is an instruction there), with the tracer off, function and
 * function_graph; the loop and the leaf included (subtract the off figure
 * of an FTRACE=0 kernel, where the leaf has no site, for the site alone).
 * The buffers keep recording (overwrite): what a traced call really costs.
 */
#define BENCH_CALLS	100000

static void bench_one(const char *name, uint32_t calls)
{
	uint64_t cycles = ftrace_work_loop(calls);

	cprintf("bench: test=ftrace tracer=%s site=%s calls=%u cycles=%llu cycles_per_call=%llu.%03llu\n",
		name, ftrace_site_of("ftrace_work_leaf") ? "yes" : "no", calls,
		(unsigned long long)cycles, (unsigned long long)(cycles / calls),
		(unsigned long long)(cycles % calls * 1000 / calls));
}

/* only: FTRACE_NOP for both tracers, else that one alone (a test reads its events back). */
static int ftrace_bench(enum ftrace_tracer only)
{
	char filter[FTRACE_LIST_MAX];
	enum ftrace_tracer was = ftrace_tracer();
	int rc = 0;

	memcpy(filter, ftrace_list_get(FTRACE_FILTER), sizeof(filter));
	ftrace_work_loop(1000);		/* warm: translated once */
	bench_one("off", BENCH_CALLS);
	if (!ftrace_site_of("ftrace_work_leaf"))
		return 0;		/* a kernel without sites: the reference */
	rc |= ftrace_set_tracer(FTRACE_NOP);
	rc |= ftrace_set_list(FTRACE_FILTER, "ftrace_work_leaf", NULL, 0);
	for (enum ftrace_tracer t = FTRACE_FUNCTION; t <= FTRACE_GRAPH; t++) {
		if (only != FTRACE_NOP && t != only)
			continue;
		rc |= ftrace_set_tracer(t);
		ftrace_work_loop(1000);
		bench_one(ftrace_tracer_name(t), BENCH_CALLS);
	}
	rc |= ftrace_set_tracer(FTRACE_NOP);
	rc |= ftrace_set_list(FTRACE_FILTER, filter, NULL, 0);
	rc |= ftrace_set_tracer(was);
	return rc ? 1 : 0;
}

static const char *const list_words[FTRACE_LISTS] = { "filter", "notrace", "graph_function" };

static int cmd_ftrace(int argc, char **argv)
{
	char why[2 * FTRACE_LIST_MAX + 96];
	int rc;

	if (argc == 1) {
		show_stats();
		return 0;
	}
	for (int w = 0; w < FTRACE_LISTS; w++) {
		if (strcmp(argv[1], list_words[w]))
			continue;
		if (argc != 3) {
			cprintf("error: usage: ftrace %s LIST|- (a comma list of names and globs; "
				"- clears it)\n", list_words[w]);
			return 1;
		}
		rc = ftrace_set_list((enum ftrace_list)w, strcmp(argv[2], "-") ? argv[2] : "", why,
				     sizeof(why));
		if (rc < 0) {
			cprintf("error: ftrace %s %.64s: %s\n", list_words[w], argv[2], why);
			return 1;
		}
		if (rc)
			cprintf("ftrace: %s: %s\n", list_words[w], why);
		show_stats();
		return 0;
	}
	if (!strcmp(argv[1], "bench") && argc == 2)
		return ftrace_bench(FTRACE_NOP);
	if (!strcmp(argv[1], "bench") && argc == 3 &&
	    (!strcmp(argv[2], "function") || !strcmp(argv[2], "function_graph")))
		return ftrace_bench(strcmp(argv[2], "function") ? FTRACE_GRAPH : FTRACE_FUNCTION);
	if (!strcmp(argv[1], "graph_depth")) {
		uint32_t depth = 0;
		const char *d = argc == 3 ? argv[2] : "";

		/* 0..FTRACE_STACK_FRAMES in decimal: at most two digits. */
		for (int i = 0; d[i] && i < 3; i++) {
			bool digit = d[i] >= '0' && d[i] <= '9';

			depth = digit ? depth * 10 + (uint32_t)(d[i] - '0') : 999;
		}
		if (argc != 3 || !*d || strlen(d) > 2 || depth > FTRACE_STACK_FRAMES) {
			unsigned max = FTRACE_STACK_FRAMES;

			cprintf("error: ftrace graph_depth %.32s: not a number from 0 to %u "
				"(0: all %u levels)\n", d, max, max);
			return 1;
		}
		ftrace_set_graph_depth(depth);
		show_stats();
		return 0;
	}
	if (!strcmp(argv[1], "work") && argc == 2) {
		ftrace_work_a(1);
		cprintf("ftrace: work: ftrace_work_a called\n");
		return 0;
	}
	cprintf("error: ftrace %.32s: not a form of ftrace; 'help ftrace' lists them\n", argv[1]);
	return 1;
}
SHELL_COMMAND(ftrace, .name = "ftrace",
	      .usage = "\tthe tracer's counters, lists and depth\n"
		       "filter LIST|-\ttrace only these functions (names and globs; -: all)\n"
		       "notrace LIST|-\tnever trace these (-: none)\n"
		       "graph_function LIST|-\tfunction_graph: only calls below these (-: all)\n"
		       "graph_depth N\tfunction_graph: levels recorded per context (0: all 63)\n"
		       "work\tcall ftrace_work_a, which calls b, which calls c\n"
		       "bench [function|function_graph]\tinstructions per traced call",
	      .help = "function tracer: filters, graph depth, counters, test calls",
	      .fn = cmd_ftrace);
