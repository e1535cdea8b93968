/*
 * Injection test of the per-CPU ring buffer, on the host: at every labelled
 * step of the ring buffer (enum rb_step), an interrupt or a reader on another
 * CPU, and afterwards a full account of every event.
 *
 * A scenario: a fresh ring (2 or 3 pages of 2 KiB, overwrite or discard,
 * xadd or cmpxchg reservation) is brought to a state (empty; tail page
 * exactly full; 8 bytes left, where no outer event fits but an IRQ's does;
 * 20 bytes left, where one outer event fits and then nothing; every page
 * full; the clock past the tail's base by more than 2^27, or 2^54, ticks),
 * then a task-level operation runs (two writes; two writes whose first is
 * interrupted between its stamp and its reservation by a "primer" IRQ,
 * which is what makes the void and retry steps reachable at all; a flush;
 * a read on the owning CPU).  The shim's step hook counts the steps the
 * operation passes and, at the k-th occurrence of step X, injects one kind
 * of trouble: an IRQ (level 2) writing one event; the same with an NMI
 * (level 3) inside it writing one event or a storm, at the IRQ's own first
 * pass of X, else inside its open reservation (after its commit for the
 * commit steps F, P1..P4); an IRQ storm of more than a ring's worth; an IRQ
 * that writes and flushes; ring_buffer_read_page() as another CPU would call
 * it at that instant, alone, after a writer or before one.  A run without
 * injection first counts how often the operation passes each step; the fake
 * clock makes runs repeat exactly, so (X, k) is armed only where it fires,
 * every k that occurs is armed, and the test asserts that it fired.
 *
 * Then: flush and read until nothing changes, three more writes, the same
 * again.  Every event carries its sequence number, length and a pattern;
 * the writers' own books say which were accepted and when.  Checked, against
 * those books: stamps never decrease in buffer order (page bases included)
 * and each lies between the clock reads around its reserve; every accepted
 * event is read exactly once, intact, never before its payload was written;
 * no refused or unwritten event is read; events accepted but never read are
 * exactly the buffer's overrun and the pages' lost_overrun, refusals exactly
 * its dropped and the pages' lost_dropped; written, read and in_buffer match
 * our counts; no integrity stop; after a flush that returned 0 (the task's
 * or an IRQ's), what was stored and dropped before it is readable once the
 * operation is over, without another flush; with nobody inside
 * the buffer, I3, I4, I8 and I11 hold exactly (check_quiet()).
 *
 * Not reachable here: the failed CAS of S2 (the reader takes the slot
 * between the writer's load and its CAS).  No hook lies between the two,
 * so only a reader on a real second thread gets there (test_ring_stress's
 * race phase).  S2 itself is reached after every successful claim, and the
 * reader's failed CAS at R3 (read_raced) is reached from R2.
 *
 * MUTATIONS THIS TEST CATCHES, each made in trace/ or the header's fast
 * path, run with --all, then undone; the check that fails first:
 *   1  void not padded (rb_settle's padding, or the whole void branch):
 *      the reader stops, "page records malformed" (host_warn_count == 0).
 *   2  D without w == w0 (fast or slow path): ev.ts >= sc.last_ts (I10);
 *      if the IRQ switched pages in the window, a malformed page.
 *   3  nested writers publish (the nest checks of rb_commit_slow and of
 *      rb_publish's loop): a reader decodes an event whose payload is not
 *      written (word >> 24 == MAGIC), st.written == sc.nseq, stops.
 *   4  reader skips one page too far over an overwritten slot: after a
 *      flush, missing <= st.overrun; never advancing: read_all() == 0
 *      fails with -RB_EAGAIN.
 *   5  rb_give_back subtracting without its cmpxchg and gen check: where a
 *      nested writer switched pages between an xadd on a closed page and
 *      its give-back (the NMI inside the IRQ, or the IRQ after a reader
 *      freed a page), rb_gen(cb->write) == tail_pos, or a malformed page.
 *   6  (xadd+head: the writers' record word and first payload word in one
 *      store) a slow path not writing the first word: word >> 24 == MAGIC;
 *      the 64-bit store without the delta: ev.ts within [t_lo, t_hi).
 *   also: a switch not setting unpublished (in_buffer == 0); unpublished
 *   cleared after P3 instead of P1 (commit_pos == tail_pos); publish not
 *   going round again (nest == 0); the crosser not setting commit, or an
 *   absolute-stamped event not counted (malformed page); no busy check at
 *   S1 ("slot out of step"); no commit-overrun check at S2 ("tail and
 *   commit out of range"); a failed fast cmpxchg ignored (malformed page,
 *   then ASan); seq off by one at P2; busy drops not in dropped
 *   (st.written == sc.nseq); flush not ending the page that carries drops
 *   (lost counts); overrun undercounted (in_buffer == 0); a new page's base
 *   not read from the clock (hdr->base_ts >= sc.last_ts).
 * Equivalent here, so not caught: only rb_commit_slow's nest check removed
 * (rb_publish checks again); rb_give_back without its gen check alone (a
 * switched word has a small offset, or a closed page's that stays past cap
 * after the subtraction); the reader advancing by one, or R1 skipping to
 * cp - n (the next R1 or R2 skips the rest); flush closing the tail without
 * rb_can_switch() (capacity lost, accounting exact).
 *
 * Usage: test_ring_inject [--sample | --all] [--verbose]
 *   --sample (default): every SAMPLE_EVERY-th combination, plus every step
 *   at k = 1 in one configuration (2 pages, overwrite, xadd); --all: every
 *   combination; --verbose: print every failure, not the first few.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define TRACE_ARCH_HOST_DEFINE
#include <arch/trace_arch.h>
#include <trace/ring_buffer.h>

#define CPU_ID		5
#define PAGE_SIZE	2048u	/* the smallest page: states fill fastest */
#define CAP		(PAGE_SIZE - RB_PAGE_HEADER_SIZE)
#define MAX_PAGES	3
#define K_MAX		8	/* occurrences of one step to interrupt at (3 happen) */
#define MAX_SEQ		1024	/* events per scenario, all writers */
#define MAGIC		0xb7u
#define SAMPLE_EVERY	7
#define POST_WRITES	3
#define MAX_FAIL_LINES	2048

/* Payload bytes; records of 16, 24, 8, 24 and 104 bytes. */
#define LEN_OUTER1	11	/* not a multiple of 4: rounding bytes are checked */
#define LEN_OUTER2	19
#define LEN_IRQ		4
#define LEN_NMI		19
#define LEN_STORM	100
#define ROOM_CROSS	8	/* ST_CROSS leaves room for an IRQ event only */
#define ROOM_LATE	20	/* ST_CROSS_LATE: one outer event, then none */

enum method { XADD, CMPXCHG, HEAD };	/* HEAD: xadd, the record's first 8 bytes in one store */

enum state { ST_EMPTY, ST_PAGE_FULL, ST_CROSS, ST_CROSS_LATE, ST_RING_FULL, ST_OLD_EXTEND,
	     ST_OLD_ABS, NR_STATES };
static const char *const state_name[] = { "empty", "page-full", "cross", "cross-late",
					  "ring-full", "old-extend", "old-abs" };

enum op { OP_WRITE, OP_WRITE_PRIMED, OP_FLUSH, OP_READ, NR_OPS };
static const char *const op_name[] = { "write", "write-primed", "flush", "read" };

/* What an injection does; a kind is one or two of these in a row. */
enum action {
	A_NONE,
	A_IRQ,		/* an IRQ writes one event */
	A_IRQ_NMI,	/* ... and an NMI inside it writes one */
	A_STORM,	/* an IRQ writes more than the ring holds */
	A_NMI_STORM,	/* an IRQ writes one event, an NMI inside it a storm */
	A_IRQ_FLUSH,	/* an IRQ writes one event and flushes */
	A_READER,	/* another CPU takes every readable page */
};
struct kind {
	enum action a[2];	/* in this order */
	const char *name;	/* for messages */
};
static const struct kind kinds[] = {
	{ { A_IRQ }, "irq" },
	{ { A_IRQ_NMI }, "irq+nmi" },
	{ { A_STORM }, "storm" },
	{ { A_NMI_STORM }, "irq+nmi-storm" },
	{ { A_IRQ_FLUSH }, "irq-flush" },
	{ { A_READER }, "reader" },
	{ { A_IRQ, A_READER }, "irq,reader" },
	{ { A_IRQ_NMI, A_READER }, "irq+nmi,reader" },
	{ { A_STORM, A_READER }, "storm,reader" },
	{ { A_READER, A_IRQ }, "reader,irq" },
	{ { A_READER, A_STORM }, "reader,storm" },
};

static const char *const step_name[] = {
	"FAST_A", "FAST_B", "FAST_C", "FAST_D", "FAST_E",
	"SLOW_A", "SLOW_B", "SLOW_C", "SLOW_D", "SLOW_E",
	"VOID", "CROSS", "GIVE_BACK", "S1", "S2", "S3", "S4", "S5", "S6", "F",
	"P1", "P2", "P3", "P4", "FLUSH", "FLUSH_CLOSE", "R1", "R2", "R3",
};
_Static_assert(ARRAY_SIZE(step_name) == RB_NR_STEPS, "a name for every step");

struct config {
	uint32_t pages;		/* ring pages */
	uint32_t mode;		/* enum rb_mode */
	enum method method;	/* how every writer reserves */
	char name[32];		/* for cmocka */
};

/* One event in the writers' books. */
enum ev_status { EV_PENDING = 1, EV_FILLED, EV_ACCEPTED, EV_REFUSED };
struct ev {
	uint64_t t_lo;		/* clock before the reserve */
	uint64_t t_hi;		/* clock after it returned: the stamp is below */
	uint32_t len;		/* payload bytes asked for */
	uint8_t status;		/* enum ev_status */
	uint8_t decoded;	/* times a reader handed it out */
	bool flushed;		/* stored before a flush that returned 0 */
};

/* The scenario being run; reset by each one. */
static struct scenario {
	struct rb_cpu_buffer *cb;		/* the buffer under test */
	void *pages[MAX_PAGES + 1];		/* its pages */
	size_t cb_size;				/* bytes at cb */
	const struct config *cfg;		/* its configuration */
	enum state state;			/* state before the operation */
	enum op op;				/* the task-level operation */

	struct ev ev[MAX_SEQ];			/* the books, by sequence number */
	uint32_t nseq;				/* reserve calls made */
	uint64_t accepted, refused;		/* ... returning 0, -RB_EFULL */
	uint64_t decoded, pages_taken;		/* what the readers got */
	uint64_t lost_overrun, lost_dropped;	/* sums over those pages */
	uint64_t last_ts;			/* last stamp read (I10) */
	uint64_t next_pos;			/* page positions only grow */
	bool flush_ok;				/* a flush returned 0 ... */
	uint64_t refused_at_flush;		/* ... with this many drops before */

	int step;				/* armed step, -1: none */
	unsigned k;				/* ... at its k-th occurrence */
	const struct kind *kind;		/* what to inject */
	unsigned seen[RB_NR_STEPS];		/* steps the operation passed */
	bool counting;				/* the operation is running */
	bool fired;				/* the injection ran */
	bool primer_pending;			/* OP_WRITE_PRIMED's IRQ to come */
	int depth;				/* injected contexts running */
	bool nmi_pending;			/* the IRQ's NMI to come */
	int nmi_step;				/* ... at the IRQ's pass of this */
	uint32_t nmi_events;			/* ... writing this many */

	char where[160];			/* the combination, for messages */
	jmp_buf fail_jmp;			/* a failed check returns here */
	char fail_msg[400];			/* ... saying this */
} sc;

/* Totals over the run. */
static struct {
	bool all;				/* --all */
	bool verbose;				/* --verbose */
	struct timespec t0;			/* start of the run */
	uint64_t index;				/* combinations enumerated */
	uint64_t run;				/* ... run with an injection */
	uint64_t dry;				/* scenarios without injection */
	uint64_t events;			/* events decoded and checked */
	uint64_t failed;			/* scenarios that failed */
	uint64_t hits[RB_NR_STEPS];		/* injections fired, per step */
	uint64_t nmi_hits[RB_NR_STEPS];		/* NMIs at the IRQ's own step */
	unsigned max_k;				/* most occurrences of a step */
	uint64_t voided, read_raced, claim_raced; /* paths taken, summed */
	uint64_t busy, commit_overrun, overrun, dropped;
	unsigned fail_lines[MAX_FAIL_LINES];	/* failed checks, per line */
} run;

/* ---- checks that name the combination and go on with the next one ---- */

static __noreturn void failed(int line, const char *what, long long a, long long b,
			      bool values)
{
	char v[64] = "";

	if (line >= 0 && line < MAX_FAIL_LINES)
		run.fail_lines[line]++;
	if (values)
		snprintf(v, sizeof(v), " (%lld, %lld)", a, b);
	snprintf(sc.fail_msg, sizeof(sc.fail_msg), "%s: line %d: %s%s%s%s", sc.where, line,
		 what, v, host_warn_count ? "; stopped: " : "",
		 host_warn_count ? host_warn_last : "");
	longjmp(sc.fail_jmp, 1);
}

#define CHECK(c) \
	do { if (!(c)) failed(__LINE__, #c, 0, 0, false); } while (0)
#define CHECK_EQ(a, b) \
	do { long long a_ = (long long)(a), b_ = (long long)(b); \
	     if (a_ != b_) failed(__LINE__, #a " == " #b, a_, b_, true); } while (0)

/* ---- writers ---- */

static uint8_t pattern(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 31u + i * 7u + 3u);
}

static bool is_commit_step(int step)
{
	return step == RB_STEP_F || (step >= RB_STEP_P1 && step <= RB_STEP_P4);
}

static int put_event(uint32_t len);

/* An NMI inside the injected IRQ: one event, or a storm, at level 3. */
static void fire_nmi(void)
{
	unsigned saved = host_trace_level;
	uint32_t i, n = sc.nmi_events;

	sc.nmi_pending = false;
	host_trace_level = 3;
	for (i = 0; i < n; i++)
		put_event(n > 1 ? LEN_STORM : LEN_NMI);
	host_trace_level = saved;
}

/*
 * Reserve, fill, commit one event in the current context, and keep the books.
 * Returns 0 or -RB_EFULL; anything else fails the scenario.
 */
static uint64_t head_same(uint64_t head)
{
	return head;
}

static int put_event(uint32_t len)
{
	uint32_t seq = sc.nseq, word, i;
	struct ev *e = &sc.ev[seq];
	bool head;
	uint8_t *p;
	void *data;
	int rc;

	CHECK(seq < MAX_SEQ);
	sc.nseq++;
	e->len = len;
	e->status = EV_PENDING;
	e->decoded = 0;
	e->flushed = false;
	e->t_lo = host_fake_now;
	word = MAGIC << 24 | len << 16 | seq;
	head = sc.cfg->method == HEAD && len % 4 == 0 && len <= RB_INLINE_MAX;
	if (head)	/* the generated writers' way: the first word goes with the record word */
		rc = ring_buffer_reserve_head(sc.cb, len, &data, arch_trace_level_bit(),
					      rb_head_word(len, word), head_same);
	else if (sc.cfg->method == CMPXCHG)
		rc = ring_buffer_reserve_cmpxchg(sc.cb, len, &data);
	else
		rc = ring_buffer_reserve_xadd(sc.cb, len, &data);
	e->t_hi = host_fake_now;
	/* The IRQ's NMI, if the IRQ did not pass its step: inside its window. */
	if (sc.nmi_pending && host_trace_level == 2 && !is_commit_step(sc.nmi_step))
		fire_nmi();
	if (rc) {
		CHECK_EQ(rc, -RB_EFULL);
		e->status = EV_REFUSED;
		sc.refused++;
		return rc;
	}
	p = data;
	if (!head)
		memcpy(p, &word, 4);
	for (i = 4; i < len; i++)
		p[i] = pattern(seq, i);
	e->status = EV_FILLED;	/* from here on an interrupt may publish it */
	ring_buffer_commit(sc.cb);
	e->status = EV_ACCEPTED;
	sc.accepted++;
	return 0;
}

/*
 * Flush from the current context and remember, if it returned 0, what had
 * been stored and dropped before it: once the outermost writer has
 * committed, that must be readable without another flush.
 */
static int flush(void)
{
	uint64_t refused = sc.refused;
	uint32_t s, n = sc.nseq;	/* events from before the call */
	bool stored[MAX_SEQ];
	int rc;

	for (s = 0; s < n; s++)
		stored[s] = sc.ev[s].status == EV_FILLED || sc.ev[s].status == EV_ACCEPTED;
	rc = ring_buffer_flush(sc.cb);
	if (rc == 0) {
		for (s = 0; s < n; s++)
			sc.ev[s].flushed |= stored[s];
		sc.flush_ok = true;
		sc.refused_at_flush = refused;
	}
	return rc;
}

/* More than the ring holds, whatever its state: it wraps at least once. */
static uint32_t storm_events(void)
{
	return (sc.cfg->pages + 1) * (CAP / rb_data_record_size(LEN_STORM) + 1);
}

/*
 * An injected IRQ writing n events of len bytes, then flushing if asked.
 * A flush from an interrupt may only be busy if it landed inside a switch.
 */
static void irq(uint32_t n, uint32_t len, bool with_flush)
{
	unsigned saved = host_trace_level;
	bool switching = sc.cb->switching != 0;
	uint32_t i;
	int rc;

	host_trace_level = 2;
	for (i = 0; i < n; i++)
		put_event(len);
	if (sc.nmi_pending)	/* commit steps the IRQ did not pass: after it */
		fire_nmi();
	if (with_flush) {
		rc = flush();
		CHECK(rc == 0 || rc == -RB_EFULL || (rc == -RB_EBUSY && switching));
	}
	host_trace_level = saved;
}

/* ---- readers ---- */

/* Check one page a reader took against the books and consume its events. */
static void take_page(const struct rb_read *rd)
{
	const struct rb_page_header *hdr = rd->page;
	struct rb_page_iter it;
	struct rb_event ev;
	uint32_t n = 0, word, seq, len, i;
	struct ev *e;
	int r;

	CHECK_EQ(hdr->cpu, CPU_ID);
	CHECK(sc.pages_taken == 0 || hdr->pos >= sc.next_pos);
	sc.next_pos = hdr->pos + 1;
	CHECK_EQ(hdr->lost, rd->lost_overrun + rd->lost_dropped);
	CHECK(hdr->base_ts >= sc.last_ts);	/* I10: bases too */
	sc.last_ts = hdr->base_ts;
	CHECK_EQ(rb_page_iter_init(&it, rd->page, rd->page_size), RB_ITER_END);
	while ((r = rb_page_iter_next(&it, &ev)) == RB_ITER_EVENT) {
		memcpy(&word, ev.data, 4);
		seq = word & 0xffff;
		len = word >> 16 & 0xff;
		CHECK_EQ(word >> 24, MAGIC);
		CHECK(seq < sc.nseq);
		e = &sc.ev[seq];
		CHECK(e->status == EV_FILLED || e->status == EV_ACCEPTED);
		CHECK_EQ(e->decoded, 0);
		e->decoded = 1;
		CHECK_EQ(len, e->len);
		CHECK_EQ(ev.len, rb_payload_round(len));
		for (i = 4; i < ev.len; i++)	/* rounding bytes are zero */
			CHECK_EQ(ev.data[i], i < len ? pattern(seq, i) : 0);
		CHECK(ev.ts >= sc.last_ts);	/* I10 */
		CHECK(ev.ts >= e->t_lo && ev.ts < e->t_hi);
		sc.last_ts = ev.ts;
		n++;
	}
	CHECK_EQ(r, RB_ITER_END);
	CHECK_EQ(n, hdr->entries);
	CHECK_EQ(n, rd->entries);
	sc.decoded += n;
	sc.pages_taken++;
	sc.lost_overrun += rd->lost_overrun;
	sc.lost_dropped += rd->lost_dropped;
}

/* Take every readable page; the last result (0 or an error). */
static int read_all(void)
{
	struct rb_read rd;
	int rc;

	while ((rc = ring_buffer_read_page(sc.cb, &rd)) == 1)
		take_page(&rd);
	return rc;
}

/*
 * May a flush on the quiet ring answer -RB_EFULL?  In discard mode, while
 * it is full.  In overwrite mode with 2 pages too: a flush that must close
 * the tail and then an empty page carrying drops wants, for the second
 * switch, the page it has just closed, which is not published before its
 * own commit (I5).  With 3 pages the second switch reclaims a published page.
 */
static bool flush_may_be_full(void)
{
	return sc.cfg->mode == RB_MODE_DISCARD || sc.cfg->pages == 2;
}

/* Flush and read until neither changes anything (discard: reads make room). */
static void drain(void)
{
	uint64_t before;
	unsigned round;
	int rc;

	for (round = 0; round < 2 * MAX_PAGES + 4; round++) {
		rc = ring_buffer_flush(sc.cb);
		CHECK(rc == 0 || (rc == -RB_EFULL && flush_may_be_full()));
		before = sc.pages_taken;
		CHECK_EQ(read_all(), 0);
		if (rc == 0 && sc.pages_taken == before)
			return;
	}
	CHECK(!"flush and read settle");
}

/* ---- the injection ---- */

static void inject(int step)
{
	unsigned i;

	sc.depth++;
	run.hits[step]++;
	for (i = 0; i < ARRAY_SIZE(sc.kind->a); i++) {
		switch (sc.kind->a[i]) {
		case A_NONE:
			break;
		case A_IRQ:
		case A_IRQ_FLUSH:
			irq(1, LEN_IRQ, sc.kind->a[i] == A_IRQ_FLUSH);
			break;
		case A_IRQ_NMI:
		case A_NMI_STORM:
			sc.nmi_pending = true;
			sc.nmi_step = step;
			sc.nmi_events = sc.kind->a[i] == A_NMI_STORM ? storm_events() : 1;
			irq(1, LEN_IRQ, false);
			break;
		case A_STORM:
			irq(storm_events(), LEN_STORM, false);
			break;
		case A_READER:
			/* Another CPU, now; a reader on this CPU holds the lock. */
			CHECK_EQ(read_all(), sc.op == OP_READ ? -RB_EBUSY : 0);
			break;
		}
	}
	sc.depth--;
}

/* host_hook_step: right after each labelled step of the ring buffer. */
static void on_step(int step)
{
	CHECK(step >= 0 && step < RB_NR_STEPS);
	if (sc.depth > 0) {
		if (sc.nmi_pending && step == sc.nmi_step && host_trace_level == 2) {
			run.nmi_hits[step]++;
			fire_nmi();
		}
		return;
	}
	if (!sc.counting)
		return;
	sc.seen[step]++;
	if (step == sc.step && sc.seen[step] == sc.k && !sc.fired) {
		sc.fired = true;
		inject(step);
	}
	if (sc.primer_pending && (step == RB_STEP_FAST_B || step == RB_STEP_SLOW_B)) {
		sc.primer_pending = false;
		sc.depth++;
		irq(1, LEN_IRQ, false);	/* lands between the stamp and the reservation */
		sc.depth--;
	}
}

/* ---- states and operations ---- */

/* Write events until exactly room bytes are left on the tail page. */
static void fill_page(uint32_t room)
{
	uint32_t left;

	for (;;) {
		left = CAP - rb_off(sc.cb->write) - room;
		if (left == 0)
			return;
		/* Never leave 4 bytes: no record is that small. */
		CHECK_EQ(put_event(left <= RB_INLINE_MAX + 4 ? left - 4 : LEN_STORM), 0);
	}
}

static void setup_state(void)
{
	struct rb_cpu_buffer *cb = sc.cb;
	uint32_t p;

	switch (sc.state) {
	case ST_EMPTY:
		break;
	case ST_PAGE_FULL:
		fill_page(0);
		break;
	case ST_CROSS:
		fill_page(ROOM_CROSS);
		CHECK(rb_data_record_size(LEN_OUTER1) > ROOM_CROSS);
		CHECK(rb_data_record_size(LEN_IRQ) == ROOM_CROSS);
		break;
	case ST_CROSS_LATE:
		fill_page(ROOM_LATE);
		CHECK(rb_data_record_size(LEN_OUTER1) + rb_data_record_size(LEN_IRQ) >
		      ROOM_LATE);
		break;
	case ST_RING_FULL:
		fill_page(0);
		for (p = 1; p < sc.cfg->pages; p++) {
			CHECK_EQ(put_event(LEN_STORM), 0);	/* crosses */
			fill_page(0);
		}
		CHECK_EQ(cb->tail_pos, 2 * sc.cfg->pages - 1);
		CHECK_EQ(cb->commit_pos, cb->tail_pos);
		break;
	case ST_OLD_EXTEND:
	case ST_OLD_ABS:
		for (p = 0; p < 3; p++)
			CHECK_EQ(put_event(LEN_OUTER1), 0);
		host_fake_now = cb->tail_base + 100 +
			(sc.state == ST_OLD_ABS ? RB_EXTEND_LIMIT : RB_DELTA_LIMIT);
		break;
	default:
		CHECK(!"a known state");
	}
	if (sc.state == ST_PAGE_FULL || sc.state == ST_RING_FULL)
		CHECK_EQ(rb_off(cb->write), CAP);
}

/*
 * The operation is over, so its outermost writer has committed: what was
 * stored and dropped before a flush that returned 0 is readable now,
 * without another flush (the flush contract), unless overwritten.
 */
static void check_flushed(void)
{
	struct rb_stats st;
	uint64_t missing = 0;
	uint32_t s;

	if (!sc.flush_ok)
		return;
	CHECK_EQ(read_all(), 0);
	for (s = 0; s < sc.nseq; s++)
		missing += sc.ev[s].flushed && !sc.ev[s].decoded;
	ring_buffer_stats(sc.cb, &st);
	CHECK(missing <= st.overrun);	/* discard: 0 */
	CHECK(sc.lost_dropped >= sc.refused_at_flush);
}

static void outer_op(void)
{
	int rc;

	switch (sc.op) {
	case OP_WRITE_PRIMED:
		sc.primer_pending = true;
		/* fall through */
	case OP_WRITE:
		put_event(LEN_OUTER1);
		put_event(LEN_OUTER2);
		break;
	case OP_FLUSH:
		/* Full: in discard mode; or the page the flush has just closed
		 * is not published yet (I5) and drops want one page more. */
		rc = flush();
		CHECK(rc == 0 || rc == -RB_EFULL);
		break;
	case OP_READ:
		CHECK_EQ(read_all(), 0);
		break;
	default:
		CHECK(!"a known operation");
	}
	sc.counting = false;
}

/*
 * With no context inside the buffer, the invariants of the design hold
 * exactly: the slots are in step with the tail and hold each page once (I4),
 * everything is published (I3, I8), the write word names the tail and its
 * offset is bounded (I1, I11), and the tail's page and base are its slot's.
 */
static void check_quiet(void)
{
	const struct rb_cpu_buffer *cb = sc.cb;
	uint32_t n = cb->nr_slots, i, id, owner = 0;
	uint64_t pos;

	CHECK_EQ(host_warn_count, 0);
	CHECK_EQ(cb->nest, 0);
	CHECK_EQ(cb->switching, 0);
	CHECK_EQ(cb->reader_busy, 0);
	CHECK_EQ(cb->commit_pos, cb->tail_pos);
	CHECK_EQ(rb_gen(cb->write), (uint32_t)cb->tail_pos);
	CHECK(rb_off(cb->write) < cb->cap + RB_NEST_MAX * (cb->cap + 1));
	CHECK_EQ(cb->tail_slot, cb->tail_pos % n);
	for (i = 0; i < n; i++) {
		pos = rb_slot_pos(cb->slots[i]);
		id = rb_slot_id(cb->slots[i]);
		CHECK_EQ(pos % n, i);
		CHECK(pos + n > cb->tail_pos && pos <= cb->tail_pos);
		CHECK(id <= n && !(owner & 1u << id));
		owner |= 1u << id;
	}
	CHECK(cb->reader_page <= n && !(owner & 1u << cb->reader_page));
	i = (uint32_t)(cb->tail_pos % n);
	CHECK(!rb_slot_consumed(cb->slots[i]));
	CHECK(cb->tail_page == cb->pages[rb_slot_id(cb->slots[i])]);
	CHECK_EQ(cb->tail_base, ((const struct rb_page_header *)cb->tail_page)->base_ts);
}

/* Everything read: the books and the buffer's counters must agree. */
static void check_books(void)
{
	struct rb_stats st;
	uint64_t missing = 0;
	uint32_t s;

	for (s = 0; s < sc.nseq; s++) {
		CHECK(sc.ev[s].status == EV_ACCEPTED || sc.ev[s].status == EV_REFUSED);
		missing += sc.ev[s].status == EV_ACCEPTED && !sc.ev[s].decoded;
	}
	ring_buffer_stats(sc.cb, &st);
	CHECK_EQ(host_warn_count, 0);
	CHECK_EQ(st.state, RB_STATE_RECORDING);
	CHECK_EQ(st.written, sc.nseq);
	CHECK_EQ(st.entries, sc.accepted);
	CHECK_EQ(st.dropped, sc.refused);
	CHECK_EQ(st.read, sc.decoded);
	CHECK_EQ(st.in_buffer, 0);
	CHECK_EQ(st.overrun, missing);
	CHECK_EQ(sc.lost_overrun + sc.lost_dropped, missing + sc.refused);
	CHECK_EQ(sc.lost_overrun, missing);
	CHECK_EQ(sc.lost_dropped, sc.refused);
	CHECK_EQ(st.lost, sc.lost_overrun + sc.lost_dropped);
	if (sc.cfg->mode == RB_MODE_DISCARD)
		CHECK_EQ(missing, 0);
	CHECK_EQ(st.refused, 0);
	CHECK_EQ(st.rejected, 0);
	CHECK_EQ(st.clock_backwards, 0);
	CHECK_EQ(st.bad_pages, 0);
	check_quiet();
}

/*
 * One scenario: step < 0 runs it without injection and leaves the step
 * counts in sc.seen.  Returns false if a check failed (sc.fail_msg says).
 */
static bool scenario(int step, unsigned k, const struct kind *kd)
{
	struct rb_cpu_config c = {
		.cpu = CPU_ID, .nr_pages = sc.cfg->pages, .page_size = PAGE_SIZE,
		.mode = sc.cfg->mode,
	};
	struct rb_stats st;
	uint32_t i;

	host_trace_level = 0;
	host_fake_clock_on = 1;
	host_fake_now = 1000;
	host_fake_step = 1;
	host_warn_count = 0;
	host_warn_last = NULL;
	sc.nseq = 0;
	sc.accepted = sc.refused = sc.decoded = sc.pages_taken = 0;
	sc.lost_overrun = sc.lost_dropped = sc.last_ts = sc.next_pos = 0;
	sc.step = step;
	sc.k = k;
	sc.kind = kd;
	memset(sc.seen, 0, sizeof(sc.seen));
	sc.counting = sc.fired = sc.primer_pending = sc.nmi_pending = sc.flush_ok = false;
	sc.depth = 0;
	if (setjmp(sc.fail_jmp)) {
		host_trace_level = 0;
		sc.counting = false;
		sc.depth = 0;
		return false;
	}
	for (i = 0; i <= MAX_PAGES; i++)
		memset(sc.pages[i], 0xa5, PAGE_SIZE);	/* garbage, on purpose */
	CHECK_EQ(ring_buffer_cpu_init(sc.cb, sc.cb_size, &c, sc.pages), 0);
	setup_state();

	sc.counting = true;
	outer_op();
	CHECK_EQ(sc.fired, step >= 0);
	check_quiet();
	check_flushed();

	drain();
	check_books();
	/* Still usable: the ring is empty now, so these must be stored. */
	for (i = 0; i < POST_WRITES; i++)
		CHECK_EQ(put_event(LEN_OUTER1), 0);
	drain();
	check_books();
	ring_buffer_stats(sc.cb, &st);
	run.voided += st.voided;
	run.read_raced += st.read_raced;
	run.claim_raced += st.claim_raced;
	run.busy += st.busy;
	run.commit_overrun += st.commit_overrun;
	run.overrun += st.overrun;
	run.dropped += st.dropped;
	run.events += sc.decoded;
	return true;
}

static void report_failure(uint64_t failed0)
{
	if (run.failed++ - failed0 < 5 || run.verbose)	/* a few per configuration */
		print_message("FAIL %s\n", sc.fail_msg);
}

/* Every combination of one configuration, or the sampled subset. */
static void test_config(void **state)
{
	const struct config *cfg = *state;
	const bool sampled_cfg = cfg->pages == 2 && cfg->mode == RB_MODE_OVERWRITE &&
				 cfg->method == XADD;
	uint64_t failed0 = run.failed;
	unsigned seen[RB_NR_STEPS], k, ki;
	int st, op, step;

	sc.cfg = cfg;
	for (st = 0; st < NR_STATES; st++) {
		for (op = 0; op < NR_OPS; op++) {
			sc.state = st;
			sc.op = op;
			snprintf(sc.where, sizeof(sc.where), "%s %s %s, no injection",
				 cfg->name, state_name[st], op_name[op]);
			run.dry++;
			if (!scenario(-1, 0, NULL)) {
				report_failure(failed0);
				continue;
			}
			memcpy(seen, sc.seen, sizeof(seen));
			for (step = 0; step < RB_NR_STEPS; step++)
				if (seen[step] > run.max_k)
					run.max_k = seen[step];
			for (ki = 0; ki < ARRAY_SIZE(kinds); ki++) {
				for (step = 0; step < RB_NR_STEPS; step++) {
					for (k = 1; k <= K_MAX && k <= seen[step]; k++) {
						if (!run.all && run.index++ % SAMPLE_EVERY &&
						    !(sampled_cfg && k == 1))
							continue;
						snprintf(sc.where, sizeof(sc.where),
							 "%s %s %s, %s at %s #%u", cfg->name,
							 state_name[st], op_name[op], kinds[ki].name,
							 step_name[step], k);
						run.run++;
						if (!scenario(step, k, &kinds[ki]))
							report_failure(failed0);
					}
				}
			}
		}
	}
	if (run.failed != failed0)
		fail_msg("%s: %llu scenarios failed", cfg->name,
			 (unsigned long long)(run.failed - failed0));
}

/* Last: every step was interrupted somewhere; the summary. */
static void test_every_step_hit(void **state)
{
	char line[1600], nmi[1600];
	size_t at = 0, nat = 0;
	int step, missed = 0, l;
	struct timespec t1;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	nmi[0] = 0;
	for (step = 0; step < RB_NR_STEPS; step++) {
		at += (size_t)snprintf(line + at, sizeof(line) - at, " %s=%llu",
				       step_name[step], (unsigned long long)run.hits[step]);
		if (run.nmi_hits[step])
			nat += (size_t)snprintf(nmi + nat, sizeof(nmi) - nat, " %s=%llu",
						step_name[step],
						(unsigned long long)run.nmi_hits[step]);
		missed += run.hits[step] == 0;
	}
	print_message("inject: %s: %llu combinations run (%llu without injection), %llu events "
		      "checked, %llu failed, %.2f s; hits:%s\n", run.all ? "all" : "sampled",
		      (unsigned long long)run.run, (unsigned long long)run.dry,
		      (unsigned long long)run.events, (unsigned long long)run.failed,
		      (double)(t1.tv_sec - run.t0.tv_sec) + (t1.tv_nsec - run.t0.tv_nsec) / 1e9,
		      line);
	print_message("inject: NMIs at the IRQ's own pass of the step:%s\n", nmi);
	print_message("inject: a step passed at most %u times in one operation (K_MAX %u); "
		      "paths: voided %llu, read_raced %llu, claim_raced %llu, busy %llu, "
		      "commit_overrun %llu, overrun %llu, dropped %llu\n", run.max_k, K_MAX,
		      (unsigned long long)run.voided, (unsigned long long)run.read_raced,
		      (unsigned long long)run.claim_raced, (unsigned long long)run.busy,
		      (unsigned long long)run.commit_overrun, (unsigned long long)run.overrun,
		      (unsigned long long)run.dropped);
	for (l = 0; l < MAX_FAIL_LINES; l++)
		if (run.fail_lines[l])
			print_message("inject: check at line %d failed %u times\n", l,
				      run.fail_lines[l]);
	for (step = 0; step < RB_NR_STEPS; step++)
		if (!run.hits[step])
			print_message("inject: step %s never interrupted\n", step_name[step]);
	assert_int_equal(missed, 0);
}

int main(int argc, char **argv)
{
	static struct config cfgs[12];
	struct CMUnitTest tests[ARRAY_SIZE(cfgs) + 1];
	uint32_t i;
	int a, rc;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--all"))
			run.all = true;
		else if (!strcmp(argv[a], "--verbose"))
			run.verbose = true;
		else if (strcmp(argv[a], "--sample")) {
			fprintf(stderr, "usage: %s [--sample | --all] [--verbose]\n", argv[0]);
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &run.t0);
	sc.cb_size = ALIGN_UP(ring_buffer_cpu_size(MAX_PAGES), CACHELINE_SIZE);
	sc.cb = aligned_alloc(CACHELINE_SIZE, sc.cb_size);
	for (i = 0; i <= MAX_PAGES; i++)
		sc.pages[i] = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	host_warn_quiet = 1;
	host_hook_step = on_step;
	for (i = 0; i < ARRAY_SIZE(cfgs); i++) {
		cfgs[i].pages = 2 + i / 6;
		cfgs[i].mode = i / 3 % 2 ? RB_MODE_DISCARD : RB_MODE_OVERWRITE;
		cfgs[i].method = (enum method)(i % 3);
		snprintf(cfgs[i].name, sizeof(cfgs[i].name), "%u pages %s %s", cfgs[i].pages,
			 cfgs[i].mode == RB_MODE_DISCARD ? "discard" : "overwrite",
			 cfgs[i].method == CMPXCHG ? "cmpxchg" :
			 cfgs[i].method == HEAD ? "xadd+head" : "xadd");
		tests[i] = (struct CMUnitTest){ .name = cfgs[i].name, .test_func = test_config,
						.initial_state = &cfgs[i] };
	}
	tests[i] = (struct CMUnitTest){ .name = "every_step_hit",
					.test_func = test_every_step_hit };
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	for (i = 0; i <= MAX_PAGES; i++)
		free(sc.pages[i]);
	free(sc.cb);
	return rc;
}
