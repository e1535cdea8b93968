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
 *
 * The rule for how far a CPU's clock is trusted (trace_clock_check(),
 * trace_clock_state()) lives here too, so that the kernel, which prints
 * through this file, and the decoder apply the same one.
 */
#include <stdarg.h>

#include <lib/format.h>
#include <trace/text.h>
#include <trace/event_select.h>
#include <trace/text_ftrace.h>

#define TEXT_LINE_MAX	1280	/* an event's fields at their longest (strings), cut beyond */
#define ORDER_LINE_WRAP	90	/* an order line goes on in a new one past this */

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
	uint64_t transit;		/* ITEM_LOST: of them, lost in the capture */
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

/* An accepted event's fields, as much as fits. */
static void line_fields(struct text_line *l, const struct trace_event_view *v,
			const struct trace_symbols *syms)
{
	int n = trace_event_format(v, syms, l->buf + l->len, sizeof(l->buf) - l->len);

	if (n > 0)
		l->len += (size_t)n;
	if (l->len >= sizeof(l->buf))
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

/* ---- clocks ---- */

static void why_put(char *why, size_t len, const char *fmt, ...) __printf(3, 4);

static void why_put(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	kvsnprintf(why, len, fmt, ap);
	va_end(ap);
}

static bool conv_all_zero(const struct clock_conv *v)
{
	return !v->cycle_base && !v->ns_base && !v->ns_frac && !v->offset_ns && !v->hz &&
	       !v->max_cycles && !v->mult && !v->shift;
}

/*
 * floor(cycles * 10^9 / hz) for hz in 1 .. CLOCK_HZ_MAX, saturating at
 * UINT64_MAX, without a 128-bit division (the kernel links no libgcc):
 *   cycles = q * hz + r,        r < hz <= CLOCK_HZ_MAX < 2^35
 *   r * 10^4 = a * hz + b,      r * 10^4 < 2^49, b < hz
 *   floor(r * 10^9 / hz) = a * 10^5 + floor(b * 10^5 / hz),  b * 10^5 < 2^52
 * and the result is q * 10^9 plus that (below 10^9).
 */
static uint64_t clk_cycles_to_ns_floor(uint64_t cycles, uint64_t hz)
{
	uint64_t q = cycles / hz, r = cycles % hz;
	uint64_t a = r * 10000u / hz, b = r * 10000u % hz;
	uint64_t frac = a * 100000u + b * 100000u / hz;

	if (q > (UINT64_MAX - frac) / CLOCK_NSEC_PER_SEC)
		return UINT64_MAX;
	return q * CLOCK_NSEC_PER_SEC + frac;
}

static uint64_t clk_sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t clk_abs(int64_t v)
{
	return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}

int trace_clock_check(const struct dump_clock *c, char *why, size_t len)
{
	const struct clock_conv *v = &c->conv;
	unsigned __int128 exact, made;
	uint64_t span, allowed;

	if (why && len)
		why[0] = 0;
	if (v->mult == 0) {
		if (conv_all_zero(v))
			why_put(why, len, "no conversion (all zero)%s",
				(c->flags & DUMP_CLOCK_TRUSTED) ? ", yet flagged trusted" : "");
		else
			why_put(why, len, "mult=0: no conversion");
		return -1;
	}
	if (clock_conv_check(v)) {
		if (v->shift > CLOCK_SHIFT_MAX)
			why_put(why, len, "shift=%u is above %u", v->shift, CLOCK_SHIFT_MAX);
		else
			why_put(why, len, "ns_frac=%llu is not below 2^shift (shift=%u)",
				(unsigned long long)v->ns_frac, v->shift);
		return -1;
	}
	if (v->hz == 0 || v->hz > CLOCK_HZ_MAX) {
		why_put(why, len, "hz=%llu with mult=%u: hz is not in 1..%llu",
			(unsigned long long)v->hz, v->mult, CLOCK_HZ_MAX);
		return -1;
	}
	/*
	 * mult = round(10^9 * 2^shift / hz) (clock_calc_mult_shift()): within
	 * one of the exact quotient, so |mult * hz - 10^9 * 2^shift| < hz.
	 * Both products are below 2^94.
	 */
	exact = (unsigned __int128)CLOCK_NSEC_PER_SEC << v->shift;
	made = (unsigned __int128)v->mult * v->hz;
	if ((made > exact ? made - exact : exact - made) >= v->hz) {
		why_put(why, len, "mult=%u shift=%u is not 10^9 * 2^shift / hz rounded "
			"(hz=%llu)", v->mult, v->shift, (unsigned long long)v->hz);
		return -1;
	}
	if (c->skew_uncert_cycles < 0) {
		why_put(why, len, "skew_uncert_cycles=%lld is negative",
			(long long)c->skew_uncert_cycles);
		return -1;
	}
	/* |skew| <= 2^63 and uncert < 2^63: the sum fits. */
	span = clk_cycles_to_ns_floor(clk_abs(c->skew_cycles) + (uint64_t)c->skew_uncert_cycles,
				      v->hz);
	allowed = clk_sat_add(clk_sat_add(span, span / 1000000u * TRACE_CLOCK_OFFSET_SLACK_PPM),
			      TRACE_CLOCK_OFFSET_SLACK_NS);
	if (clk_abs(v->offset_ns) > allowed) {
		why_put(why, len, "offset_ns=%lld is more than the measured skew explains "
			"(%lld +- %lld cycles at %llu Hz: at most %llu ns with slack)",
			(long long)v->offset_ns, (long long)c->skew_cycles,
			(long long)c->skew_uncert_cycles, (unsigned long long)v->hz,
			(unsigned long long)allowed);
		return -1;
	}
	return 0;
}

uint32_t trace_clock_state(const struct dump_clock *c)
{
	if (trace_clock_check(c, 0, 0))
		return TRACE_CLOCK_INVALID;
	return (c->flags & DUMP_CLOCK_TRUSTED) ? TRACE_CLOCK_TRUSTED : TRACE_CLOCK_UNTRUSTED;
}

/*
 * A skew s measured within u is applied when |s| > u: the clock is then
 * off the truth by at most u.  Within its bound it is not applied (the
 * CPU uses the boot CPU's conversion), and the truth, somewhere in
 * [s - u, s + u], is the whole error: at most |s| + u.  In ns, rounded up.
 */
uint64_t trace_clock_skew_bound_ns(const struct dump_clock *c)
{
	uint64_t hz = c->conv.hz, skew = clk_abs(c->skew_cycles), r, ns;

	if (c->skew_uncert_cycles < 0 || hz == 0 || hz > CLOCK_HZ_MAX)
		return UINT64_MAX;
	r = (uint64_t)c->skew_uncert_cycles;
	if (skew <= r)
		r = clk_sat_add(r, skew);
	ns = clk_cycles_to_ns_floor(r, hz);
	if (ns != UINT64_MAX &&
	    (unsigned __int128)ns * hz != (unsigned __int128)r * CLOCK_NSEC_PER_SEC)
		ns++;
	return ns;
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
			k->transit = c->transit ? c->transit[k->next_page - 1] : 0;
			if (k->transit > lost)
				k->transit = lost;
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

/* A CPU's clock state, an unknown value taken as the worst known. */
static uint32_t clock_state(const struct trace_text_cpu *c)
{
	return c->clock_state <= TRACE_CLOCK_INVALID ? c->clock_state : TRACE_CLOCK_INVALID;
}

/* The flag of an event of c at ns: 'U' unless c's clock is trusted at that time. */
static char trust_flag(const struct trace_text_cpu *c, int64_t ns)
{
	if (c->clock_state == TRACE_CLOCK_TRUSTED)
		return '.';
	if (c->clock_state == TRACE_CLOCK_UNTRUSTED && c->trust && ns < c->trust->from_ns)
		return '.';
	return 'U';
}

/* c's skew bound where it holds (a trusted clock, or one trusted until an instant). */
static uint64_t order_bound(const struct trace_text_cpu *c)
{
	if (c->clock_frame && (c->clock_state == TRACE_CLOCK_TRUSTED ||
			       (c->clock_state == TRACE_CLOCK_UNTRUSTED && c->trust)))
		return trace_clock_skew_bound_ns(c->clock_frame);
	return UINT64_MAX;
}

/* Within how many ns an event of a and one of b may be in either true order. */
static uint64_t order_window(const struct trace_text_cpu *a, const struct trace_text_cpu *b)
{
	uint64_t x = order_bound(a), y = order_bound(b);

	return x == UINT64_MAX || y == UINT64_MAX ? UINT64_MAX : clk_sat_add(x, y);
}

/* ns as "<s>.<9 digits>", signed. */
static void ns_str(char *buf, size_t len, int64_t ns)
{
	uint64_t mag = clk_abs(ns);

	ksnprintf(buf, len, "%s%llu.%09llu", ns < 0 ? "-" : "",
		  (unsigned long long)(mag / CLOCK_NSEC_PER_SEC),
		  (unsigned long long)(mag % CLOCK_NSEC_PER_SEC));
}

/* ppb as ppm with three decimals, as the kernel's lines print it. */
static void ppm_str(char *buf, size_t len, uint64_t ppb)
{
	ksnprintf(buf, len, "%llu.%03llu", (unsigned long long)(ppb / 1000u),
		  (unsigned long long)(ppb % 1000u));
}

/* Selected CPUs whose clock is invalid. */
static uint32_t count_invalid(const struct text_cursor *ks, uint32_t n)
{
	uint32_t i, k = 0;

	for (i = 0; i < n; i++)
		k += clock_state(ks[i].c) == TRACE_CLOCK_INVALID;
	return k;
}

/* A clock trusted until an instant: when, and what was found. */
static void put_trust_line(const struct trace_text_cpu *c, const struct trace_sink *out)
{
	static const char *const found[] = {
		[DUMP_TRUST_DRIFT] = "the TSC's rate drift",
		[DUMP_TRUST_SKEW] = "its TSC skew changed",
		[DUMP_TRUST_MOVED] = "the boot CPU's TSC moved",
	};
	struct text_line l = { .len = 0 };
	char from[32], at[32];

	if (clock_state(c) != TRACE_CLOCK_UNTRUSTED || !c->trust)
		return;
	ns_str(from, sizeof(from), c->trust->from_ns);
	ns_str(at, sizeof(at), c->trust->found_ns);
	line_add(&l, "# U: cpu %u: trusted until %s, the clock watchdog's last good check "
		 "before it found %s at %s: its events from then on carry U, earlier ones do not",
		 c->cpu, from, c->trust->why >= DUMP_TRUST_DRIFT &&
		 c->trust->why <= DUMP_TRUST_MOVED ? found[c->trust->why] : "a fault", at);
	line_put(&l, out);
}

/* The calibration's disputed vote: the figures, then what they mean. */
static void put_calib_lines(const struct dump_calib *k, const struct trace_sink *out)
{
	struct text_line l = { .len = 0 };
	char err[32], vote[32], tol[32], spread[32];

	ppm_str(err, sizeof(err), k->err_ppb);
	ppm_str(vote, sizeof(vote), k->vote_err_ppb);
	ppm_str(tol, sizeof(tol), k->tol_ppb);
	ppm_str(spread, sizeof(spread), k->spread_ppb);
	line_add(&l, "# clock: disputed freq_hz=%llu ref=%.*s err_ppm=%s tol_ppm=%s "
		 "vote_err_ppm=%s used=%.*s left_out=%.*s spread_ppm=%s", (unsigned long long)k->hz,
		 (int)sizeof(k->ref), k->ref, err, tol, vote, (int)sizeof(k->used), k->used,
		 (int)sizeof(k->left_out), k->left_out, spread);
	line_put(&l, out);
	line_add(&l, "# clock: the calibration's references disagree; the vote assumes a majority "
		 "of them is right, which vote_err_ppm bounds; err_ppm covers every reference");
	line_put(&l, out);
}

/*
 * Per pair of selected CPUs, the ns within which their events' merged
 * order is not decided: one line per CPU a with its pairs b > a, wrapped.
 */
static void put_order_lines(const struct text_cursor *ks, uint32_t n,
			    const struct trace_sink *out)
{
	struct text_line l = { .len = 0 };
	uint32_t a, b;

	if (n < 2)
		return;
	line_add(&l, "# order: events of CPUs a and b are in true order when their times differ "
		 "by more than the figure for a,b (ns: the two skew bounds added); nearer, the "
		 "order shown is not decided");
	line_put(&l, out);
	for (a = 0; a + 1 < n; a++) {
		line_add(&l, "# order: cpu=%u", ks[a].c->cpu);
		for (b = a + 1; b < n; b++) {
			uint64_t w = order_window(ks[a].c, ks[b].c);

			if (l.len > ORDER_LINE_WRAP) {
				line_put(&l, out);
				line_add(&l, "# order: cpu=%u", ks[a].c->cpu);
			}
			if (w == UINT64_MAX)
				line_add(&l, " %u=unbounded", ks[b].c->cpu);
			else
				line_add(&l, " %u=%llu", ks[b].c->cpu, (unsigned long long)w);
		}
		line_put(&l, out);
	}
}

static void put_header(uint32_t nr_cpus, const struct text_cursor *ks, uint32_t n,
		       const struct trace_text_opts *opts, bool graph, const struct trace_sink *out)
{
	static const char *const clock_notes[] = {
		[TRACE_CLOCK_TRUSTED] = "",
		[TRACE_CLOCK_UNTRUSTED] = " clock=untrusted",
		[TRACE_CLOCK_MISSING] = " clock=missing",
		[TRACE_CLOCK_INVALID] = " clock=invalid",
	};
	struct text_line l = { .len = 0 };
	uint64_t in_buffer = 0, written = 0;
	uint32_t i, seen = 0, noted = 0;

	for (i = 0; i < n; i++) {
		const struct dump_stats *st = ks[i].c->stats;

		in_buffer += ks[i].events;
		written += st ? st->written : ks[i].events + ks[i].lost_total;
	}
	/* As ftrace names its tracer: function_graph when its lines are here. */
	line_add(&l, "# tracer: %s", graph ? "function_graph" : "baretrace");
	line_put(&l, out);
	if (opts->damaged) {
		line_add(&l, "# damaged: %s", opts->damaged);
		line_put(&l, out);
	}
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
				 " read=%llu lost=%llu", (unsigned long long)st->in_buffer,
				 (unsigned long long)st->overrun, (unsigned long long)st->dropped,
				 (unsigned long long)st->commit_overrun,
				 (unsigned long long)st->read, (unsigned long long)st->lost);
		else
			line_add(&l, " stats=missing");
		if (st && st->clock_backwards)
			line_add(&l, " clock_backwards=%llu",
				 (unsigned long long)st->clock_backwards);
		line_add(&l, "%s", clock_notes[clock_state(c)]);
		if (clock_state(c) == TRACE_CLOCK_UNTRUSTED && c->trust) {
			char from[32];

			ns_str(from, sizeof(from), c->trust->from_ns);
			line_add(&l, " untrusted_from=%s", from);
		}
		if (st && st->state == DUMP_STATE_STOPPED)
			line_add(&l, " state=stopped reason=\"%.*s\"",
				 DUMP_STOP_REASON_MAX - 1, st->stop_reason);
		else if (st && st->state == DUMP_STATE_NONE)
			line_add(&l, " state=no-buffer");
		line_put(&l, out);
	}
	/* Which events were recording (a state the dump's descriptions carry). */
	line_add(&l, "# events: ");
	trace_events_summary(l.buf + l.len, sizeof(l.buf) - l.len,
			     opts->catalog ? opts->catalog : &trace_builtin_catalog,
			     opts->enabled);
	while (l.buf[l.len])
		l.len++;
	line_put(&l, out);
	/* Say why some lines carry 'U'. */
	for (i = 0; i < n; i++)
		seen |= 1u << clock_state(ks[i].c);
	if (seen & (1u << TRACE_CLOCK_UNTRUSTED)) {
		line_add(&l, "# U: clock=untrusted: the kernel could not bound this CPU's TSC "
			 "skew, or its TSC went backwards, or the clock watchdog saw it drift or "
			 "step; its times may be off against other CPUs'");
		line_put(&l, out);
	}
	for (i = 0; i < n; i++)
		put_trust_line(ks[i].c, out);
	if (seen & (1u << TRACE_CLOCK_MISSING)) {
		line_add(&l, "# U: clock=missing: the dump lacks this CPU's conversion; its times "
			 "use a stand-in and may be off against other CPUs'");
		line_put(&l, out);
	}
	/* What is wrong differs from CPU to CPU: one line each, if known. */
	for (i = 0; i < n; i++) {
		const struct trace_text_cpu *c = ks[i].c;

		if (clock_state(c) != TRACE_CLOCK_INVALID || !c->clock_note)
			continue;
		line_add(&l, "# U: clock=invalid: cpu %u: %s and may be off against other CPUs'",
			 c->cpu, c->clock_note);
		line_put(&l, out);
		noted++;
	}
	if ((seen & (1u << TRACE_CLOCK_INVALID)) && noted < count_invalid(ks, n)) {
		line_add(&l, "# U: clock=invalid: the conversion in this CPU's CLOCK is unusable "
			 "or its offset unexplained; its times may be wrong and off against "
			 "other CPUs'");
		line_put(&l, out);
	}
	if (opts->calib)
		put_calib_lines(opts->calib, out);
	put_order_lines(ks, n, out);
	line_add(&l, "#");
	line_put(&l, out);
	/* The columns, as ftrace's legend draws them (TASK-PID: trace_ctx_pid()). */
	for (const char *p = TRACE_TEXT_LEGEND, *e; *p; p = e + 1) {
		for (e = p; *e != '\n'; e++)
			;
		line_add(&l, "%.*s", (int)(e - p), p);
		line_put(&l, out);
	}
	for (const char *p = graph ? TRACE_TEXT_GRAPH_LEGEND : "", *e; *p; p = e + 1) {
		for (e = p; *e != '\n'; e++)
			;
		line_add(&l, "%.*s", (int)(e - p), p);
		line_put(&l, out);
	}
}

/* "<context>/<cpu>-<pid> [<cpu>] <flags> <s>.<ns>: " */
static void put_prefix(struct text_line *l, const struct text_cursor *k, uint32_t ctx)
{
	char secs[24], comm[24];
	int64_t ns = k->ns;
	uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	char trust = trust_flag(k->c, ns);

	ksnprintf(secs, sizeof(secs), "%s%llu", ns < 0 ? "-" : "",
		  (unsigned long long)(mag / CLOCK_NSEC_PER_SEC));
	ksnprintf(comm, sizeof(comm), "%s/%u", trace_ctx_name(ctx), k->c->cpu);
	line_add(l, "%11s-%-5u [%03u] ..%c%c %5s.%09llu: ", comm, trace_ctx_pid(k->c->cpu, ctx),
		 k->c->cpu, trace_ctx_flag(ctx), trust, secs,
		 (unsigned long long)(mag % CLOCK_NSEC_PER_SEC));
}

/*
 * A function_graph entry whose return is the next item of its own CPU (a
 * leaf): the exit, parsed into *x, so that both print as one line. The
 * cursor is copied and the copy advanced; *after is where the original
 * goes on if the caller takes the exit.
 */
static bool graph_leaf(const struct text_cursor *k, const struct trace_event_view *v,
		       const struct trace_text_opts *opts, struct text_cursor *after,
		       struct trace_event_view *x)
{
	*after = *k;
	cursor_advance(after);
	return after->item == ITEM_EVENT &&
	       trace_event_parse(opts->catalog, after->ev.data, after->ev.len, x) &&
	       trace_ftrace_kind(x->def) == TRACE_FTRACE_EXIT && x->ctx == v->ctx &&
	       trace_ftrace_field(x, "func") == trace_ftrace_field(v, "func") &&
	       trace_ftrace_field(x, "depth") == trace_ftrace_field(v, "depth");
}

/* An exit's duration: its time less the cycles it carries, both converted. */
static int64_t graph_duration(const struct text_cursor *k, const struct trace_event_view *x)
{
	uint64_t cycles = trace_ftrace_field(x, "cycles");

	if (cycles > k->ev.ts)
		cycles = k->ev.ts;
	return k->ns - clock_cycles_to_ns(k->c->clock, k->ev.ts - cycles);
}

static void line_graph(struct text_line *l, const struct text_cursor *k,
		       const struct trace_event_view *v, const struct trace_event_view *leaf,
		       int64_t dur_ns, const struct trace_symbols *syms)
{
	int n = trace_ftrace_graph(v, leaf, k->c->cpu, k->ns, dur_ns, syms, l->buf + l->len,
				   sizeof(l->buf) - l->len);

	if (n > 0)
		l->len += (size_t)n;
	if (l->len >= sizeof(l->buf))
		l->len = sizeof(l->buf) - 1;
}

/* Print k's event; returns 1 if it also took the next event of k's CPU (a leaf's exit). */
static int put_event(struct text_cursor *k, const struct trace_text_opts *opts,
		     const struct trace_sink *out,
		     struct trace_text_summary *sum)
{
	struct text_line l = { .len = 0 };
	struct trace_event_view v, x;
	struct text_cursor after;
	int took = 0;

	if (trace_event_parse(opts->catalog, k->ev.data, k->ev.len, &v)) {
		enum trace_ftrace_kind kind = trace_ftrace_kind(v.def);

		if (kind == TRACE_FTRACE_ENTRY && graph_leaf(k, &v, opts, &after, &x)) {
			/* At the entry's time, with the exit's duration; then past the exit. */
			line_graph(&l, k, &v, &x, graph_duration(&after, &x), opts->syms);
			*k = after;
			took = 1;
		} else if (kind == TRACE_FTRACE_ENTRY || kind == TRACE_FTRACE_EXIT) {
			line_graph(&l, k, &v, NULL, kind == TRACE_FTRACE_EXIT ?
				   graph_duration(k, &v) : 0, opts->syms);
		} else {
			put_prefix(&l, k, v.ctx);
			if (kind == TRACE_FTRACE_FUNCTION) {	/* "func <-caller", as ftrace */
				int n = trace_ftrace_function(&v, opts->syms, l.buf + l.len,
							      sizeof(l.buf) - l.len);
				if (n > 0)
					l.len += (size_t)n;
				if (l.len >= sizeof(l.buf))
					l.len = sizeof(l.buf) - 1;
			} else {
				if (!trace_event_is_bprint(v.def))	/* trace_printk: "<function>: <message>" */
					line_add(&l, "%s: ", v.def->name);
				line_fields(&l, &v, opts->syms);
			}
		}
	} else {
		put_prefix(&l, k, v.ctx);
		line_add(&l, "unknown: id=%u bytes=%u", v.id, v.bytes);
		sum->unknown++;
	}
	line_put(&l, out);
	sum->printed++;
	return took;
}

static void put_marker(const struct text_cursor *k, const struct trace_sink *out,
		       struct trace_text_summary *sum)
{
	struct text_line l = { .len = 0 };

	if (k->item == ITEM_LOST) {
		/* The ring's losses as ftrace marks them; the capture's apart. */
		if (k->lost > k->transit) {
			line_add(&l, "CPU:%u [LOST %llu EVENTS]", k->c->cpu,
				 (unsigned long long)(k->lost - k->transit));
			line_put(&l, out);
			sum->lost_lines++;
		}
		if (k->transit) {
			line_add(&l, "CPU:%u [LOST %llu EVENTS IN TRANSIT]", k->c->cpu,
				 (unsigned long long)k->transit);
			line_put(&l, out);
			sum->lost_lines++;
		}
		sum->lost_events += k->lost;
		return;
	} else {
		line_add(&l, "CPU:%u [MALFORMED PAGE pos=%llu at offset %u]", k->c->cpu,
			 (unsigned long long)k->page_pos, k->bad_off);
		sum->malformed++;
	}
	line_put(&l, out);
}

/* The event printed last, for order_check(). */
struct order_last {
	const struct trace_text_cpu *c;	/* its CPU, NULL before the first */
	int64_t ns;			/* its time */
};

/*
 * Is k's event, about to print, one whose order with the event printed
 * before it the skew bounds do not decide?  Only events of two CPUs, both
 * on a clock trusted at their time: a 'U' already says its order is not
 * known.  Counted, and with opts->mark_order said in a line before it.
 */
static void order_check(const struct order_last *last, const struct text_cursor *k,
			const struct trace_text_opts *opts, const struct trace_sink *out,
			struct trace_text_summary *sum)
{
	struct text_line l = { .len = 0 };
	uint64_t w, d;

	if (!last->c || last->c == k->c || trust_flag(last->c, last->ns) != '.' ||
	    trust_flag(k->c, k->ns) != '.')
		return;
	w = order_window(last->c, k->c);
	d = k->ns >= last->ns ? (uint64_t)k->ns - (uint64_t)last->ns : 0;
	if (w == UINT64_MAX || d > w)
		return;
	sum->undecided++;
	if (!opts->mark_order)
		return;
	line_add(&l, "CPU:%u [ORDER UNDECIDED: %llu ns after CPU:%u, within %llu ns]", k->c->cpu,
		 (unsigned long long)d, last->c->cpu, (unsigned long long)w);
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
		if (!parse_u64(arg + 5, UINT64_MAX, &v))
			return -1;	/* 0 is "all", as dump.last=0 */
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
	struct order_last last = { 0, 0 };
	struct text_cursor *ks = scratch, *k;
	uint64_t skip = 0, seen = 0;
	uint32_t i, n = 0;
	bool graph = false;

	if (!sum)
		sum = &dummy;
	__builtin_memset(sum, 0, sizeof(*sum));
	if (scratch_size < trace_text_scratch_size(nr_cpus) ||
	    ((uintptr_t)scratch & 7u))
		return -1;
	for (i = 0; i < nr_cpus; i++)
		if (!cpus[i].clock)
			return -1;

	/* Counting pass: events and losses of each selected CPU; graph lines? */
	for (i = 0; i < nr_cpus; i++) {
		if (opts->cpu != TRACE_TEXT_ALL_CPUS && cpus[i].cpu != opts->cpu)
			continue;
		k = &ks[n++];
		cursor_reset(k, &cpus[i]);
		for (cursor_advance(k); k->item != ITEM_NONE; cursor_advance(k)) {
			struct trace_event_view v;

			if (k->item == ITEM_EVENT && !graph &&
			    trace_event_parse(opts->catalog, k->ev.data, k->ev.len, &v) &&
			    trace_ftrace_kind(v.def) >= TRACE_FTRACE_ENTRY)
				graph = true;
			if (k->item == ITEM_EVENT)
				k->events++;
			else if (k->item == ITEM_LOST)
				k->lost_total += k->lost;
		}
		sum->events += k->events;
	}
	put_header(nr_cpus, ks, n, opts, graph, out);

	if (opts->last && opts->last < sum->events)
		skip = sum->events - opts->last;
	for (i = 0; i < n; i++) {
		cursor_reset(&ks[i], ks[i].c);
		cursor_advance(&ks[i]);
	}
	while ((k = cursor_pick(ks, n))) {
		bool print = seen >= skip;

		if (print && opts->stop && opts->stop(opts->stop_ctx)) {
			sum->cut = true;
			break;
		}
		if (k->item == ITEM_EVENT) {
			if (seen++ >= skip) {
				order_check(&last, k, opts, out, sum);
				seen += (uint64_t)put_event(k, opts, out, sum);
				/* After a leaf, k stands at its exit. */
				last = (struct order_last){ k->c, k->ns };
			}
		} else if (print) {
			put_marker(k, out, sum);
		}
		cursor_advance(k);
	}
	sum->shown = seen > skip ? seen - skip : 0;
	return 0;
}
