/*
 * Decoder of binary trace dumps found in a console capture.
 *
 * Three layers:
 *
 *   scan     cuts the capture into items: FRAME (magic, a header that fits
 *            its type, good CRC), BAD (magic, but the frame does not check
 *            out) and GAP
 *            (bytes between them: console text or debris).  After a good
 *            frame it resumes behind it, so magic bytes inside a payload
 *            are never looked at; after a bad one it resumes at the next
 *            byte, so a damaged length costs time, never frames.
 *   segment  groups items into dumps: a BEGIN, or a frame whose dump id
 *            differs from the open dump's, starts one; END closes it.
 *            Bad frames belong to the open dump, or to the next one if
 *            none is open.  A dump's byte range runs from its first item
 *            to its last.
 *   process  walks the chosen dump's range twice with the same decisions:
 *            once to measure the arena it needs, once to fill it and
 *            report.  Sequence numbers find missing frames, END proves
 *            completeness, and page headers are checked before a page is
 *            accepted so that the text formatter only sees sane headers.
 *
 * Damage is described once, where it is found, with byte offsets into the
 * capture.  A gap inside a dump is damage (a snapshot's frames go out back
 * to back), except console text between two frames: whole lines of
 * printable ASCII from one frame's last byte to the next frame's magic.
 * A stream (trace.record=serial) holds the console for each frame, so
 * lines other CPUs print come out there; they go to the caller as text.
 * Text inside a frame still breaks its CRC, and a frame lost whole still
 * leaves its seq missing: console text hides no damage.
 * Text before and after a dump is not damage either.
 *
 * Nothing here trusts the capture: every length is checked against what
 * is left before it is used, counts are saturated, and payloads are
 * copied to aligned memory before they are read as structs.
 */
#include <stdarg.h>

#include <lib/format.h>
#include <lib/crc32.h>
#include <trace/dump_pack.h>
#include <trace/dump_read.h>

#include "dump_scan.h"

#define REPORT_LINE_MAX	320

/* ---- processing one dump ---- */

/* A page accepted, in frame order (fill pass only). */
struct page_ref {
	const void *copy;		/* its bytes in the arena */
	struct dump_page_info info;	/* its frame info */
};

struct proc {
	const uint8_t *cap;		/* the capture */
	size_t len;			/* its length */
	const struct dump_read_opts *o;	/* caller's options */
	struct dump_result *r;		/* result being built */
	bool fill;			/* second pass: fill the arena and report */

	/* sequence and completeness */
	bool any;			/* a frame of this dump was seen */
	uint32_t expect;		/* seq the next frame should have */
	uint32_t last_seq;		/* last frame accepted */
	size_t last_end;		/* and where it ended */
	bool gaps;			/* some seq went missing */
	uint32_t chain;			/* CRC over received CRC fields */
	uint32_t pages_rx;		/* PAGE frames received */
	uint64_t events_rx;		/* entries on accepted pages */

	/* what BEGIN set (or defaults) */
	uint32_t cpu_limit;		/* cpu ids accepted: below this */
	bool ring_ok;			/* pages are of a known format */
	uint32_t max_cpu;		/* highest cpu id seen + 1 */
	uint32_t max_data;		/* largest page data seen */

	/* arena */
	uint8_t *arena;			/* fill pass: the caller's arena */
	size_t used;			/* bytes handed out (layout() bounds them) */
	uint32_t nr_refs;		/* pages accepted so far */
	size_t copy_bytes;		/* their copies' bytes */
	uint32_t max_refs;		/* filling pass: room for refs (measured) */
	size_t max_copy;		/* filling pass: room for copies (measured) */
	struct page_ref *refs;		/* fill pass: pages in frame order */
	uint8_t *copies;		/* fill pass: where copies go */

	/* event descriptions (EVENTS frames) */
	uint32_t nr_descs;		/* accepted so far */
	size_t desc_bytes;		/* arena they take (measured, then reused) */
	uint32_t max_id;		/* highest id described + 1 */
	uint32_t max_descs;		/* filling pass: room measured */
	size_t max_desc_bytes;
	uint8_t *desc_mem;		/* fill pass: where they go */
	size_t desc_used;
	const struct trace_event_def **by_id; /* fill pass: max_id entries */
	struct trace_catalog catalog;	/* fill pass: by_id and its size */

	/* the symbol table (SYMS frames) */
	uint32_t nr_syms;		/* symbols received (measured, then refilled) */
	uint32_t max_syms;		/* fill pass: room measured */
	uint64_t *sym_addrs;		/* fill pass: max_syms entries */
	const char **sym_names;
	uint64_t sym_end;		/* from the frames */
	bool syms_bad;			/* out of order or malformed: not used */

	/* trace_printk formats (PRINTK frames) */
	uint32_t nr_fmts, max_fmts;
	uint64_t *fmt_addrs;
	const char **fmt_texts;

	/* deferred reports */
	bool bad_pending;		/* a bad frame waits for its extent */
	struct dump_item bad;		/* that frame */
	size_t bad_to;			/* bytes after it up to the next item */
	bool gap_pending;		/* non-frame bytes inside the dump */
	size_t gap_off, gap_end;	/* their range */
	bool outside;			/* no dump at all: gaps are console text */

	/* PACK frames: each unpacked here, then taken as its inner frame */
	struct pk_work pack;		/* the unpacker's models */
	uint64_t unpacked[(DUMP_MAX_PAYLOAD + 7) / 8]; /* the inner payload (aligned) */
};

static void report(struct proc *P, const char *fmt, ...) __printf(2, 3);

static void report(struct proc *P, const char *fmt, ...)
{
	char line[REPORT_LINE_MAX];
	va_list ap;

	if (!P->fill)
		return;
	P->r->problems++;
	if (!P->o->report)
		return;
	va_start(ap, fmt);
	kvsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	P->o->report(P->o->report_ctx, line);
}

const char *dump_frame_name(uint32_t type)
{
	static const char *const names[] = {
		[DUMP_FRAME_BEGIN] = "BEGIN", [DUMP_FRAME_CLOCK] = "CLOCK",
		[DUMP_FRAME_PAGE] = "PAGE", [DUMP_FRAME_STATS] = "STATS",
		[DUMP_FRAME_EVENTS] = "EVENTS", [DUMP_FRAME_SYMS] = "SYMS",
		[DUMP_FRAME_PRINTK] = "PRINTK", [DUMP_FRAME_TRUST] = "TRUST",
		[DUMP_FRAME_CALIB] = "CALIB", [DUMP_FRAME_PACK] = "PACK",
		[DUMP_FRAME_END] = "END",
	};

	return type < sizeof(names) / sizeof(names[0]) && names[type] ? names[type] : "type?";
}

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Report a bad frame now that its extent (bad_to) is known. */
static void flush_bad(struct proc *P, bool at_end)
{
	const struct dump_item *b = &P->bad;
	const struct dump_frame_header *h = &b->h;
	size_t have = P->len - b->off;

	if (!P->bad_pending)
		return;
	P->bad_pending = false;
	switch (b->reason) {
	case BAD_SHORT_HEADER:
		report(P, "capture ends inside a frame header at byte offset %llu "
		       "(%llu of %u bytes present)", ull(b->off), ull(have), DUMP_HEADER_SIZE);
		return;
	case BAD_TRUNCATED:
		if (at_end) {
			report(P, "capture ends inside frame seq %u (%s) at byte offset %llu: "
			       "%llu of %llu bytes present", h->seq, dump_frame_name(h->type),
			       ull(b->off), ull(have), ull(DUMP_FRAME_OVERHEAD + (uint64_t)h->len));
			return;
		}
		report(P, "frame at byte offset %llu: its length (%u) runs past the end of "
		       "the capture, but frames follow: damaged header; skipped %llu bytes "
		       "to byte offset %llu", ull(b->off), h->len, ull(P->bad_to - b->off),
		       ull(P->bad_to));
		return;
	case BAD_LENGTH:
		report(P, "frame at byte offset %llu: header claims a %u-byte payload "
		       "(at most %u); skipped %llu bytes to byte offset %llu", ull(b->off),
		       h->len, (unsigned)DUMP_MAX_PAYLOAD, ull(P->bad_to - b->off),
		       ull(P->bad_to));
		return;
	case BAD_VERSION:
		report(P, "frame seq %u at byte offset %llu: format version %u unknown "
		       "(this reader knows %u); skipped", h->seq, ull(b->off), h->version,
		       DUMP_VERSION);
		return;
	case BAD_HEADER:
		report(P, "frame at byte offset %llu: damaged header (type %u with a %u-byte "
		       "payload); skipped %llu bytes to byte offset %llu", ull(b->off), h->type,
		       h->len, ull(P->bad_to - b->off), ull(P->bad_to));
		return;
	default:
		report(P, "frame seq %u (%s) at byte offset %llu: bad CRC (stored 0x%08x, "
		       "computed 0x%08x); skipped %llu bytes to byte offset %llu", h->seq,
		       dump_frame_name(h->type), ull(b->off), b->crc, b->crc_calc,
		       ull(P->bad_to - b->off), ull(P->bad_to));
		return;
	}
}

/*
 * Is b[0 .. n) console text: lines of printable ASCII (tab, CR too), the
 * last one ended by its newline?  Frame bytes (PACK coding, CRCs, stamps)
 * almost never are, over more than a few bytes.
 */
static bool console_text(const uint8_t *b, size_t n)
{
	if (!n || b[n - 1] != '\n')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((b[i] < 0x20 || b[i] > 0x7e) && b[i] != '\t' && b[i] != '\r' && b[i] != '\n')
			return false;
	return true;
}

/* Hand the pending gap's lines, without their line ends, to the caller. */
static void put_console(struct proc *P)
{
	const uint8_t *b = P->cap;
	size_t i = P->gap_off, start = i, stop;

	for (; i < P->gap_end; i++) {
		if (b[i] != '\n')
			continue;
		for (stop = i; stop > start && b[stop - 1] == '\r'; stop--)
			;
		if (stop > start) {
			P->r->console_lines++;
			if (P->o->console)
				P->o->console(P->o->report_ctx, start, (const char *)b + start,
					      stop - start);
		}
		start = i + 1;
	}
}

/*
 * The pending gap, now that an item of the dump follows it: console text
 * if it is text, else damage.  A gap lies between two frames, good or not
 * (bytes after a bad frame are its own): one that follows a bad frame or
 * precedes one is reported by that frame.
 */
static void flush_gap(struct proc *P)
{
	if (!P->gap_pending)
		return;
	P->gap_pending = false;
	if (P->outside)
		return;
	if (console_text(P->cap + P->gap_off, P->gap_end - P->gap_off)) {
		if (P->fill) {
			P->r->console_bytes += P->gap_end - P->gap_off;
			put_console(P);
		}
		return;
	}
	if (P->any)
		report(P, "%llu bytes of non-frame data inside the dump at byte offsets "
		       "%llu..%llu (after frame seq %u)", ull(P->gap_end - P->gap_off),
		       ull(P->gap_off), ull(P->gap_end - 1), P->last_seq);
	else
		report(P, "%llu bytes of non-frame data inside the dump at byte offsets "
		       "%llu..%llu (before its first good frame)", ull(P->gap_end - P->gap_off),
		       ull(P->gap_off), ull(P->gap_end - 1));
}

/* Arena allocation, 8-byte aligned; NULL in the measuring pass. */
static void *arena_take(struct proc *P, size_t n)
{
	size_t at = (P->used + 7u) & ~(size_t)7u;

	P->used = at + n;
	if (!P->fill)
		return 0;
	return P->arena + at;
}

static bool pow2_in(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

static void do_begin(struct proc *P, const struct dump_item *it)
{
	struct dump_result *r = P->r;
	struct dump_begin b;

	if (it->h.len != sizeof(b)) {
		report(P, "BEGIN frame: payload of %u bytes, expected %u; ignored", it->h.len,
		       (unsigned)sizeof(b));
		return;
	}
	__builtin_memcpy(&b, it->payload, sizeof(b));
	if (b.nr_cpus == 0 || b.nr_cpus > DUMP_MAX_CPUS ||
	    !pow2_in(b.page_size, RB_PAGE_SIZE_MIN, RB_PAGE_SIZE_MAX)) {
		report(P, "BEGIN frame: nr_cpus=%u page_size=%u make no sense; ignored",
		       b.nr_cpus, b.page_size);
		return;
	}
	r->has_begin = true;
	r->begin = b;
	P->cpu_limit = b.nr_cpus;
	if (b.ring_version != RB_FORMAT_VERSION) {
		P->ring_ok = false;
		report(P, "BEGIN frame: ring page format version %u unknown (this reader "
		       "knows %u): pages cannot be decoded", b.ring_version, RB_FORMAT_VERSION);
	}
	if (b.events_version != DUMP_EVENTS_VERSION)
		report(P, "BEGIN frame: event set version %u, this reader knows %u: event "
		       "names and fields may be wrong", b.events_version, DUMP_EVENTS_VERSION);
}

static bool cpu_ok(struct proc *P, const struct dump_item *it, uint32_t cpu)
{
	if (cpu < P->cpu_limit)
		return true;
	report(P, "frame seq %u (%s): cpu %u out of range (%u CPUs); ignored", it->h.seq,
	       dump_frame_name(it->h.type), cpu, P->cpu_limit);
	return false;
}

/*
 * The CPU a per-CPU frame describes (its id counted in both passes), or
 * NULL: out of range (reported), or the measuring pass.
 */
static struct dump_cpu *frame_cpu(struct proc *P, const struct dump_item *it, uint32_t cpu)
{
	if (!cpu_ok(P, it, cpu))
		return 0;
	if (cpu + 1 > P->max_cpu)
		P->max_cpu = cpu + 1;
	if (!P->fill || cpu >= P->r->nr_cpus)
		return 0;
	return &P->r->cpus[cpu];
}

static void do_clock(struct proc *P, const struct dump_item *it)
{
	struct dump_clock c;
	struct dump_cpu *dc;

	if (it->h.len != sizeof(c)) {
		report(P, "frame seq %u (CLOCK): payload of %u bytes, expected %u; ignored",
		       it->h.seq, it->h.len, (unsigned)sizeof(c));
		return;
	}
	__builtin_memcpy(&c, it->payload, sizeof(c));
	dc = frame_cpu(P, it, c.cpu);
	if (!dc)
		return;
	if (dc->has_clock) {
		report(P, "frame seq %u (CLOCK): second clock of cpu %u; ignored", it->h.seq,
		       c.cpu);
		return;
	}
	/*
	 * A conversion that fails the check is one the kernel's clock code
	 * cannot have made, or an offset no measured skew explains: its times
	 * would be wrong while looking trusted (or all 0, for mult 0).  It is
	 * kept here and replaced by a stand-in once every CLOCK is in
	 * (finish()); the frame itself is intact, so this is no damage.
	 */
	dc->has_clock = true;
	dc->clock = c;
	dc->clock_state = trace_clock_state(&c);
	if (dc->clock_state == TRACE_CLOCK_INVALID)
		trace_clock_check(&c, dc->clock_note, sizeof(dc->clock_note));
}

/*
 * TRUST: when a CPU's clock stopped being trusted.  Checked against its
 * CLOCK in finish(), once every frame is in: a trust that ended on a clock
 * the CLOCK frame calls trusted, or an end after its finding, is one the
 * kernel cannot have sent; it is dropped (reported), and the CPU's events
 * keep what the CLOCK frame says of all of them.
 */
static void do_trust(struct proc *P, const struct dump_item *it)
{
	struct dump_trust t;
	struct dump_cpu *dc;

	__builtin_memcpy(&t, it->payload, sizeof(t));	/* the scan checked the length */
	dc = frame_cpu(P, it, t.cpu);
	if (!dc)
		return;
	if (dc->has_trust) {
		report(P, "frame seq %u (TRUST): second TRUST of cpu %u; ignored", it->h.seq,
		       t.cpu);
		return;
	}
	if (t.from_ns > t.found_ns) {
		report(P, "frame seq %u (TRUST): cpu %u's trust ends at %lld ns, after the fault "
		       "was found at %lld ns; ignored", it->h.seq, t.cpu, (long long)t.from_ns,
		       (long long)t.found_ns);
		return;
	}
	dc->has_trust = true;
	dc->trust = t;
}

/* A CALIB string: printable ASCII up to its NUL, which must be there. */
static bool calib_str_ok(const char *s, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		if (!s[i])
			return true;
		if (s[i] < 0x20 || s[i] >= 0x7f)
			return false;
	}
	return false;
}

static void do_calib(struct proc *P, const struct dump_item *it)
{
	struct dump_calib c;

	__builtin_memcpy(&c, it->payload, sizeof(c));	/* the scan checked the length */
	if (!P->fill)
		return;
	if (P->r->has_calib) {
		report(P, "frame seq %u (CALIB): a second CALIB frame; ignored", it->h.seq);
		return;
	}
	if (!calib_str_ok(c.ref, sizeof(c.ref)) || !calib_str_ok(c.used, sizeof(c.used)) ||
	    !calib_str_ok(c.left_out, sizeof(c.left_out))) {
		report(P, "frame seq %u (CALIB): a reference name is not printable text ending "
		       "in NUL; ignored", it->h.seq);
		return;
	}
	P->r->has_calib = true;
	P->r->calib = c;
}

static void do_stats(struct proc *P, const struct dump_item *it)
{
	struct dump_stats st;
	struct dump_cpu *dc;

	if (it->h.len != sizeof(st)) {
		report(P, "frame seq %u (STATS): payload of %u bytes, expected %u; ignored",
		       it->h.seq, it->h.len, (unsigned)sizeof(st));
		return;
	}
	__builtin_memcpy(&st, it->payload, sizeof(st));
	dc = frame_cpu(P, it, st.cpu);
	if (!dc)
		return;
	if (dc->has_stats) {
		report(P, "frame seq %u (STATS): second STATS of cpu %u; ignored", it->h.seq,
		       st.cpu);
		return;
	}
	st.stop_reason[DUMP_STOP_REASON_MAX - 1] = 0;
	dc->has_stats = true;
	dc->stats = st;
}

static void do_page(struct proc *P, const struct dump_item *it)
{
	const uint32_t isz = sizeof(struct dump_page_info);
	struct dump_page_info info;
	struct rb_page_header hdr;
	uint32_t max_data = P->r->has_begin ? P->r->begin.page_size : RB_PAGE_SIZE_MAX;
	const char *why = 0;

	P->pages_rx++;
	if (!P->ring_ok)
		return;	/* reported with BEGIN */
	if (it->h.len < isz + RB_PAGE_HEADER_SIZE) {
		report(P, "frame seq %u (PAGE): payload of %u bytes is too short for a page; "
		       "ignored", it->h.seq, it->h.len);
		return;
	}
	__builtin_memcpy(&info, it->payload, isz);
	__builtin_memcpy(&hdr, it->payload + isz, sizeof(hdr));
	if (!cpu_ok(P, it, info.cpu))
		return;
	if (info.data_len != it->h.len - isz)
		why = "data length disagrees with the frame length";
	else if (info.data_len > max_data)
		why = "more data than a page holds";
	else if (hdr.cpu != info.cpu)
		why = "page header names another CPU";
	else if (hdr.version != RB_FORMAT_VERSION)
		why = "page header has an unknown version";
	else if (hdr.commit % 4u || hdr.commit > info.data_len - RB_PAGE_HEADER_SIZE)
		why = "page header's commit runs past the data";
	else if (hdr.pos != info.pos)
		why = "page header's pos disagrees with the frame";
	if (why) {
		report(P, "frame seq %u (PAGE) at byte offset %llu: cpu %u page pos %llu: %s; "
		       "ignored", it->h.seq, ull(it->off), info.cpu, ull(info.pos), why);
		return;
	}
	if (info.cpu + 1 > P->max_cpu)
		P->max_cpu = info.cpu + 1;
	if (info.data_len > P->max_data)
		P->max_data = info.data_len;
	P->events_rx = sat_add(P->events_rx, hdr.entries);
	if (P->fill) {
		struct page_ref *ref = &P->refs[P->nr_refs];
		uint8_t *copy = P->copies + P->copy_bytes;

		/* Both passes decide alike; this only guards the arena. */
		if (P->nr_refs >= P->max_refs || info.cpu >= P->r->nr_cpus ||
		    P->copy_bytes + info.data_len > P->max_copy)
			return;
		__builtin_memcpy(copy, it->payload + isz, info.data_len);
		ref->copy = copy;
		ref->info = info;
	}
	P->nr_refs++;
	P->copy_bytes += (info.data_len + 7u) & ~7u;
}

static void do_end(struct proc *P, const struct dump_item *it)
{
	struct dump_result *r = P->r;
	struct dump_end e;
	uint32_t frames = it->h.seq;	/* checked against e.frames below */

	if (it->h.len != sizeof(e)) {
		report(P, "END frame: payload of %u bytes, expected %u; ignored", it->h.len,
		       (unsigned)sizeof(e));
		return;
	}
	__builtin_memcpy(&e, it->payload, sizeof(e));
	r->has_end = true;
	r->end = e;
	if (e.frames != frames || e.pages != P->pages_rx || e.events != P->events_rx ||
	    P->gaps) {
		report(P, "END frame: the dump had %u frames before END with %u pages and %llu "
		       "events; received %u frames (%s), %u pages, %llu events (%llu events "
		       "on pages not decoded)", e.frames, e.pages, ull(e.events), r->frames - 1,
		       P->gaps ? "with gaps" : "no gaps", P->pages_rx, ull(P->events_rx),
		       ull(e.events > P->events_rx ? e.events - P->events_rx : 0));
		return;
	}
	if (e.chain != crc32_final(P->chain)) {
		report(P, "END frame: chain checksum 0x%08x, received frames give 0x%08x: "
		       "frames were replaced or reordered", e.chain, crc32_final(P->chain));
		return;
	}
	r->complete = true;
}

/* ---- EVENTS frames: descriptions ---- */

/* A reading cursor over one frame's payload; any overrun sets bad. */
struct ev_dec {
	const uint8_t *p;
	uint32_t len, at;
	bool bad;
	const char *why;		/* the first rule broken */
};

static const uint8_t *dec_take(struct ev_dec *d, uint32_t n)
{
	const uint8_t *q = d->p + d->at;

	if (d->bad || n > d->len - d->at) {
		if (!d->bad)
			d->why = "the description ends early";
		d->bad = true;
		return 0;
	}
	d->at += n;
	return q;
}

static uint32_t dec_u8(struct ev_dec *d) { const uint8_t *q = dec_take(d, 1); return q ? q[0] : 0; }
static uint32_t dec_u16(struct ev_dec *d)
{
	const uint8_t *q = dec_take(d, 2);

	return q ? (uint32_t)q[0] | (uint32_t)q[1] << 8 : 0;
}
static uint64_t dec_u64(struct ev_dec *d)
{
	const uint8_t *q = dec_take(d, 8);
	uint64_t v = 0;

	for (int i = 7; q && i >= 0; i--)
		v = v << 8 | q[i];
	return v;
}

static void dec_fail(struct ev_dec *d, const char *why)
{
	if (!d->bad)
		d->why = why;
	d->bad = true;
}

/* Arena for descriptions: counted in the measuring pass, filled in the second. */
static void *desc_take(struct proc *P, size_t n)
{
	size_t at = (P->desc_used + 7u) & ~(size_t)7u;

	P->desc_used = at + n;
	if (!P->fill || P->desc_used > P->max_desc_bytes)
		return 0;
	return P->desc_mem + at;
}

static bool ident_ok(const uint8_t *s, uint32_t n)
{
	if (n < 1 || n > DUMP_NAME_MAX || !((s[0] >= 'a' && s[0] <= 'z') ||
					     (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
		return false;
	for (uint32_t i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static bool text_ok(const uint8_t *s, uint32_t n, uint32_t max)
{
	if (n > max)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

/* A string: checked, copied NUL-terminated into the arena (fill pass). */
static const char *dec_str(struct proc *P, struct ev_dec *d, bool ident, uint32_t max,
			   const char *what)
{
	uint32_t n = dec_u16(d);
	const uint8_t *s = dec_take(d, n);
	char *c;

	if (!s)
		return 0;
	if (ident ? !ident_ok(s, n) : !text_ok(s, n, max)) {
		dec_fail(d, what);
		return 0;
	}
	c = desc_take(P, n + 1u);
	if (c) {
		__builtin_memcpy(c, s, n);
		c[n] = 0;
	}
	return c ? c : "";
}

/* A field's shape, as <trace/event_fmt.h>'s parser will rely on it. */
static const char *field_rule(const struct trace_field_def *f, uint32_t fixed)
{
	if (f->offset < 4 || f->offset + (uint32_t)f->size > fixed)
		return "a field lies outside the fixed part";
	switch (f->kind) {
	case TRACE_FIELD_INT:
		if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
			return "an integer field is not 1, 2, 4 or 8 bytes";
		return f->display > TRACE_DISPLAY_BOOL ? "an unknown display" : 0;
	case TRACE_FIELD_SYM:
		return f->size == 8 ? 0 : "a code address field is not 8 bytes";
	case TRACE_FIELD_CHARS:
		return f->size >= 1 ? 0 : "a char array of 0 bytes";
	case TRACE_FIELD_STR:
		return f->size == 4 && f->max >= 1 && f->max <= TRACE_STR_MAX ? 0 :
		       "a string field's slot or bound is wrong";
	case TRACE_FIELD_ENUM:
		return f->size == 4 ? 0 : "an enum field is not 4 bytes";
	case TRACE_FIELD_BPRINT:
		return f->size == 4 && f->max <= TRACE_BPRINT_ARGS_MAX ? 0 :
		       "a trace_printk argument field's slot or bound is wrong";
	}
	return "an unknown field kind";
}

static void do_events(struct proc *P, const struct dump_item *it)
{
	struct ev_dec d = { it->payload, it->h.len, 0, false, 0 };
	struct trace_event_def *e = desc_take(P, sizeof(*e));
	struct trace_field_def *fs;
	uint32_t id, fixed, nf, flags;
	id = dec_u16(&d);
	fixed = dec_u16(&d);
	nf = dec_u8(&d);
	flags = dec_u8(&d);	/* bits it does not know: from a later kernel, ignored */
	if (id == 0 || id == 0xffffu)
		dec_fail(&d, "id 0 or 65535");
	if (fixed < 4 || fixed % 4 || fixed > TRACE_EVENT_PAYLOAD_MAX)
		dec_fail(&d, "the fixed part's size is not a multiple of 4 in 4..1024");
	if (nf > TRACE_EVENT_FIELDS_MAX)
		dec_fail(&d, "more than 8 fields");
	fs = desc_take(P, sizeof(*fs) * (nf ? nf : 1));
	if (e) {
		e->id = (uint16_t)id;
		e->fixed = (uint16_t)fixed;
		e->nfields = (uint8_t)nf;
		e->flags = (uint8_t)(flags & TRACE_EVENT_FLAGS_KNOWN);
		e->fields = fs;
	}
	{
		const char *sys = dec_str(P, &d, true, 0, "a system name is not an identifier");
		const char *name = dec_str(P, &d, true, 0, "an event name is not an identifier");
		const char *fmt = dec_str(P, &d, false, DUMP_FMT_MAX, "the print format is not plain text");
		if (e) {
			e->system = sys;
			e->name = name;
			e->fmt = fmt;
		}
	}
	for (uint32_t i = 0; i < nf && !d.bad; i++) {
		struct trace_field_def f = { 0 };
		struct trace_enum_entry *en;
		const char *rule;

		f.name = dec_str(P, &d, true, 0, "a field name is not an identifier");
		f.kind = (uint8_t)dec_u8(&d);
		f.display = (uint8_t)dec_u8(&d);
		f.is_signed = (uint8_t)(dec_u8(&d) != 0);
		dec_u8(&d);
		f.offset = (uint16_t)dec_u16(&d);
		f.size = (uint16_t)dec_u16(&d);
		f.max = (uint16_t)dec_u16(&d);
		f.nenums = (uint16_t)dec_u16(&d);
		if (!d.bad && (rule = field_rule(&f, fixed)))
			dec_fail(&d, rule);
		if (f.kind != TRACE_FIELD_ENUM && f.nenums)
			dec_fail(&d, "enum entries on a field that is no enum");
		en = desc_take(P, sizeof(*en) * (f.nenums ? f.nenums : 1));
		for (uint32_t k = 0; k < f.nenums && !d.bad; k++) {
			uint64_t v = dec_u64(&d);
			const char *n = dec_str(P, &d, false, DUMP_NAME_MAX,
						"an enum name is not plain text");
			if (en) {
				en[k].value = v;
				en[k].name = n;
			}
		}
		f.enums = en;
		if (fs)
			fs[i] = f;
	}
	if (!d.bad && d.at != d.len)
		dec_fail(&d, "bytes follow the description");
	if (!d.bad && P->fill && P->by_id && id < P->catalog.nr_ids && P->by_id[id])
		dec_fail(&d, "its id is described twice");
	if (d.bad) {
		report(P, "EVENTS frame seq %u at byte offset %llu: %s; that event is not "
		       "described", it->h.seq, ull(it->off), d.why);
		return;
	}
	P->nr_descs++;
	if (id + 1 > P->max_id)
		P->max_id = id + 1;
	if (P->fill && P->by_id && id < P->catalog.nr_ids)
		P->by_id[id] = e;
}

static void do_syms(struct proc *P, const struct dump_item *it)
{
	struct ev_dec d = { it->payload, it->h.len, 0, false, 0 };
	uint64_t end = dec_u64(&d);
	uint32_t n, i;

	n = dec_u16(&d);
	n |= dec_u16(&d) << 16;
	if (n == 0 || n > DUMP_SYMS_PER_FRAME)
		dec_fail(&d, "a symbol count out of 1..256");
	for (i = 0; i < n && !d.bad; i++) {
		uint64_t addr = dec_u64(&d);
		uint32_t len = dec_u16(&d);
		const uint8_t *s = dec_take(&d, len);
		uint32_t k = P->nr_syms + i;
		char *c;

		if (!s)
			break;
		if (!text_ok(s, len, DUMP_SYM_NAME_MAX) || len == 0) {
			dec_fail(&d, "a symbol name is not plain text");
			break;
		}
		if (addr >= end || (k > 0 && P->fill && k <= P->max_syms && P->sym_addrs &&
				    addr < P->sym_addrs[k - 1])) {
			dec_fail(&d, "symbol addresses out of order");
			break;
		}
		c = desc_take(P, len + 1u);
		if (P->fill && k < P->max_syms && c) {
			__builtin_memcpy(c, s, len);
			c[len] = 0;
			P->sym_addrs[k] = addr;
			P->sym_names[k] = c;
		}
	}
	if (!d.bad && d.at != d.len)
		dec_fail(&d, "bytes follow the symbols");
	if (!d.bad && P->nr_syms && end != P->sym_end)
		dec_fail(&d, "its end differs from the other SYMS frames'");
	if (d.bad) {
		if (!P->syms_bad)
			report(P, "SYMS frame seq %u at byte offset %llu: %s; code addresses are "
			       "printed as numbers", it->h.seq, ull(it->off), d.why);
		P->syms_bad = true;
		return;
	}
	P->sym_end = end;
	P->nr_syms += n;
}

static bool format_text_ok(const uint8_t *s, uint32_t n)
{
	if (n < 1 || n > DUMP_PRINTK_FMT_MAX)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if ((s[i] < 0x20 && s[i] != '\n' && s[i] != '\t') || s[i] >= 0x7f)
			return false;
	return true;
}

static void do_printk(struct proc *P, const struct dump_item *it)
{
	struct ev_dec d = { it->payload, it->h.len, 0, false, 0 };
	uint32_t n, i;

	(void)dec_u64(&d);
	n = dec_u16(&d);
	n |= dec_u16(&d) << 16;
	if (n == 0 || n > DUMP_SYMS_PER_FRAME)
		dec_fail(&d, "a format count out of 1..256");
	for (i = 0; i < n && !d.bad; i++) {
		uint64_t addr = dec_u64(&d);
		uint32_t len = dec_u16(&d), k = P->nr_fmts + i;
		const uint8_t *s = dec_take(&d, len);
		char *c;

		if (!s)
			break;
		if (!format_text_ok(s, len)) {
			dec_fail(&d, "a format is not plain text");
			break;
		}
		c = desc_take(P, len + 1u);
		if (P->fill && k < P->max_fmts && c) {
			__builtin_memcpy(c, s, len);
			c[len] = 0;
			P->fmt_addrs[k] = addr;
			P->fmt_texts[k] = c;
		}
	}
	if (!d.bad && d.at != d.len)
		dec_fail(&d, "bytes follow the formats");
	if (d.bad) {
		report(P, "PRINTK frame seq %u at byte offset %llu: %s; its formats are not used",
		       it->h.seq, ull(it->off), d.why);
		return;
	}
	P->nr_fmts += n;
}

static void do_payload(struct proc *P, const struct dump_item *it);

/*
 * A PACK frame: its inner frame unpacked (<trace/dump_pack.h>), then taken
 * as if it had come itself, under the PACK frame's seq and offset.  Only
 * frames a packer packs may be inside, with a length their type can have.
 */
static void do_pack(struct proc *P, const struct dump_item *it)
{
	struct dump_item in = *it;
	uint32_t type = 0, len = 0;
	const char *why;

	why = dump_unpack(&P->pack, it->payload, it->h.len, (uint8_t *)P->unpacked,
			  sizeof(P->unpacked), &type, &len);
	in.h.type = (uint8_t)type;
	in.h.len = len;
	in.payload = (const uint8_t *)P->unpacked;
	if (!why && type != DUMP_FRAME_PAGE && type != DUMP_FRAME_EVENTS &&
	    type != DUMP_FRAME_SYMS && type != DUMP_FRAME_PRINTK)
		why = "its inner frame is of a type never packed";
	else if (!why && !dump_header_plausible(&in.h))
		why = "its inner frame's length does not fit its type";
	if (why) {
		report(P, "frame seq %u (PACK of type %u) at byte offset %llu: %s; ignored",
		       it->h.seq, type, ull(it->off), why);
		if (type == DUMP_FRAME_PAGE)
			P->pages_rx++;	/* END counts it among the pages */
		return;
	}
	do_payload(P, &in);
}

/* A frame's payload, by its type (a PACK frame's inner frame too). */
static void do_payload(struct proc *P, const struct dump_item *it)
{
	uint32_t seq = it->h.seq;

	switch (it->h.type) {
	case DUMP_FRAME_BEGIN:
		if (seq != 0)
			report(P, "BEGIN frame at byte offset %llu has seq %u, not 0", ull(it->off),
			       seq);
		do_begin(P, it);
		break;
	case DUMP_FRAME_CLOCK:
		do_clock(P, it);
		break;
	case DUMP_FRAME_PAGE:
		do_page(P, it);
		break;
	case DUMP_FRAME_STATS:
		do_stats(P, it);
		break;
	case DUMP_FRAME_END:
		do_end(P, it);
		break;
	case DUMP_FRAME_EVENTS:
		do_events(P, it);
		break;
	case DUMP_FRAME_SYMS:
		do_syms(P, it);
		break;
	case DUMP_FRAME_PRINTK:
		do_printk(P, it);
		break;
	case DUMP_FRAME_TRUST:
		do_trust(P, it);
		break;
	case DUMP_FRAME_CALIB:
		do_calib(P, it);
		break;
	case DUMP_FRAME_PACK:
		do_pack(P, it);
		break;
	default:
		report(P, "frame seq %u at byte offset %llu: unknown type %u; ignored", seq,
		       ull(it->off), it->h.type);
		break;
	}
}

static void do_frame(struct proc *P, const struct dump_item *it)
{
	struct dump_result *r = P->r;
	uint32_t seq = it->h.seq;

	if (!P->any && seq != 0) {
		report(P, "missing frames seq 0..%u (the dump's start, BEGIN included)", seq - 1);
		P->gaps = true;
	} else if (P->any && seq > P->expect) {
		report(P, "missing frames seq %u..%u", P->expect, seq - 1);
		P->gaps = true;
	} else if (P->any && seq < P->expect) {
		report(P, "frame seq %u (%s) at byte offset %llu repeats or goes back (expected "
		       "seq %u); ignored", seq, dump_frame_name(it->h.type), ull(it->off),
		       P->expect);
		return;
	}
	P->any = true;
	P->expect = seq + 1;
	P->last_seq = seq;
	P->last_end = it->end;
	r->frames++;

	do_payload(P, it);
	if (it->h.type != DUMP_FRAME_END)
		P->chain = crc32_update(P->chain, &it->crc, sizeof(it->crc));
}

/* Walk the dump's range: every item from start, until one past end. */
static void walk(struct proc *P, size_t start, size_t end)
{
	struct dump_scanner s = { P->cap, P->len, start };
	struct dump_item it;

	for (dump_scan_next(&s, &it); it.kind != SCAN_EOF; dump_scan_next(&s, &it)) {
		if (it.kind == SCAN_GAP) {
			if (P->bad_pending) {
				P->bad_to = it.end;	/* debris after a bad frame is its own */
				continue;
			}
			if (it.off >= end)
				break;
			P->gap_pending = true;
			P->gap_off = it.off;
			P->gap_end = it.end;
			continue;
		}
		flush_bad(P, false);
		if (it.off >= end)
			break;
		flush_gap(P);
		if (it.kind == SCAN_BAD) {
			P->bad_pending = true;
			P->bad = it;
			P->bad_to = it.end;
			continue;
		}
		do_frame(P, &it);
	}
	flush_bad(P, it.kind == SCAN_EOF);
	/* A trailing gap runs into console text after the dump: not damage. */
	P->gap_pending = false;
}

/*
 * A stand-in conversion for a CPU whose own is missing or invalid, the
 * first that exists of:
 *   1. another CPU's valid conversion without its offset: where the
 *      CPUs' counters share a rate, as the kernel assumes, the times still
 *      interleave with the others' up to the skew;
 *   2. cycles since reset at BEGIN's tsc_hz;
 *   3. raw cycles taken as ns.
 * Each passes clock_conv_check() and never decreases in cycles, so the
 * CPU's events keep their order and merge by their own stamps, not all at
 * 0 (mult 0) or at the end of the range (an absurd offset).  Writes it into
 * dc->clock.conv and what it is into what[0 .. len); returns which.
 */
enum stand_in { STAND_IN_CPU, STAND_IN_HZ, STAND_IN_RAW };

static enum stand_in stand_in_clock(const struct dump_result *r, struct dump_cpu *dc,
				    char *what, size_t len)
{
	uint64_t hz = r->has_begin ? r->begin.tsc_hz : 0;
	uint32_t i;

	for (i = 0; i < r->nr_cpus; i++) {
		const struct dump_cpu *o = &r->cpus[i];

		if (o->has_clock && (o->clock_state == TRACE_CLOCK_TRUSTED ||
				     o->clock_state == TRACE_CLOCK_UNTRUSTED)) {
			dc->clock.conv = o->clock.conv;
			dc->clock.conv.offset_ns = 0;
			ksnprintf(what, len, "use cpu %u's conversion without offset", i);
			return STAND_IN_CPU;
		}
	}
	if (hz == 0 || clock_conv_init(&dc->clock.conv, hz, 0, 0)) {
		clock_conv_init(&dc->clock.conv, CLOCK_NSEC_PER_SEC, 0, 0);
		ksnprintf(what, len, "are raw cycles (as ns)");
		return STAND_IN_RAW;
	}
	ksnprintf(what, len, "are cycles since reset at %llu Hz", ull(hz));
	return STAND_IN_HZ;
}

/* The stand-in of a CPU without a CLOCK frame: damage, reported. */
static void clock_missing(struct proc *P, struct dump_cpu *dc)
{
	char what[80];
	enum stand_in k;

	dc->clock_state = TRACE_CLOCK_MISSING;
	dc->clock.cpu = dc->cpu;
	k = stand_in_clock(P->r, dc, what, sizeof(what));
	report(P, "cpu %u: no CLOCK frame%s: its times %s and are marked untrusted", dc->cpu,
	       k == STAND_IN_RAW ? " and no frequency" : "", what);
}

/* The stand-in of a CPU whose CLOCK is invalid; the note says both. */
static void clock_invalid(struct proc *P, struct dump_cpu *dc)
{
	char what[80];
	size_t n = 0;

	stand_in_clock(P->r, dc, what, sizeof(what));
	while (n < sizeof(dc->clock_note) && dc->clock_note[n])
		n++;
	ksnprintf(dc->clock_note + n, sizeof(dc->clock_note) - n, "; its times %s", what);
	P->r->bad_clocks++;
}

/*
 * Events lost before each page.  Normally the frame's overrun + dropped.
 * If frames of this CPU went missing in the capture, the page headers
 * still tell how many events lie between two received pages: seq counts
 * stored events and dropped the drops, so the difference from the
 * previous page is exactly what the kernel's reader would have counted
 * across the missing pages, their own events included.
 */
static void count_lost(struct proc *P, struct dump_cpu *dc)
{
	const struct rb_page_header *p, *h;
	uint64_t reported, computed;
	uint32_t i;

	for (i = 0; i < dc->nr_pages; i++) {
		h = dc->pages[i];
		reported = sat_add(dc->info[i].lost_overrun, dc->info[i].lost_dropped);
		dc->lost[i] = reported;
		dc->events = sat_add(dc->events, h->entries);
		if (i == 0)
			continue;
		p = dc->pages[i - 1];
		if (h->seq < p->seq || h->seq - p->seq < p->entries || h->dropped < p->dropped)
			continue;
		computed = sat_add(h->seq - p->seq - p->entries, h->dropped - p->dropped);
		if (computed > reported) {
			report(P, "cpu %u: %llu events between pages pos %llu and %llu are missing "
			       "from the capture", dc->cpu, ull(computed - reported), ull(p->pos),
			       ull(h->pos));
			dc->lost[i] = computed;
		}
	}
}

/* After the walk (fill pass): per-CPU page arrays, clocks, checks. */
static void finish(struct proc *P)
{
	struct dump_result *r = P->r;
	uint32_t i, c, *fill;

	if (!r->has_begin)
		report(P, "no BEGIN frame: CPU count and page size are guessed from the frames "
		       "(%u CPUs, %u-byte pages)", r->nr_cpus, r->page_size);
	if (!r->has_end) {
		if (P->any)
			report(P, "no END frame: the last frame received is seq %u, ending at "
			       "byte offset %llu", P->last_seq, ull(P->last_end));
		else
			report(P, "no END frame, and no good frame of this dump at all");
	}

	/* Counting sort of the pages by CPU, keeping frame order. */
	for (i = 0; i < P->nr_refs; i++)
		r->cpus[P->refs[i].info.cpu].nr_pages++;
	fill = (uint32_t *)arena_take(P, sizeof(uint32_t) * (size_t)r->nr_cpus);
	for (c = 0, i = 0; c < r->nr_cpus; c++) {
		struct dump_cpu *dc = &r->cpus[c];

		dc->pages = (const void **)arena_take(P, sizeof(void *) * (size_t)dc->nr_pages);
		dc->lost = (uint64_t *)arena_take(P, sizeof(uint64_t) * (size_t)dc->nr_pages);
		dc->info = (struct dump_page_info *)
			arena_take(P, sizeof(struct dump_page_info) * (size_t)dc->nr_pages);
		fill[c] = 0;
	}
	for (i = 0; i < P->nr_refs; i++) {
		struct dump_cpu *dc = &r->cpus[P->refs[i].info.cpu];
		uint32_t k = fill[dc->cpu]++;

		dc->pages[k] = P->refs[i].copy;
		dc->info[k] = P->refs[i].info;
	}
	for (c = 0; c < r->nr_cpus; c++) {
		struct dump_cpu *dc = &r->cpus[c];

		if (!dc->has_clock)
			clock_missing(P, dc);
		else if (dc->clock_state == TRACE_CLOCK_INVALID)
			clock_invalid(P, dc);
		if (dc->has_trust && dc->clock_state != TRACE_CLOCK_UNTRUSTED) {
			report(P, "cpu %u: a TRUST frame for a clock that is %s; ignored", c,
			       dc->clock_state == TRACE_CLOCK_TRUSTED ? "trusted" :
			       dc->clock_state == TRACE_CLOCK_MISSING ? "missing" : "invalid");
			dc->has_trust = false;
		}
		if (!dc->has_stats)
			report(P, "cpu %u: no STATS frame", c);
		count_lost(P, dc);
		r->pages += dc->nr_pages;
		r->events = sat_add(r->events, dc->events);
	}
}

/*
 * Arena layout, in the order the filling pass takes it: CPUs, page refs,
 * page copies (both counted by the measuring pass), the event catalog
 * (its struct, by_id, the descriptions: measured too), then finish()'s
 * counters and per-CPU arrays.  Every piece but the counters is a
 * multiple of 8 bytes, so alignment adds nothing between them.
 */
static size_t layout(uint32_t nr_cpus, uint32_t nr_refs, size_t copy_bytes,
		     uint32_t max_id, size_t desc_bytes, uint32_t nr_syms, uint32_t nr_fmts)
{
	return sizeof(struct dump_cpu) * (size_t)nr_cpus +
	       (sizeof(uint64_t) + sizeof(char *)) * (size_t)nr_fmts +
	       ((sizeof(struct trace_symtab) + 7u) & ~(size_t)7u) +
	       (sizeof(uint64_t) + sizeof(char *)) * (size_t)nr_syms +
	       sizeof(struct page_ref) * (size_t)nr_refs + copy_bytes +
	       ((sizeof(struct trace_catalog) + 7u) & ~(size_t)7u) +
	       sizeof(void *) * (size_t)max_id + ((desc_bytes + 7u) & ~(size_t)7u) +
	       ((sizeof(uint32_t) * (size_t)nr_cpus + 7u) & ~(size_t)7u) +
	       (sizeof(void *) + sizeof(uint64_t) + sizeof(struct dump_page_info)) *
		       (size_t)nr_refs;
}

static void proc_init(struct proc *P, const void *cap, size_t len,
		      const struct dump_read_opts *o, struct dump_result *r)
{
	__builtin_memset(P, 0, sizeof(*P));
	P->cap = cap;
	P->len = len;
	P->o = o;
	P->r = r;
	P->cpu_limit = DUMP_MAX_CPUS;
	P->ring_ok = true;
	P->chain = CRC32_INIT;
}

/* Report every bad frame of a capture that holds no good one. */
static void report_all_bad(struct proc *P)
{
	P->fill = true;
	P->outside = true;
	walk(P, 0, P->len);
}

int dump_read(const void *capture, size_t len, const struct dump_read_opts *opts,
	      void *arena, size_t arena_size, struct dump_result *out)
{
	struct dump_segmenter g = { .which = opts->which };
	struct proc P;
	uint32_t nr_cpus, page_size, nr_refs, i, max_id, nr_syms, nr_fmts;
	size_t need, copy_bytes, desc_bytes;
	struct trace_catalog *cat;
	struct trace_symtab *syms;

	__builtin_memset(out, 0, sizeof(*out));
	dump_segment(capture, len, &g);
	out->nr_dumps = g.nr_dumps;
	if (g.nr_dumps == 0) {
		proc_init(&P, capture, len, opts, out);
		report_all_bad(&P);
		return DUMP_READ_NOTHING;
	}
	if (!g.found)
		return DUMP_READ_NO_SUCH_DUMP;

	/* Measuring pass. */
	proc_init(&P, capture, len, opts, out);
	walk(&P, g.sel_start, g.sel_end);
	nr_cpus = out->has_begin ? out->begin.nr_cpus : P.max_cpu;
	page_size = out->has_begin ? out->begin.page_size : RB_PAGE_SIZE_MIN;
	while (page_size < P.max_data)
		page_size *= 2;
	nr_refs = P.nr_refs;
	copy_bytes = P.copy_bytes;
	max_id = P.max_id;
	desc_bytes = P.desc_used;
	nr_syms = P.syms_bad ? 0 : P.nr_syms;
	nr_fmts = P.nr_fmts;
	need = layout(nr_cpus, nr_refs, copy_bytes, max_id, desc_bytes, nr_syms, nr_fmts);
	__builtin_memset(out, 0, sizeof(*out));
	out->nr_dumps = g.nr_dumps;
	out->arena_needed = need;
	out->nr_cpus = nr_cpus;
	out->page_size = page_size;
	if (!arena || arena_size < need || ((uintptr_t)arena & 7u))
		return DUMP_READ_ARENA;

	/* Filling pass: the same walk, now with memory and reports. */
	proc_init(&P, capture, len, opts, out);
	P.fill = true;
	P.arena = arena;
	P.max_refs = nr_refs;
	P.max_copy = copy_bytes;
	out->nr_cpus = nr_cpus;
	out->page_size = page_size;
	out->dump_id = g.sel_id;
	out->index = opts->which < 0 ? g.nr_dumps - 1 : (uint32_t)opts->which;
	out->start_off = g.sel_start;
	out->end_off = g.sel_end;
	out->cpus = arena_take(&P, sizeof(struct dump_cpu) * (size_t)nr_cpus);
	__builtin_memset(out->cpus, 0, sizeof(struct dump_cpu) * (size_t)nr_cpus);
	for (i = 0; i < nr_cpus; i++)
		out->cpus[i].cpu = i;
	P.refs = arena_take(&P, sizeof(struct page_ref) * (size_t)nr_refs);
	P.copies = arena_take(&P, copy_bytes);
	cat = arena_take(&P, sizeof(*cat));
	P.by_id = arena_take(&P, sizeof(void *) * (size_t)max_id);
	__builtin_memset(P.by_id, 0, sizeof(void *) * (size_t)max_id);
	P.catalog = (struct trace_catalog){ P.by_id, max_id };
	P.desc_mem = arena_take(&P, desc_bytes);
	P.max_desc_bytes = desc_bytes;
	syms = arena_take(&P, sizeof(*syms));
	P.sym_addrs = arena_take(&P, sizeof(uint64_t) * (size_t)nr_syms);
	P.sym_names = arena_take(&P, sizeof(char *) * (size_t)nr_syms);
	P.max_syms = nr_syms;
	P.fmt_addrs = arena_take(&P, sizeof(uint64_t) * (size_t)nr_fmts);
	P.fmt_texts = arena_take(&P, sizeof(char *) * (size_t)nr_fmts);
	P.max_fmts = nr_fmts;
	walk(&P, g.sel_start, g.sel_end);
	if (P.nr_descs) {	/* the capture describes its events: only those */
		*cat = P.catalog;
		out->catalog = cat;
	}
	if (P.nr_fmts == nr_fmts) {
		out->fmt_addrs = P.fmt_addrs;
		out->fmt_texts = P.fmt_texts;
		out->nr_fmts = nr_fmts;
	}
	if (P.nr_syms && !P.syms_bad && P.nr_syms == nr_syms) {
		*syms = (struct trace_symtab){ P.sym_addrs, P.sym_names, nr_syms, P.sym_end };
		out->syms = syms;
	}
	finish(&P);
	if (g.pending && out->index == g.nr_dumps - 1) {
		/* Bad frames after the last dump: a later one, cut or damaged. */
		report(&P, "damaged frames follow the dump from byte offset %llu: a later dump "
		       "was lost or cut short", ull(g.pending_off));
		P.outside = true;
		walk(&P, g.pending_off, len);
	}
	if (out->has_begin && out->has_end && out->complete && out->problems == 0)
		return DUMP_READ_OK;
	out->complete = out->complete && out->problems == 0;
	return DUMP_READ_DAMAGED;
}

void dump_text_cpus(const struct dump_result *r, struct trace_text_cpu *out)
{
	uint32_t i;

	for (i = 0; i < r->nr_cpus; i++) {
		const struct dump_cpu *dc = &r->cpus[i];

		out[i] = (struct trace_text_cpu){
			.cpu = dc->cpu,
			.clock_state = dc->clock_state,
			.clock = &dc->clock.conv,
			.clock_note = dc->clock_state == TRACE_CLOCK_INVALID && dc->clock_note[0] ?
				      dc->clock_note : 0,
			.trust = dc->has_trust ? &dc->trust : 0,
			.clock_frame = &dc->clock,
			.stats = dc->has_stats ? &dc->stats : 0,
			.page_size = r->page_size,
			.nr_pages = dc->nr_pages,
			.pages = dc->pages,
			.lost = dc->lost,
		};
	}
}

void dump_time_range(const struct dump_result *r, bool bases, int64_t *min, int64_t *max)
{
	int64_t ns;
	uint32_t c, i;

	*min = *max = 0;
	for (c = 0; c < r->nr_cpus; c++) {
		const struct dump_cpu *dc = &r->cpus[c];

		for (i = 0; i < dc->nr_pages; i++) {
			const struct rb_page_header *h = dc->pages[i];
			struct rb_page_iter it;
			struct rb_event ev;

			if (bases) {
				ns = clock_cycles_to_ns(&dc->clock.conv, h->base_ts);
				*min = ns < *min ? ns : *min;
				*max = ns > *max ? ns : *max;
			}
			if (rb_page_iter_init(&it, h, r->page_size) != RB_ITER_END)
				continue;
			while (rb_page_iter_next(&it, &ev) == RB_ITER_EVENT) {
				ns = clock_cycles_to_ns(&dc->clock.conv, ev.ts);
				*min = ns < *min ? ns : *min;
				*max = ns > *max ? ns : *max;
			}
		}
	}
}

/* ---- what a reader of r knows beyond descriptions ---- */

static const char *reader_sym(const void *ctx, uint64_t addr, uint64_t *offset)
{
	const struct dump_result *r = ctx;

	return trace_symtab_lookup(r->syms, addr, offset);
}

static const char *reader_format(const void *ctx, uint64_t addr)
{
	const struct dump_result *r = ctx;

	for (uint32_t i = 0; i < r->nr_fmts; i++)
		if (r->fmt_addrs[i] == addr)
			return r->fmt_texts[i];
	return 0;
}

struct trace_symbols dump_symbols(const struct dump_result *r)
{
	return (struct trace_symbols){ reader_sym, r, reader_format };
}
