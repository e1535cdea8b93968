/*
 * The function tracer's events as text: formats in <trace/text_ftrace.h>.
 * Portable (kernel and host); only the catalog's descriptions are used.
 * A leaf of the text dump: trace/text.c calls it, it calls nothing there
 * (the context names and pids it shares with text.c are <trace/events.h>'s).
 */
#include <lib/format.h>
#include <trace/text_ftrace.h>

#define GRAPH_INDENT_MAX	64	/* depths past this print at this indent */

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return false;
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

enum trace_ftrace_kind trace_ftrace_kind(const struct trace_event_def *d)
{
	if (!d || !str_eq(d->system, "ftrace"))
		return TRACE_FTRACE_NONE;
	if (str_eq(d->name, "function"))
		return TRACE_FTRACE_FUNCTION;
	if (str_eq(d->name, "funcgraph_entry"))
		return TRACE_FTRACE_ENTRY;
	if (str_eq(d->name, "funcgraph_exit"))
		return TRACE_FTRACE_EXIT;
	return TRACE_FTRACE_NONE;
}

uint64_t trace_ftrace_field(const struct trace_event_view *v, const char *name)
{
	for (uint32_t i = 0; v->def && i < v->def->nfields; i++) {
		const struct trace_field_def *f = &v->def->fields[i];

		if (str_eq(f->name, name) && (f->kind == TRACE_FIELD_INT || f->kind == TRACE_FIELD_SYM))
			return trace_field_value(v, f);
	}
	return 0;
}

/* "name" (offset 0) or "name+0xoff", or "0x<hex>" without a symbol. */
static int put_sym(char *buf, size_t size, const struct trace_symbols *syms, uint64_t addr,
		   bool bare)
{
	uint64_t off = 0;
	const char *s = syms && syms->lookup ? syms->lookup(syms->ctx, addr, &off) : 0;

	if (!s)
		return ksnprintf(buf, size, "0x%llx", (unsigned long long)addr);
	if (bare && !off)
		return ksnprintf(buf, size, "%s", s);
	return ksnprintf(buf, size, "%s+0x%llx", s, (unsigned long long)off);
}

int trace_ftrace_function(const struct trace_event_view *v, const struct trace_symbols *syms,
			  char *buf, size_t size)
{
	char a[96], b[96];

	put_sym(a, sizeof(a), syms, trace_ftrace_field(v, "ip"), true);
	put_sym(b, sizeof(b), syms, trace_ftrace_field(v, "parent_ip"), false);
	return ksnprintf(buf, size, "%s <-%s", a, b);
}

char trace_ftrace_mark(uint64_t dur_ns)
{
	/* Linux's trace_find_mark(): the first bound the duration exceeds. */
	static const struct { uint64_t ns; char sym; } marks[] = {
		{ 1000000000ull, '$' }, { 100000000ull, '@' }, { 10000000ull, '*' },
		{ 1000000ull, '#' }, { 100000ull, '!' }, { 10000ull, '+' },
	};

	for (unsigned i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (dur_ns > marks[i].ns)
			return marks[i].sym;
	return ' ';
}

/*
 * The duration column as Linux's trace_print_graph_duration() fills it:
 * microseconds, then as many nanosecond digits as keep the number within
 * 7 digits and the point, " us ", and spaces up to 12 characters.
 */
static void graph_duration(char *buf, size_t size, uint64_t d)
{
	char us[24], ns[8];
	int len = ksnprintf(us, sizeof(us), "%llu", (unsigned long long)(d / 1000));
	int keep = 7 - len;	/* nanosecond digits that fit: 8 - len - 1 */

	ns[0] = 0;
	if (len < 7) {
		ksnprintf(ns, sizeof(ns), ".%03llu", (unsigned long long)(d % 1000));
		if (keep < 3)
			ns[1 + keep] = 0;
		len += (int)(1 + (keep < 3 ? keep : 3));
	}
	ksnprintf(buf, size, "%s%s us %*s", us, ns, len < 8 ? 8 - len : 0, "");
}

int trace_ftrace_graph(const struct trace_event_view *ev, const struct trace_event_view *leaf,
		       uint32_t cpu, int64_t ns, int64_t dur_ns,
		       const struct trace_symbols *syms, char *buf, size_t size)
{
	enum trace_ftrace_kind kind = trace_ftrace_kind(ev->def);
	uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	uint64_t depth = trace_ftrace_field(ev, "depth");
	uint32_t indent = 2 * (uint32_t)(depth < GRAPH_INDENT_MAX ? depth : GRAPH_INDENT_MAX);
	char secs[24], dur[40], fn[96], task[24];
	int tl, pad;

	ksnprintf(secs, sizeof(secs), "%s%llu", ns < 0 ? "-" : "",
		  (unsigned long long)(mag / 1000000000u));
	if (kind == TRACE_FTRACE_EXIT || leaf) {
		uint64_t d = dur_ns < 0 ? 0 : (uint64_t)dur_ns;
		char d12[32];

		graph_duration(d12, sizeof(d12), d);
		ksnprintf(dur, sizeof(dur), "%c %s", trace_ftrace_mark(d), d12);
	} else {
		ksnprintf(dur, sizeof(dur), "%14s", "");
	}
	/* funcgraph-proc's column: the task centred in 14 characters. */
	tl = ksnprintf(task, sizeof(task), "%s/%u-%u", trace_ctx_name(ev->ctx), cpu,
		       trace_ctx_pid(cpu, ev->ctx));
	pad = tl < 14 ? 14 - tl : 0;
	if (kind == TRACE_FTRACE_EXIT)
		fn[0] = 0;
	else
		put_sym(fn, sizeof(fn), syms, trace_ftrace_field(ev, "func"), true);
	return ksnprintf(buf, size, "%5s.%09llu |   %u) %*s%s%*s | %s|  %*s%s%s", secs,
			 (unsigned long long)(mag % 1000000000u), cpu, pad / 2, "", task,
			 pad - pad / 2, "", dur, (int)indent, "",
			 kind == TRACE_FTRACE_EXIT ? "}" : fn,
			 kind == TRACE_FTRACE_EXIT ? "" : leaf ? "();" : "() {");
}
