/*
 * The trace as text: a k-way merge of the CPUs' pages by converted time,
 * printed one line at a time through a sink.  Layout and ordering rules
 * are in <trace/text.h>.
 *
 * Each selected CPU gets a cursor that walks its pages in order and
 * offers one item at a time: a LOST marker (when a page reports loss, at
 * the page's base stamp), an event, or a MALFORMED marker (where a page's
 * records stop making sense).  The merge repeatedly takes the cursor whose
 * item has the smallest ns, the lower CPU id on a tie.  Per CPU the items
 * come in buffer order, so one CPU's events are never reordered, even if a
 * corrupt page had stamps that go backwards.  Each step scans all cursors:
 * O(events x CPUs), plenty for a dump that has to cross a serial line.
 *
 * "last=N" needs the total first: a counting pass walks the same cursors
 * without printing, then the printing pass suppresses everything before
 * the (total - N)th event.  Markers count as printed when they come after
 * that point.
 *
 * The cursors live in the caller's scratch memory; a line is built in a
 * buffer on the stack (TEXT_LINE_MAX bytes) and handed to the sink whole.
 */
#include <stdarg.h>

#include <kernel/kprintf.h>
#include <trace/text.h>

#define TEXT_LINE_MAX	320	/* longest line: about 200 bytes */

enum text_item {
	ITEM_NONE = 0,		/* the CPU has nothing more */
	ITEM_EVENT,		/* ev holds an event */
	ITEM_LOST,		/* lost events before the current page */
	ITEM_MALFORMED,		/* the current page stops at bad_off */
};

/* Where a cursor stands between items. */
enum text_phase {
	PHASE_NEXT_PAGE = 0,	/* open the next page */
	PHASE_RECORDS,		/* iterate the open page */
	PHASE_BAD_PAGE,		/* the open page's header is unusable */
};

struct text_cursor {
	const struct trace_text_cpu *c;	/* the CPU walked */
	uint32_t next_page;		/* index of the next page to open */
	uint32_t phase;			/* enum text_phase */
	struct rb_page_iter it;		/* records of the open page */
	uint64_t page_pos;		/* pos of the open page, for messages */
	uint32_t item;			/* enum text_item on offer */
	int64_t ns;			/* its time */
	struct rb_event ev;		/* ITEM_EVENT: the event */
	uint64_t lost;			/* ITEM_LOST: how many */
	uint32_t bad_off;		/* ITEM_MALFORMED: record offset */
	uint64_t events;		/* counting pass: events */
	uint64_t lost_total;		/* counting pass: lost events */
};

struct text_line {
	char buf[TEXT_LINE_MAX];	/* the line so far */
	size_t len;			/* its length (< TEXT_LINE_MAX) */
};

static void line_add(struct text_line *l, const char *fmt, ...) __printf(2, 3);

static void line_add(struct text_line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n;
	if (l->len >= sizeof(l->buf))	/* truncated: keep what fitted */
		l->len = sizeof(l->buf) - 1;
}

static void line_put(struct text_line *l, const struct trace_sink *out)
{
	if (l->len >= sizeof(l->buf) - 1)
		l->len = sizeof(l->buf) - 2;
	l->buf[l->len++] = '\n';
	trace_sink_put(out, l->buf, l->len);
	l->len = 0;
}

/* ---- events ---- */

bool trace_event_parse(const uint8_t *data, uint32_t len, struct trace_event_view *v)
{
	struct trace_ent_hdr h = { 0 };
	const struct trace_event_desc *d;
	uint32_t i;

	v->desc = 0;
	v->bytes = len;
	v->nfields = 0;
	if (len < sizeof(h)) {
		v->id = 0;
		v->ctx = 0;
		return false;
	}
	__builtin_memcpy(&h, data, sizeof(h));
	v->id = h.id;
	v->ctx = h.ctx;
	if (h.id == TEV_INVALID || h.id >= TEV_MAX || h.ctx >= 4)
		return false;
	d = &trace_event_descs[h.id];
	if (h.nfields != d->nfields || len != 4u + 4u * h.nfields)
		return false;
	for (i = 0; i < h.nfields; i++)
		v->f[i] = rb_load32(data + 4 + 4 * i);
	v->nfields = h.nfields;
	v->desc = d;
	return true;
}

char trace_ctx_flag(uint32_t ctx)
{
	static const char flags[4] = { '.', 's', 'h', 'z' };

	return ctx < 4 ? flags[ctx] : '?';
}

const char *trace_ctx_name(uint32_t ctx)
{
	return ctx < 4 ? trace_ctx_names[ctx] : "?";
}

/* ---- cursors ---- */

static void cursor_reset(struct text_cursor *k, const struct trace_text_cpu *c)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->c = c;
	k->ns = INT64_MIN;
}

/* Put the cursor's next item on offer (ITEM_NONE at the end). */
static void cursor_advance(struct text_cursor *k)
{
	const struct trace_text_cpu *c = k->c;
	const struct rb_page_header *hdr;
	const void *page;
	uint64_t lost;
	int rc;

	for (;;) {
		switch (k->phase) {
		case PHASE_RECORDS:
			rc = rb_page_iter_next(&k->it, &k->ev);
			if (rc == RB_ITER_EVENT) {
				k->item = ITEM_EVENT;
				k->ns = clock_cycles_to_ns(c->clock, k->ev.ts);
				return;
			}
			k->phase = PHASE_NEXT_PAGE;
			if (rc == RB_ITER_ERROR) {
				/* Keep the previous time: the marker follows it. */
				k->item = ITEM_MALFORMED;
				k->bad_off = k->it.off;
				return;
			}
			continue;
		case PHASE_BAD_PAGE:
			k->phase = PHASE_NEXT_PAGE;
			k->item = ITEM_MALFORMED;
			k->bad_off = 0;
			return;
		default:
			break;
		}
		if (k->next_page >= c->nr_pages) {
			k->item = ITEM_NONE;
			return;
		}
		page = c->pages[k->next_page];
		hdr = page;
		lost = c->lost ? c->lost[k->next_page] : hdr->lost;
		k->next_page++;
		k->page_pos = hdr->pos;
		if (rb_page_iter_init(&k->it, page, c->page_size) == RB_ITER_END)
			k->phase = PHASE_RECORDS;
		else
			k->phase = PHASE_BAD_PAGE;
		if (lost) {
			k->item = ITEM_LOST;
			k->lost = lost;
			k->ns = clock_cycles_to_ns(c->clock, hdr->base_ts);
			return;
		}
	}
}

/* The cursor whose item comes next in the merged order, or NULL. */
static struct text_cursor *cursor_pick(struct text_cursor *ks, uint32_t n)
{
	struct text_cursor *best = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct text_cursor *k = &ks[i];

		if (k->item == ITEM_NONE)
			continue;
		if (!best || k->ns < best->ns ||
		    (k->ns == best->ns && k->c->cpu < best->c->cpu))
			best = k;
	}
	return best;
}

/* ---- lines ---- */

static void put_header(uint32_t nr_cpus, const struct text_cursor *ks, uint32_t n,
		       const struct trace_sink *out)
{
	static const char *const clock_notes[] = {
		[TRACE_CLOCK_TRUSTED] = "",
		[TRACE_CLOCK_UNTRUSTED] = " clock=untrusted",
		[TRACE_CLOCK_MISSING] = " clock=missing",
	};
	struct text_line l = { .len = 0 };
	uint64_t in_buffer = 0, written = 0;
	uint32_t i, seen = 0;

	for (i = 0; i < n; i++) {
		const struct dump_stats *st = ks[i].c->stats;

		in_buffer += ks[i].events;
		written += st ? st->written : ks[i].events + ks[i].lost_total;
	}
	line_add(&l, "# tracer: baretrace");
	line_put(&l, out);
	line_add(&l, "#");
	line_put(&l, out);
	line_add(&l, "# entries-in-buffer/entries-written: %llu/%llu   #P:%u",
		 (unsigned long long)in_buffer, (unsigned long long)written, nr_cpus);
	line_put(&l, out);
	for (i = 0; i < n; i++) {
		const struct trace_text_cpu *c = ks[i].c;
		const struct dump_stats *st = c->stats;

		line_add(&l, "# cpu=%u", c->cpu);
		if (st)
			line_add(&l, " entries=%llu overrun=%llu dropped=%llu commit_overrun=%llu"
				 " read=%llu lost=%llu", (unsigned long long)st->entries,
				 (unsigned long long)st->overrun, (unsigned long long)st->dropped,
				 (unsigned long long)st->commit_overrun,
				 (unsigned long long)st->read, (unsigned long long)st->lost);
		else
			line_add(&l, " stats=missing");
		if (st && st->clock_backwards)
			line_add(&l, " clock_backwards=%llu",
				 (unsigned long long)st->clock_backwards);
		line_add(&l, "%s", clock_notes[c->clock_state <= TRACE_CLOCK_MISSING ?
					       c->clock_state : TRACE_CLOCK_MISSING]);
		if (st && st->state == DUMP_STATE_STOPPED)
			line_add(&l, " state=stopped reason=\"%.*s\"",
				 DUMP_STOP_REASON_MAX - 1, st->stop_reason);
		else if (st && st->state == DUMP_STATE_NONE)
			line_add(&l, " state=no-buffer");
		line_put(&l, out);
	}
	/* Say why some lines carry 'U'. */
	for (i = 0; i < n; i++)
		seen |= 1u << (ks[i].c->clock_state <= TRACE_CLOCK_MISSING ?
			       ks[i].c->clock_state : TRACE_CLOCK_MISSING);
	if (seen & (1u << TRACE_CLOCK_UNTRUSTED)) {
		line_add(&l, "# U: clock=untrusted: the kernel could not bound this CPU's TSC "
			 "skew, or its TSC went backwards; its times may be off against other CPUs'");
		line_put(&l, out);
	}
	if (seen & (1u << TRACE_CLOCK_MISSING)) {
		line_add(&l, "# U: clock=missing: the dump lacks this CPU's conversion; its times "
			 "use a stand-in and may be off against other CPUs'");
		line_put(&l, out);
	}
	line_add(&l, "#");
	line_put(&l, out);
	line_add(&l, "#      TASK-PID   CPU# FLAGS       TIMESTAMP  FUNCTION");
	line_put(&l, out);
	line_add(&l, "#         | |      |     |             |      |");
	line_put(&l, out);
}

/* "<context>-<cpu> [<cpu>] <flags> <s>.<ns>: " */
static void put_prefix(struct text_line *l, const struct text_cursor *k, uint32_t ctx)
{
	char secs[24];
	int64_t ns = k->ns;
	uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	char trust = k->c->clock_state == TRACE_CLOCK_TRUSTED ? '.' : 'U';

	ksnprintf(secs, sizeof(secs), "%s%llu", ns < 0 ? "-" : "",
		  (unsigned long long)(mag / CLOCK_NSEC_PER_SEC));
	line_add(l, "%11s-%-5u [%03u] ..%c%c %5s.%09llu: ", trace_ctx_name(ctx), k->c->cpu,
		 k->c->cpu, trace_ctx_flag(ctx), trust, secs,
		 (unsigned long long)(mag % CLOCK_NSEC_PER_SEC));
}

static void put_event(const struct text_cursor *k, const struct trace_sink *out,
		      struct trace_text_summary *sum)
{
	struct text_line l = { .len = 0 };
	struct trace_event_view v;
	uint32_t i;

	if (trace_event_parse(k->ev.data, k->ev.len, &v)) {
		put_prefix(&l, k, v.ctx);
		line_add(&l, "%s:", v.desc->name);
		for (i = 0; i < v.nfields; i++)
			line_add(&l, " %s=%u", v.desc->fields[i], v.f[i]);
	} else {
		put_prefix(&l, k, v.ctx);
		line_add(&l, "unknown: id=%u bytes=%u", v.id, v.bytes);
		sum->unknown++;
	}
	line_put(&l, out);
	sum->printed++;
}

static void put_marker(const struct text_cursor *k, const struct trace_sink *out,
		       struct trace_text_summary *sum)
{
	struct text_line l = { .len = 0 };

	if (k->item == ITEM_LOST) {
		line_add(&l, "CPU:%u [LOST %llu EVENTS]", k->c->cpu,
			 (unsigned long long)k->lost);
		sum->lost_lines++;
		sum->lost_events += k->lost;
	} else {
		line_add(&l, "CPU:%u [MALFORMED PAGE pos=%llu at offset %u]", k->c->cpu,
			 (unsigned long long)k->page_pos, k->bad_off);
		sum->malformed++;
	}
	line_put(&l, out);
}

/* ---- selections ---- */

/* Decimal digits to a number; false if s has anything else or overflows. */
static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (max - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

static bool has_prefix(const char *s, const char *p)
{
	while (*p)
		if (*s++ != *p++)
			return false;
	return true;
}

int trace_text_parse_arg(const char *arg, struct trace_text_opts *opts)
{
	uint64_t v;

	if (has_prefix(arg, "last=")) {
		if (!parse_u64(arg + 5, UINT64_MAX, &v) || v == 0)
			return -1;
		opts->last = v;
		return 0;
	}
	if (has_prefix(arg, "cpu=")) {
		if (!parse_u64(arg + 4, DUMP_MAX_CPUS - 1, &v))
			return -1;
		opts->cpu = (uint32_t)v;
		return 0;
	}
	return 1;
}

/* ---- entry ---- */

size_t trace_text_scratch_size(uint32_t nr_cpus)
{
	return (size_t)nr_cpus * sizeof(struct text_cursor);
}

int trace_text_write(const struct trace_text_cpu *cpus, uint32_t nr_cpus,
		     const struct trace_text_opts *opts, void *scratch,
		     size_t scratch_size, const struct trace_sink *out,
		     struct trace_text_summary *sum)
{
	struct trace_text_summary dummy;
	struct text_cursor *ks = scratch, *k;
	uint64_t skip = 0, seen = 0;
	uint32_t i, n = 0;

	if (!sum)
		sum = &dummy;
	__builtin_memset(sum, 0, sizeof(*sum));
	if (scratch_size < trace_text_scratch_size(nr_cpus) ||
	    ((uintptr_t)scratch & 7u))
		return -1;
	for (i = 0; i < nr_cpus; i++)
		if (!cpus[i].clock)
			return -1;

	/* Counting pass: events and losses of each selected CPU. */
	for (i = 0; i < nr_cpus; i++) {
		if (opts->cpu != TRACE_TEXT_ALL_CPUS && cpus[i].cpu != opts->cpu)
			continue;
		k = &ks[n++];
		cursor_reset(k, &cpus[i]);
		for (cursor_advance(k); k->item != ITEM_NONE; cursor_advance(k)) {
			if (k->item == ITEM_EVENT)
				k->events++;
			else if (k->item == ITEM_LOST)
				k->lost_total += k->lost;
		}
		sum->events += k->events;
	}
	put_header(nr_cpus, ks, n, out);

	if (opts->last && opts->last < sum->events)
		skip = sum->events - opts->last;
	for (i = 0; i < n; i++) {
		cursor_reset(&ks[i], ks[i].c);
		cursor_advance(&ks[i]);
	}
	while ((k = cursor_pick(ks, n))) {
		if (k->item == ITEM_EVENT) {
			if (seen++ >= skip)
				put_event(k, out, sum);
		} else if (seen >= skip) {
			put_marker(k, out, sum);
		}
		cursor_advance(k);
	}
	return 0;
}
