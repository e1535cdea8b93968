/*
 * trace.dat writer: a decoded dump as the file trace-cmd records, so that
 * `trace-cmd report` and KernelShark read baretrace's traces as they read
 * Linux's.  File version 6 (trace-cmd.dat.v6(5)): the last version without
 * sections and compression, which trace-cmd 3.x still reads; see
 * docs/trace-dat.md for why and for what trace-cmd shows.
 *
 * Layout (little-endian, longs of 8 bytes):
 *
 *   "\x17\x08\x44tracing6\0"  endian 0, long size 8, u32 page size
 *   "header_page\0"  u64 size, text   ftrace's page header: u64 timestamp,
 *                                     local_t commit (8 bytes), data
 *   "header_event\0" u64 size, text   the record header (type_len:5,
 *                                     time_delta:27)
 *   u32 events, per event u64 size +  ftrace's own events: the function
 *     the format file                 tracer's, as Linux's (tdat_ftrace_record)
 *   u32 systems, per system: name\0, u32 events, per event u64 size + the
 *                                     event's format file (below)
 *   u32 size, kallsyms                the capture's symbol table
 *   u32 size, printk_formats          its trace_printk formats
 *   u64 size, saved_cmdlines          the pid of each (CPU, context)
 *   u32 nr_cpus
 *   "options  \0", options, u16 0     UNAME (what the dump is), CPUSTAT
 *                                     per CPU (counters, clock trust)
 *   "flyrecord\0", per CPU u64 offset, u64 size
 *   padding to a page boundary, then each CPU's pages
 *
 * Records: each event keeps the capture's description.  The payload of
 * ftrace's record is its 8-byte common header (u16 common_type = the
 * event's id, u8 common_flags: the context as ftrace's irq bits, u8
 * common_preempt_count 0, int common_pid), then baretrace's fixed fields
 * at their offsets plus 4 (the 4-byte baretrace header dropped, 8 added),
 * then the strings.  Fields are written as the text shows them, so that
 * trace-cmd prints the same: char[N] and strings with bytes outside
 * printable ASCII as '?', a cut string with "..." after it (F_STR becomes
 * ftrace's __data_loc char[], offset | length << 16), and trace_printk's
 * arguments as the formatted message (a __data_loc string in place of the
 * binary arguments).  Two events of the file's own describe what the text
 * shows outside events: baretrace:unknown (an id or payload that matches
 * no description) and baretrace:malformed_page (the rest of a page that
 * stopped making sense).
 *
 * Tasks: ftrace names the task of each event; here the writer is a
 * context of a CPU, so each (CPU, context) is a pid of its own, pid =
 * 1 + 4 * cpu + level, named "<context>/<cpu>" ("irq/2"), as Linux's
 * per-CPU threads are named.  Pid 0, which trace-cmd calls <idle>, is
 * not used.
 *
 * Times: ftrace pages carry nanoseconds, each CPU's cycles converted with
 * that CPU's own conversion, as the text does, so the per-CPU offsets are
 * in the stamps themselves and no trace-cmd clock option is needed.
 * ftrace stamps are unsigned: if any time is negative, every time is
 * shifted by the smallest whole number of seconds that makes them all
 * non-negative, and the shift is reported (err, UNAME option).
 *
 * Pages: records are packed into ftrace pages of the file's page size
 * (baretrace's own, at least 4 KiB) in each CPU's buffer order.  A page
 * starts with its first record's stamp (delta 0); a delta of 2^27 ns or
 * more is a time extend record.  A new page starts when the page is full,
 * when a stamp goes back (a damaged dump; ftrace deltas cannot be
 * negative), and after lost events: the count goes in the new page's
 * header (commit's missed-events and missed-stored flags, the count
 * stored after the data), which trace-cmd prints as "CPU:N [M EVENTS
 * DROPPED]" before that page's first event.  Every page keeps room for
 * that count.  Losses with no event after them on their CPU are not
 * shown: trace-cmd prints a loss only with an event.
 *
 * Function events: the function tracer's three events are written as
 * ftrace's function, funcgraph_entry and funcgraph_exit, with Linux's
 * formats in the ftrace events section (tdat_ftrace_record()).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "trace_dat.h"
#include "damage.h"

#define TDAT_VERSION		"6"
#define TDAT_PAGE_MIN		4096u	/* smallest page written */
#define TDAT_PAGE_HDR		16u	/* u64 timestamp + u64 commit */
#define TDAT_MISSED_ROOM	8u	/* the missed-events count after the data */
#define TDAT_COMMON		8u	/* common_type, flags, preempt_count, pid */

/* kallsyms' last line: where the capture's symbol table ends (the kernel's __text_end). */
#define TDAT_SYMS_END		"__text_end"

/* Record header: type_len in bits 0..4, time_delta in 5..31. */
#define TDAT_TYPE_BITS		5
#define TDAT_DELTA_BITS		27
#define TDAT_TYPE_EXTEND	30u	/* time extend: delta bits 27..58 follow */
#define TDAT_TYPE_DATA_MAX	28u	/* inline data lengths: 1..28 words */
#define TDAT_DELTA_MAX		(1ull << TDAT_DELTA_BITS)
#define TDAT_EXTEND_MAX		(1ull << (TDAT_DELTA_BITS + 32))

/* commit's flags (ftrace's RB_MISSED_EVENTS and RB_MISSED_STORED). */
#define TDAT_MISSED_EVENTS	(1ull << 31)
#define TDAT_MISSED_STORED	(1ull << 30)

/* common_flags (ftrace's TRACE_FLAG_*), by context level. */
#define TDAT_FLAG_HARDIRQ	0x08u
#define TDAT_FLAG_SOFTIRQ	0x10u
#define TDAT_FLAG_NMI		0x40u

/* Options of trace-cmd's v6 header. */
#define TDAT_OPT_DONE		0
#define TDAT_OPT_CPUSTAT	2
#define TDAT_OPT_UNAME		5

/* ---- a growable byte buffer; an allocation failure is kept, not fatal ---- */

struct tbuf {
	uint8_t *p;		/* bytes */
	size_t len;		/* used */
	size_t cap;		/* allocated */
	bool oom;		/* an allocation failed: the contents are short */
};

static uint8_t *tb_room(struct tbuf *b, size_t n)
{
	if (b->oom)
		return NULL;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	return b->p + b->len;
}

static void tb_put(struct tbuf *b, const void *v, size_t n)
{
	uint8_t *p = n ? tb_room(b, n) : NULL;	/* an empty section may have no bytes at all */

	if (p) {
		memcpy(p, v, n);
		b->len += n;
	}
}

static void tb_zeros(struct tbuf *b, size_t n)
{
	uint8_t *p = tb_room(b, n);

	if (p) {
		memset(p, 0, n);
		b->len += n;
	}
}

static void tb_u16(struct tbuf *b, uint16_t v) { tb_put(b, &v, 2); }
static void tb_u32(struct tbuf *b, uint32_t v) { tb_put(b, &v, 4); }
static void tb_u64(struct tbuf *b, uint64_t v) { tb_put(b, &v, 8); }
static void tb_str(struct tbuf *b, const char *s) { tb_put(b, s, strlen(s) + 1); }

__attribute__((format(printf, 2, 3)))
static void tb_printf(struct tbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !tb_room(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* ---- events ---- */

/* One event as the file describes it. */
struct tdat_event {
	const struct trace_event_def *def; /* its description */
	uint32_t id;			/* common_type */
	int map;			/* TDAT_MAP_*: written as one of ftrace's own */
};

/*
 * The function tracer's events, written as ftrace's own (the "ftrace"
 * events section, Linux's formats and record layouts), so that trace-cmd
 * prints them with its function and function_graph handlers:
 *   function         ip @8, parent_ip @16                           24 bytes
 *   funcgraph_entry  func @8, int depth @16                         24
 *   funcgraph_exit   func @8, int depth @16, overrun @20,
 *                    calltime @24, rettime @32 (ns, as the stamps)  40
 * calltime is the exit's stamp less its cycles, converted with the CPU's
 * clock as the text converts it, so rettime - calltime is the text's
 * duration to the nanosecond.
 */
enum { TDAT_MAP_NONE, TDAT_MAP_FUNCTION, TDAT_MAP_ENTRY, TDAT_MAP_EXIT };

static const char *const ftrace_formats[] = {
	[TDAT_MAP_FUNCTION] =
	"\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long parent_ip;\toffset:16;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \" %ps <-- %ps\", (void *)REC->ip, (void *)REC->parent_ip\n",
	[TDAT_MAP_ENTRY] =
	"\tfield:unsigned long func;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:int depth;\toffset:16;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"--> %ps (%d)\", (void *)REC->func, REC->depth\n",
	[TDAT_MAP_EXIT] =
	"\tfield:unsigned long func;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:int depth;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned int overrun;\toffset:20;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long long calltime;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long long rettime;\toffset:32;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"<-- %ps (%d) (start: %llx  end: %llx) over: %d\", (void *)REC->func, "
	"REC->depth, REC->calltime, REC->rettime, REC->overrun\n",
};

/* The field of d named name, of an integer kind, or NULL. */
static const struct trace_field_def *num_field(const struct trace_event_def *d, const char *name)
{
	for (uint32_t i = 0; i < d->nfields; i++)
		if (!strcmp(d->fields[i].name, name) && (d->fields[i].kind == TRACE_FIELD_INT ||
							 d->fields[i].kind == TRACE_FIELD_SYM))
			return &d->fields[i];
	return NULL;
}

/* Which of ftrace's events d is (by system, name and the fields it needs). */
static int ftrace_map(const struct trace_event_def *d)
{
	if (strcmp(d->system, "ftrace"))
		return TDAT_MAP_NONE;
	if (!strcmp(d->name, "function") && num_field(d, "ip") && num_field(d, "parent_ip"))
		return TDAT_MAP_FUNCTION;
	if (!strcmp(d->name, "funcgraph_entry") && num_field(d, "func") && num_field(d, "depth"))
		return TDAT_MAP_ENTRY;
	if (!strcmp(d->name, "funcgraph_exit") && num_field(d, "func") && num_field(d, "depth") &&
	    num_field(d, "cycles") && num_field(d, "overrun"))
		return TDAT_MAP_EXIT;
	return TDAT_MAP_NONE;
}

/* The events the file describes besides the capture's. */
static const struct trace_field_def unknown_fields[] = {
	{ .name = "id", .kind = TRACE_FIELD_INT, .offset = 4, .size = 4 },
	{ .name = "bytes", .kind = TRACE_FIELD_INT, .offset = 8, .size = 4 },
};
static const struct trace_event_def unknown_def = {
	.fixed = 12, .nfields = 2, .system = "baretrace", .name = "unknown",
	.fields = unknown_fields,
};
static const struct trace_field_def malformed_fields[] = {
	{ .name = "pos", .kind = TRACE_FIELD_INT, .offset = 4, .size = 8 },
	{ .name = "offset", .kind = TRACE_FIELD_INT, .offset = 12, .size = 4 },
};
static const struct trace_event_def malformed_def = {
	.fixed = 16, .nfields = 2, .system = "baretrace", .name = "malformed_page",
	.fields = malformed_fields,
};

/* The writer's state. */
struct tdat {
	const struct dump_result *r;
	const struct trace_catalog *cat;
	struct trace_symbols syms;
	struct tdat_event *events;	/* the catalog's, then unknown, malformed */
	uint32_t nr_events;
	uint32_t unknown_id;		/* ids of the file's own two events */
	uint32_t malformed_id;
	uint32_t page_size;		/* of the file's pages */
	uint64_t bias_ns;		/* added to every time */
	uint64_t bias_s;		/* ... in seconds */
	uint8_t rec[TDAT_COMMON + 2 * RB_MAX_PAYLOAD + 64]; /* one record being made */
};

/* The C type ftrace's format names for a field. */
static void field_decl(struct tbuf *b, const struct trace_field_def *f)
{
	static const char *const uns[] = { [1] = "u8", [2] = "u16", [4] = "u32", [8] = "u64" };
	static const char *const sig[] = { [1] = "s8", [2] = "s16", [4] = "s32", [8] = "s64" };

	switch (f->kind) {
	case TRACE_FIELD_INT:
		if (f->display == TRACE_DISPLAY_BOOL && f->size == 1)
			tb_printf(b, "bool %s", f->name);
		else
			tb_printf(b, "%s %s", f->is_signed ? sig[f->size] : uns[f->size], f->name);
		break;
	case TRACE_FIELD_SYM:
		tb_printf(b, "unsigned long %s", f->name);
		break;
	case TRACE_FIELD_ENUM:
		tb_printf(b, "u32 %s", f->name);
		break;
	case TRACE_FIELD_CHARS:
		tb_printf(b, "char %s[%u]", f->name, f->size);
		break;
	default:		/* STR, BPRINT: a string after the fixed part */
		tb_printf(b, "__data_loc char[] %s", f->name);
		break;
	}
}

/* A C string literal's body: s with '"' and '\' escaped. */
static void put_quoted(struct tbuf *b, const char *s)
{
	for (; *s; s++)
		tb_printf(b, "%s%c", *s == '"' || *s == '\\' ? "\\" : "", *s);
}

/* The conversion that prints f as the text does. */
static const char *field_conv(const struct trace_field_def *f)
{
	switch (f->kind) {
	case TRACE_FIELD_INT:
		if (f->display == TRACE_DISPLAY_HEX)
			return f->size == 8 ? "0x%llx" : "0x%x";
		/*
		 * libtraceevent reads a field's bits without sign extension
		 * and casts them as the length modifier says: hh and h make
		 * a narrow negative value negative again.
		 */
		if (f->is_signed)
			return f->size == 8 ? "%lld" : f->size == 2 ? "%hd" : f->size == 1 ? "%hhd" : "%d";
		return f->size == 8 ? "%llu" : "%u";
	case TRACE_FIELD_SYM:
		return "%pS";
	case TRACE_FIELD_ENUM:
		return "%s%.*u";
	default:
		return "%s";
	}
}

/* A condition true when f's value has a name in its table. */
static void enum_known(struct tbuf *b, const struct trace_field_def *f)
{
	uint32_t i, n = 0;

	for (i = 0; i < f->nenums; i++)
		if (f->enums[i].name)
			tb_printf(b, "%sREC->%s == %llu", n++ ? " || " : "", f->name,
				  (unsigned long long)f->enums[i].value);
	if (!n)
		tb_printf(b, "0");
}

/* The argument(s) of f's conversion in the print fmt. */
static void field_arg(struct tbuf *b, const struct trace_field_def *f)
{
	uint32_t i;

	switch (f->kind) {
	case TRACE_FIELD_SYM:
		tb_printf(b, "(void *)REC->%s", f->name);
		break;
	case TRACE_FIELD_ENUM:
		/*
		 * "%s%.*u": the name if the table has one, else nothing and
		 * the number (__print_symbolic alone prints 0x<hex> then).
		 */
		tb_printf(b, "(");
		enum_known(b, f);
		tb_printf(b, ") ? __print_symbolic(REC->%s", f->name);
		for (i = 0; i < f->nenums; i++) {
			if (!f->enums[i].name)
				continue;
			tb_printf(b, ", { %llu, \"", (unsigned long long)f->enums[i].value);
			put_quoted(b, f->enums[i].name);
			tb_printf(b, "\" }");
		}
		tb_printf(b, ") : \"\", (");
		enum_known(b, f);
		tb_printf(b, ") ? 0 : 1, (");
		enum_known(b, f);
		tb_printf(b, ") ? 0 : REC->%s", f->name);
		break;
	case TRACE_FIELD_STR:
	case TRACE_FIELD_BPRINT:
		tb_printf(b, "__get_str(%s)", f->name);
		break;
	default:
		tb_printf(b, "REC->%s", f->name);
		break;
	}
}

/* One event's format file, as tracefs's events/<system>/<name>/format. */
static void format_file(struct tbuf *b, const struct tdat_event *e)
{
	const struct trace_event_def *d = e->def;
	uint32_t i;

	tb_printf(b, "name: %s\nID: %u\nformat:\n", d->name, e->id);
	tb_printf(b, "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		  "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		  "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n");
	if (e->map) {
		tb_printf(b, "%s", ftrace_formats[e->map]);
		return;
	}
	for (i = 0; i < d->nfields; i++) {
		const struct trace_field_def *f = &d->fields[i];

		tb_printf(b, "\tfield:");
		field_decl(b, f);
		tb_printf(b, ";\toffset:%u;\tsize:%u;\tsigned:%u;\n", f->offset + 4u, f->size,
			  f->kind == TRACE_FIELD_INT && f->is_signed ? 1u : 0u);
	}
	tb_printf(b, "\nprint fmt: \"");
	if (trace_event_is_bprint(d)) {
		/* trace_printk: "<function>: <message>", as the text prints it. */
		tb_printf(b, "%%ps: %%s\", (void *)REC->%s, __get_str(%s)\n", d->fields[0].name,
			  d->fields[2].name);
		return;
	}
	for (i = 0; i < d->nfields; i++)
		tb_printf(b, "%s%s=%s", i ? " " : "", d->fields[i].name, field_conv(&d->fields[i]));
	tb_printf(b, "\"");
	for (i = 0; i < d->nfields; i++) {
		tb_printf(b, ", ");
		field_arg(b, &d->fields[i]);
	}
	tb_printf(b, "\n");
}

/* The catalog's events and the file's two, with ids for the two that no event has. */
static int collect_events(struct tdat *t)
{
	uint32_t id, n = 0, free_id[2], nr_free = 0;

	t->events = calloc(t->cat->nr_ids + 2, sizeof(*t->events));
	if (!t->events)
		return -1;
	for (id = 1; id < t->cat->nr_ids && id <= UINT16_MAX; id++) {
		const struct trace_event_def *d = trace_catalog_get(t->cat, id);

		if (d)
			t->events[n++] = (struct tdat_event){ d, id, ftrace_map(d) };
	}
	/* The highest ids no event of the capture uses (common_type is a u16). */
	for (id = UINT16_MAX; id > 0 && nr_free < 2; id--)
		if (!trace_catalog_get(t->cat, id))
			free_id[nr_free++] = id;
	if (nr_free < 2)
		return -1;
	t->unknown_id = free_id[0];
	t->malformed_id = free_id[1];
	t->events[n++] = (struct tdat_event){ &unknown_def, t->unknown_id, TDAT_MAP_NONE };
	t->events[n++] = (struct tdat_event){ &malformed_def, t->malformed_id, TDAT_MAP_NONE };
	t->nr_events = n;
	return 0;
}

/* e's format file, sized (u64), made in fmt (reused). */
static void put_format(struct tbuf *b, struct tbuf *fmt, const struct tdat_event *e)
{
	fmt->len = 0;
	format_file(fmt, e);
	b->oom |= fmt->oom;
	tb_u64(b, fmt->len);
	tb_put(b, fmt->p, fmt->len);
}

/* The ftrace events section: the events written as ftrace's own. */
static void put_ftrace_events(struct tbuf *b, const struct tdat *t)
{
	struct tbuf fmt = { 0 };
	uint32_t i, n = 0;

	for (i = 0; i < t->nr_events; i++)
		n += t->events[i].map != TDAT_MAP_NONE;
	tb_u32(b, n);
	for (i = 0; i < t->nr_events; i++) {
		if (!t->events[i].map)
			continue;
		put_format(b, &fmt, &t->events[i]);
	}
	free(fmt.p);
}

/* Event k's system in the event format section, NULL if it is written as ftrace's. */
static const char *sys_of(const struct tdat *t, uint32_t k)
{
	return t->events[k].map ? NULL : t->events[k].def->system;
}

static bool same_sys(const struct tdat *t, uint32_t j, uint32_t k)
{
	return sys_of(t, j) && sys_of(t, k) && !strcmp(sys_of(t, j), sys_of(t, k));
}

/* The event format section: systems in the order they first appear. */
static void put_systems(struct tbuf *b, const struct tdat *t)
{
	struct tbuf fmt = { 0 };
	uint32_t i, j, k, nr_sys = 0;

	for (i = 0; i < t->nr_events; i++) {
		if (!sys_of(t, i))
			continue;
		for (j = 0; j < i && !same_sys(t, j, i); j++)
			;
		nr_sys += j == i;
	}
	tb_u32(b, nr_sys);
	for (i = 0; i < t->nr_events; i++) {
		const char *sys = sys_of(t, i);
		uint32_t count = 0;

		if (!sys)
			continue;
		for (j = 0; j < i && !same_sys(t, j, i); j++)
			;
		if (j < i)
			continue;	/* written with its first event */
		for (k = i; k < t->nr_events; k++)
			count += same_sys(t, k, i);
		tb_str(b, sys);
		tb_u32(b, count);
		for (k = i; k < t->nr_events; k++) {
			if (!same_sys(t, k, i))
				continue;
			put_format(b, &fmt, &t->events[k]);
		}
	}
	free(fmt.p);
}

/* ---- the header ---- */

static const char header_page_fmt[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:%u;\tsigned:1;\n";

static const char header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n"
	"\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

/* A section of text preceded by its size in 4 or 8 bytes. */
static void put_sized(struct tbuf *b, const struct tbuf *text, unsigned size_bytes)
{
	if (size_bytes == 8)
		tb_u64(b, text->len);
	else
		tb_u32(b, (uint32_t)text->len);
	tb_put(b, text->p, text->len);
}

static void put_kallsyms(struct tbuf *b, const struct tdat *t)
{
	const struct trace_symtab *s = t->r->syms;
	struct tbuf k = { 0 };
	uint32_t i;

	for (i = 0; s && i < s->count; i++)
		tb_printf(&k, "%016llx T %s\n", (unsigned long long)s->addrs[i], s->names[i]);
	/*
	 * libtraceevent names an address by the symbol below it only if
	 * one follows: this marker ends the last symbol where the table
	 * does.  Being last, it names only its own address, which the
	 * text prints as a number ("__text_end+0x0" here).
	 */
	if (s && s->count)
		tb_printf(&k, "%016llx T %s\n", (unsigned long long)s->end, TDAT_SYMS_END);
	b->oom |= k.oom;
	put_sized(b, &k, 4);
	free(k.p);
}

/* printk_formats: `0x<addr> : "<format>"`, the format escaped as C. */
static void put_printk(struct tbuf *b, const struct tdat *t)
{
	struct tbuf k = { 0 };
	uint32_t i;

	for (i = 0; i < t->r->nr_fmts; i++) {
		const char *s = t->r->fmt_texts[i];

		tb_printf(&k, "0x%llx : \"", (unsigned long long)t->r->fmt_addrs[i]);
		for (; *s; s++) {
			if (*s == '\n')
				tb_printf(&k, "\\n");
			else if (*s == '\t')
				tb_printf(&k, "\\t");
			else
				tb_printf(&k, "%s%c", *s == '"' || *s == '\\' ? "\\" : "", *s);
		}
		tb_printf(&k, "\"\n");
	}
	b->oom |= k.oom;
	put_sized(b, &k, 4);
	free(k.p);
}

static void put_cmdlines(struct tbuf *b, const struct tdat *t)
{
	struct tbuf k = { 0 };
	uint32_t c, ctx;

	for (c = 0; c < t->r->nr_cpus; c++)
		for (ctx = 0; ctx < 4; ctx++)
			tb_printf(&k, "%u %s/%u\n", trace_ctx_pid(c, ctx), trace_ctx_name(ctx), c);
	b->oom |= k.oom;
	put_sized(b, &k, 8);
	free(k.p);
}

static const char *clock_word(uint32_t state)
{
	static const char *const words[] = {
		[TRACE_CLOCK_TRUSTED] = "trusted", [TRACE_CLOCK_UNTRUSTED] = "untrusted",
		[TRACE_CLOCK_MISSING] = "missing", [TRACE_CLOCK_INVALID] = "invalid",
	};

	return state <= TRACE_CLOCK_INVALID ? words[state] : "invalid";
}

static void put_option(struct tbuf *b, uint16_t id, const struct tbuf *text)
{
	tb_u16(b, id);
	tb_u32(b, (uint32_t)text->len + 1);
	tb_put(b, text->p, text->len);
	tb_zeros(b, 1);
}

/* UNAME: what the dump is; CPUSTAT per CPU: its counters and clock, as --stat shows. */
static void put_options(struct tbuf *b, const struct tdat *t)
{
	const struct dump_result *r = t->r;
	struct tbuf o = { 0 };
	char damaged[512];
	uint64_t transit;
	uint32_t c, k;

	tb_put(b, "options  ", 10);
	tb_printf(&o, "baretrace dump %u of %u (id %u): %u CPUs, tsc_hz=%llu, %s%s",
		  r->index + 1, r->nr_dumps, r->dump_id, r->nr_cpus,
		  (unsigned long long)r->begin.tsc_hz,
		  dump_damage_note(r, damaged, sizeof(damaged)) ? "damaged: " : "complete",
		  damaged);
	if (t->bias_s)
		tb_printf(&o, ", times shifted by +%llu s", (unsigned long long)t->bias_s);
	if (r->has_calib)
		tb_printf(&o, ", calibration disputed: %s used, %s left out, %llu ppb apart; "
			  "tsc_err_ppb=%llu covers every reference, %llu if the majority is right",
			  r->calib.used, r->calib.left_out,
			  (unsigned long long)r->calib.spread_ppb,
			  (unsigned long long)r->calib.err_ppb,
			  (unsigned long long)r->calib.vote_err_ppb);
	put_option(b, TDAT_OPT_UNAME, &o);
	for (c = 0; c < r->nr_cpus; c++) {
		const struct dump_cpu *dc = &r->cpus[c];
		const struct dump_stats *st = &dc->stats;

		o.len = 0;
		tb_printf(&o, "CPU: %u\n", c);
		if (dc->has_stats)
			tb_printf(&o, "entries: %llu\noverrun: %llu\ncommit overrun: %llu\n"
				  "bytes: %llu\ndropped events: %llu\nread events: %llu\n"
				  "lost events: %llu\n", (unsigned long long)st->in_buffer,
				  (unsigned long long)st->overrun,
				  (unsigned long long)st->commit_overrun,
				  (unsigned long long)st->bytes, (unsigned long long)st->dropped,
				  (unsigned long long)st->read, (unsigned long long)st->lost);
		else
			tb_printf(&o, "stats: missing\n");
		transit = 0;	/* frames missing from the capture, apart from "lost events" */
		for (k = 0; k < dc->nr_pages; k++)
			transit += dump_transit_lost(dc, k);
		if (transit)
			tb_printf(&o, "lost in transit: %llu\n", (unsigned long long)transit);
		tb_printf(&o, "clock: %s%s%s\n", clock_word(dc->clock_state),
			  dc->clock_note[0] ? ": " : "", dc->clock_note);
		if (dc->has_trust)	/* trusted before it: trace.dat has no per-event flag */
			tb_printf(&o, "clock untrusted from: %lld ns\n",
				  (long long)dc->trust.from_ns + (long long)t->bias_ns);
		put_option(b, TDAT_OPT_CPUSTAT, &o);
	}
	b->oom |= o.oom;
	free(o.p);
	tb_u16(b, TDAT_OPT_DONE);
}

/* ---- records and pages ---- */

/* One CPU's pages as they are being packed. */
struct tdat_pages {
	struct tbuf out;	/* the CPU's data: whole pages */
	uint32_t page_size;	/* bytes of each */
	bool open;		/* a page is being filled: the last one in out */
	uint32_t used;		/* its data bytes */
	uint64_t last;		/* its last stamp */
	uint64_t missed;	/* events lost before the next record */
	uint64_t page_missed;	/* ... before the open page */
};

static void page_close(struct tdat_pages *pg)
{
	uint8_t *page;
	uint64_t commit = pg->used;

	if (!pg->open || pg->out.oom)
		return;
	page = pg->out.p + pg->out.len - pg->page_size;
	if (pg->page_missed) {
		commit |= TDAT_MISSED_EVENTS | TDAT_MISSED_STORED;
		memcpy(page + TDAT_PAGE_HDR + pg->used, &pg->page_missed, 8);
	}
	memcpy(page + 8, &commit, 8);
	pg->open = false;
}

static void page_open(struct tdat_pages *pg, uint64_t ts)
{
	page_close(pg);
	tb_zeros(&pg->out, pg->page_size);
	if (pg->out.oom)
		return;
	memcpy(pg->out.p + pg->out.len - pg->page_size, &ts, 8);
	pg->open = true;
	pg->used = 0;
	pg->last = ts;
	pg->page_missed = pg->missed;
	pg->missed = 0;
}

/* Bytes a record of len payload bytes takes after a delta. */
static uint32_t record_size(uint64_t delta, uint32_t len)
{
	return (delta >= TDAT_DELTA_MAX ? 8u : 0u) + (len <= 4 * TDAT_TYPE_DATA_MAX ? 4u : 8u) + len;
}

/* Append one record (len a multiple of 4, at most a page's room) at stamp ts. */
static void page_add(struct tdat_pages *pg, uint64_t ts, const uint8_t *rec, uint32_t len)
{
	uint32_t room = pg->page_size - TDAT_PAGE_HDR - TDAT_MISSED_ROOM;
	uint64_t delta;
	uint8_t *p;

	if (record_size(TDAT_EXTEND_MAX - 1, len) > room)
		return;		/* cannot happen: records are below 2 KiB, pages 4 KiB */
	if (!pg->open || pg->missed || ts < pg->last || ts - pg->last >= TDAT_EXTEND_MAX ||
	    pg->used + record_size(ts - pg->last, len) > room)
		page_open(pg, ts);
	if (!pg->open)
		return;
	delta = ts - pg->last;
	p = pg->out.p + pg->out.len - pg->page_size + TDAT_PAGE_HDR + pg->used;
	if (delta >= TDAT_DELTA_MAX) {
		uint32_t w[2] = {
			TDAT_TYPE_EXTEND | (uint32_t)(delta & (TDAT_DELTA_MAX - 1)) << TDAT_TYPE_BITS,
			(uint32_t)(delta >> TDAT_DELTA_BITS),
		};
		memcpy(p, w, 8);
		p += 8;
		delta = 0;
	}
	if (len <= 4 * TDAT_TYPE_DATA_MAX) {
		uint32_t w = len / 4 | (uint32_t)delta << TDAT_TYPE_BITS;
		memcpy(p, &w, 4);
		p += 4;
	} else {
		uint32_t w[2] = { (uint32_t)delta << TDAT_TYPE_BITS, len + 4 };
		memcpy(p, w, 8);
		p += 8;
	}
	memcpy(p, rec, len);
	pg->used = (uint32_t)(p + len - (pg->out.p + pg->out.len - pg->page_size) - TDAT_PAGE_HDR);
	pg->last = ts;
}

/* The record's common header. */
static void put_common(uint8_t *rec, uint32_t id, uint32_t cpu, uint32_t ctx)
{
	static const uint8_t flags[4] = {
		0, TDAT_FLAG_SOFTIRQ, TDAT_FLAG_HARDIRQ, TDAT_FLAG_NMI | TDAT_FLAG_HARDIRQ,
	};
	uint16_t type = (uint16_t)id;
	int32_t pid = (int32_t)trace_ctx_pid(cpu, ctx);

	memcpy(rec, &type, 2);
	rec[2] = ctx < 4 ? flags[ctx] : 0;
	rec[3] = 0;
	memcpy(rec + 4, &pid, 4);
}

/* s[0 .. n) as the text shows it: bytes outside printable ASCII as '?'. */
static void shown(uint8_t *dst, const char *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		dst[i] = s[i] >= 0x20 && s[i] < 0x7f ? (uint8_t)s[i] : '?';
}

/*
 * The record of an accepted event into t->rec: the common header, the
 * fixed fields, the strings as shown.  Returns its length (a multiple of 4).
 */
static uint32_t tdat_record(struct tdat *t, const struct trace_event_view *v, uint32_t cpu)
{
	const struct trace_event_def *d = v->def;
	uint8_t *rec = t->rec;
	uint32_t end = TDAT_COMMON + d->fixed - 4u, i, n, loc;

	put_common(rec, v->id, cpu, v->ctx);
	memcpy(rec + TDAT_COMMON, v->data + 4, d->fixed - 4u);
	for (i = 0; i < d->nfields; i++) {
		const struct trace_field_def *f = &d->fields[i];
		uint8_t *slot = rec + f->offset + 4u;
		const char *s;
		bool cut;

		switch (f->kind) {
		case TRACE_FIELD_CHARS:
			s = trace_field_string(v, f, &n, &cut);
			shown(slot, s, n);
			memset(slot + n, 0, f->size - n);
			continue;
		case TRACE_FIELD_STR:
			s = trace_field_string(v, f, &n, &cut);
			shown(rec + end, s, n);
			if (cut)
				memcpy(rec + end + n, "...", 3);
			n += cut ? 3u : 0u;
			break;
		case TRACE_FIELD_BPRINT: {
			char msg[TRACE_BPRINT_MSG_MAX];

			if (trace_event_is_bprint(d)) {
				int k = trace_event_bprint_message(v, &t->syms, msg, sizeof(msg));
				n = k < 0 ? 0u : k >= (int)sizeof(msg) ? sizeof(msg) - 1u : (uint32_t)k;
			} else {	/* as the text: its size only */
				uint32_t raw;

				memcpy(&raw, v->data + f->offset, 4);
				n = (uint32_t)snprintf(msg, sizeof(msg), "[%u bytes]",
						       (raw >> 16) & 0x7fffu);
			}
			memcpy(rec + end, msg, n);
			break;
		}
		default:
			continue;
		}
		rec[end + n] = 0;
		loc = end | (n + 1u) << 16;
		memcpy(slot, &loc, 4);
		end += n + 1u;
	}
	while (end % 4)
		rec[end++] = 0;
	return end;
}

/* An event whose id or payload matches no description. */
static uint32_t unknown_record(struct tdat *t, const struct trace_event_view *v, uint32_t cpu)
{
	put_common(t->rec, t->unknown_id, cpu, v->ctx);
	memcpy(t->rec + 8, &v->id, 4);
	memcpy(t->rec + 12, &v->bytes, 4);
	return 16;
}

static uint32_t malformed_record(struct tdat *t, uint32_t cpu, uint64_t pos, uint32_t off)
{
	put_common(t->rec, t->malformed_id, cpu, 0);
	memcpy(t->rec + 8, &pos, 8);
	memcpy(t->rec + 16, &off, 4);
	t->rec[20] = t->rec[21] = t->rec[22] = t->rec[23] = 0;
	return 24;
}

/* ns as written: shifted (non-negative for events, may be below 0 for page bases). */
static int64_t stamp(const struct tdat *t, const struct dump_cpu *dc, uint64_t cycles)
{
	return (int64_t)((uint64_t)clock_cycles_to_ns(&dc->clock.conv, cycles) + t->bias_ns);
}

/* How event id is written (TDAT_MAP_*). */
static int map_of(const struct tdat *t, uint32_t id)
{
	for (uint32_t i = 0; i < t->nr_events; i++)
		if (t->events[i].id == id)
			return t->events[i].map;
	return TDAT_MAP_NONE;
}

/*
 * The record of a function tracer event as ftrace's own (the layouts above
 * ftrace_formats) into t->rec; ts is the event's stamp in cycles.
 */
static uint32_t tdat_ftrace_record(struct tdat *t, const struct trace_event_view *v, int map,
				   const struct dump_cpu *dc, uint64_t ts)
{
	const struct trace_event_def *d = v->def;
	uint8_t *rec = t->rec;
	uint64_t a, b;
	uint32_t x;

	put_common(rec, v->id, dc->cpu, v->ctx);
	if (map == TDAT_MAP_FUNCTION) {
		a = trace_field_value(v, num_field(d, "ip"));
		b = trace_field_value(v, num_field(d, "parent_ip"));
		memcpy(rec + 8, &a, 8);
		memcpy(rec + 16, &b, 8);
		return 24;
	}
	a = trace_field_value(v, num_field(d, "func"));
	x = (uint32_t)trace_field_value(v, num_field(d, "depth"));
	memcpy(rec + 8, &a, 8);
	memcpy(rec + 16, &x, 4);
	if (map == TDAT_MAP_ENTRY) {
		memset(rec + 20, 0, 4);
		return 24;
	}
	x = (uint32_t)trace_field_value(v, num_field(d, "overrun"));
	memcpy(rec + 20, &x, 4);
	a = (uint64_t)stamp(t, dc, ts - trace_field_value(v, num_field(d, "cycles")));
	b = (uint64_t)stamp(t, dc, ts);
	memcpy(rec + 24, &a, 8);
	memcpy(rec + 32, &b, 8);
	return 40;
}

/* One CPU's events, in its buffer order, as ftrace pages. */
static void cpu_pages(struct tdat *t, const struct dump_cpu *dc, struct tdat_pages *pg)
{
	int64_t prev = 0;
	bool have_prev = false;
	uint32_t i, len;
	int map;

	for (i = 0; i < dc->nr_pages; i++) {
		const struct rb_page_header *h = dc->pages[i];
		struct trace_event_view v;
		struct rb_page_iter it;
		struct rb_event ev;
		bool bad_header;
		int rc;

		if (dc->lost[i]) {
			pg->missed += dc->lost[i];
			prev = stamp(t, dc, h->base_ts);	/* where the text puts the loss */
			have_prev = true;
		}
		rc = rb_page_iter_init(&it, h, t->r->page_size);
		bad_header = rc == RB_ITER_ERROR;
		while (rc == RB_ITER_END && (rc = rb_page_iter_next(&it, &ev)) == RB_ITER_EVENT) {
			prev = stamp(t, dc, ev.ts);
			have_prev = true;
			map = -1;	/* not accepted */
			if (trace_event_parse(t->cat, ev.data, ev.len, &v))
				map = map_of(t, v.id);
			if (map > TDAT_MAP_NONE)
				len = tdat_ftrace_record(t, &v, map, dc, ev.ts);
			else if (map == TDAT_MAP_NONE)
				len = tdat_record(t, &v, dc->cpu);
			else
				len = unknown_record(t, &v, dc->cpu);
			page_add(pg, (uint64_t)prev, t->rec, len);
			rc = RB_ITER_END;
		}
		if (rc == RB_ITER_ERROR) {
			/*
			 * The text's marker: after the CPU's previous item (an
			 * event, or a loss at its page's base), else first.
			 * Stamps are unsigned: a base before 0 is 0.
			 */
			int64_t at = have_prev ? prev : INT64_MIN;

			len = malformed_record(t, dc->cpu, h->pos, bad_header ? 0 : it.off);
			page_add(pg, at < 0 ? 0 : (uint64_t)at, t->rec, len);
		}
	}
	page_close(pg);
}

/* ---- the file ---- */

static void put_header(struct tbuf *b, const struct tdat *t)
{
	struct tbuf hp = { 0 };

	tb_put(b, "\x17\x08\x44tracing" TDAT_VERSION, 11);
	tb_zeros(b, 1);
	tb_put(b, "\0\x08", 2);		/* little-endian, 8-byte longs */
	tb_u32(b, t->page_size);
	tb_str(b, "header_page");
	tb_printf(&hp, header_page_fmt, t->page_size - TDAT_PAGE_HDR);
	b->oom |= hp.oom;
	tb_u64(b, hp.len);
	tb_put(b, hp.p, hp.len);
	free(hp.p);
	tb_str(b, "header_event");
	tb_u64(b, sizeof(header_event) - 1);
	tb_put(b, header_event, sizeof(header_event) - 1);
	put_ftrace_events(b, t);	/* ftrace's own: the function tracer's */
	put_systems(b, t);
	put_kallsyms(b, t);
	put_printk(b, t);
	put_cmdlines(b, t);
	tb_u32(b, t->r->nr_cpus);
	put_options(b, t);
	tb_put(b, "flyrecord", 10);
}

static int write_file(const char *path, const struct tbuf *head, struct tdat_pages *cpus,
		      uint32_t nr_cpus, uint32_t page_size)
{
	/* The header ends with the CPUs' offsets; data starts at the next page. */
	uint64_t off = head->len + 16ull * nr_cpus, data;
	static const uint8_t zeros[RB_PAGE_SIZE_MAX];
	FILE *f = fopen(path, "wb");
	uint32_t c;
	int rc = 0;

	if (!f)
		return -1;
	off = (off + page_size - 1) / page_size * page_size;
	data = off;
	rc |= fwrite(head->p, 1, head->len, f) != head->len;
	for (c = 0; c < nr_cpus; c++) {
		uint64_t w[2] = { off, cpus[c].out.len };

		rc |= fwrite(w, 1, 16, f) != 16;
		off += cpus[c].out.len;
	}
	rc |= fwrite(zeros, 1, data - head->len - 16ull * nr_cpus, f) !=
	      data - head->len - 16ull * nr_cpus;
	for (c = 0; c < nr_cpus; c++)
		rc |= fwrite(cpus[c].out.p, 1, cpus[c].out.len, f) != cpus[c].out.len;
	rc |= fclose(f) != 0;
	return rc ? -1 : 0;
}

int trace_dat_write(const char *path, const struct dump_result *r, FILE *err)
{
	struct tdat *t = calloc(1, sizeof(*t));
	struct tdat_pages *cpus = calloc(r->nr_cpus + 1, sizeof(*cpus));
	struct tbuf head = { 0 };
	int64_t min, max;
	uint32_t c;
	int rc = -1;

	if (!t || !cpus)
		goto out;
	t->r = r;
	t->cat = dump_catalog(r);
	t->syms = dump_symbols(r);
	t->page_size = r->page_size > TDAT_PAGE_MIN ? r->page_size : TDAT_PAGE_MIN;
	if (collect_events(t)) {
		fprintf(err, "trace-dat: no event ids left for the file's own events\n");
		goto out;
	}
	dump_time_range(r, false, &min, &max);	/* events only */
	if (min < 0) {
		t->bias_s = ((uint64_t)0 - (uint64_t)min + CLOCK_NSEC_PER_SEC - 1) /
			    CLOCK_NSEC_PER_SEC;
		t->bias_ns = t->bias_s * CLOCK_NSEC_PER_SEC;
		fprintf(err, "trace-dat: times go down to %lld ns; trace.dat stamps cannot be "
			"negative, so every time in %s is shifted by +%llu s\n", (long long)min,
			path, (unsigned long long)t->bias_s);
	}
	for (c = 0; c < r->nr_cpus; c++) {
		const struct dump_cpu *dc = &r->cpus[c];

		if (dc->clock_state != TRACE_CLOCK_TRUSTED && dc->has_trust)
			fprintf(err, "trace-dat: cpu %u: clock untrusted from %lld ns: its times "
				"from then on may be off against other CPUs' (trace-cmd report "
				"--stat shows it)\n", c,
				(long long)dc->trust.from_ns + (long long)t->bias_ns);
		else if (dc->clock_state != TRACE_CLOCK_TRUSTED)
			fprintf(err, "trace-dat: cpu %u: clock %s: its times may be off against "
				"other CPUs' (trace-cmd report --stat shows it)\n", c,
				clock_word(dc->clock_state));
		cpus[c].page_size = t->page_size;
		cpu_pages(t, dc, &cpus[c]);
		if (cpus[c].out.oom)
			goto oom;
	}
	put_header(&head, t);
	if (head.oom)
		goto oom;
	rc = write_file(path, &head, cpus, r->nr_cpus, t->page_size);
	if (rc)
		fprintf(err, "trace-dat: %s: %s\n", path, strerror(errno));
	goto out;
oom:
	fprintf(err, "trace-dat: out of memory\n");
out:
	for (c = 0; cpus && c < r->nr_cpus; c++)
		free(cpus[c].out.p);
	free(cpus);
	if (t)
		free(t->events);
	free(t);
	free(head.p);
	return rc;
}
