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
 * a read on the owning CPU; recording off, a write, on, a write).
 *
 * Injection points: every arch_rb_step() of the ring buffer (enum rb_step:
 * the labelled steps and one at every other shared access and decision of
 * reserve, give-back, settle, switch, commit, publish, finalize, flush, the
 * gate's sync and the reader), and the shim's clock hook (between the
 * clock read and the base read of the fast path).  Every context counts the
 * points it passes; the fake clock makes runs repeat exactly, so a plan
 * "inject K into context C at its n-th point" is enumerated from a run
 * without it, and the test asserts that every injection of a plan fired.
 * Kinds: an IRQ (level 2) or NMI (level 3) writing one event, a storm of
 * more than a ring's worth, one event and a flush, or reading (a reader
 * inside an IRQ or NMI); another CPU reading, or turning recording off and
 * on, or off until the operation is over.  Plans: one injection at every
 * point of the operation; inside it, one more at every point of the
 * injected context, and inside that one more (task, IRQ, NMI and a remote
 * reader: four levels; a reader interrupted by a writer; an IRQ at one
 * point and an NMI at another); two injections into one task operation.
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
 * The failed CAS of S2 (the claim lost to the reader) is reached: a remote
 * reader at S2_LOAD (claim_raced in the summary); the reader's failed CAS
 * at R3 (read_raced) from R2.
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
 *   Issue 37's, shown with --sample 1000 (failure line as printed):
 *   the guard compared without the gate (cb->nest >= bit): "rc == -RB_EOFF
 *   == off (0, 1); remote-off in 0 at #1"; the head store losing delta's
 *   bit 0: "ev.ts >= e->t_lo && ev.ts < e->t_hi; irq in 0 at #1";
 *   rb_sync_gate not looking again: "rc == -RB_EOFF == off (1, 0);
 *   remote-off-on in 0 at #2"; give-back as an xadd (no cmpxchg, no gen
 *   check): "rb_gen(cb->write) == (uint32_t)cb->tail_pos (4, 5);
 *   nmi-storm in 0 at #31, irq in 0 at #59"; a claim lost to the reader
 *   at S2 taken as won: "pos + n > cb->tail_pos && pos <= cb->tail_pos;
 *   nmi-storm in 0 at #25, nmi-read in 0 at #57".
 * Equivalent here, so not caught: only rb_commit_slow's nest check removed
 * (rb_publish checks again); rb_give_back without its gen check alone (a
 * switched word has a small offset, or a closed page's that stays past cap
 * after the subtraction); the reader advancing by one, or R1 skipping to
 * cp - n (the next R1 or R2 skips the rest); flush closing the tail without
 * rb_can_switch() (capacity lost, accounting exact).
 *
 * Usage: test_ring_inject [--sample N | --all] [--shard I/N] [--verbose]
 *   --sample N (default 53): every single injection, and one in N of the
 *   plans of two or more; --all: every plan; --shard I/N: the I-th of N
 *   shares of the (configuration, state, operation) units; --verbose:
 *   print every failure, not the first few, and a progress line.
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
#define MAX_PLAN	4	/* injections in one scenario */
#define MAX_CTX		(MAX_PLAN + 2)	/* the task, each injection, the primer */
#define CTX_PRIMER	(MAX_PLAN + 1)
#define T_CLOCK		RB_NR_STEPS	/* a point of the shim: right after a clock read */
#define NR_POINTS	(RB_NR_STEPS + 1)
#define MAX_SEQ		1024	/* events per scenario, all writers */
#define MAGIC		0xb7u
#define SAMPLE_EVERY	53	/* --sample: one nested or paired plan in this many */
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

enum op { OP_WRITE, OP_WRITE_PRIMED, OP_FLUSH, OP_READ, OP_OFF_ON, NR_OPS };
static const char *const op_name[] = { "write", "write-primed", "flush", "read", "off-on" };

/*
 * What an injection does.  A local one is an interrupt on the buffer's CPU
 * at a level above the context it lands in (IRQ 2, NMI 3); a remote one is
 * another CPU acting at that instant, which the owning CPU's contexts may
 * in turn interleave with.
 */
#define REMOTE		(-1)
enum what {
	W_WRITE,	/* write one event */
	W_STORM,	/* write more than the ring holds */
	W_WRITE_FLUSH,	/* write one event and flush */
	W_READ,		/* take every readable page */
	W_OFF_ON,	/* recording off, then on again */
	W_OFF,		/* recording off; on again once the operation is over */
};
struct kind {
	int level;		/* 2 IRQ, 3 NMI, REMOTE */
	enum what what;		/* what it does */
	const char *name;	/* for messages */
};
static const struct kind kinds[] = {
	{ 2, W_WRITE, "irq" },
	{ 2, W_STORM, "irq-storm" },
	{ 2, W_WRITE_FLUSH, "irq-flush" },
	{ 2, W_READ, "irq-read" },
	{ 3, W_WRITE, "nmi" },
	{ 3, W_STORM, "nmi-storm" },
	{ 3, W_WRITE_FLUSH, "nmi-flush" },
	{ 3, W_READ, "nmi-read" },
	{ REMOTE, W_READ, "remote-read" },
	{ REMOTE, W_OFF_ON, "remote-off-on" },
	{ REMOTE, W_OFF, "remote-off" },
};

/*
 * One injection of a plan: into context parent (0 the task's operation, i +
 * 1 the context of plan[i]) at its ord-th pass of an injection point.
 */
struct inj {
	unsigned parent;		/* context interrupted */
	unsigned ord;			/* ... at its ord-th point, from 1 */
	const struct kind *kind;	/* what to inject */
	bool fired;			/* it ran */
};

static const char *const step_name[] = {
	"FAST_A", "FAST_B", "FAST_C", "FAST_D", "FAST_E",
	"SLOW_A", "SLOW_B", "SLOW_C", "SLOW_D", "SLOW_E",
	"VOID", "CROSS", "GIVE_BACK", "S1", "S2", "S3", "S4", "S5", "S6", "F",
	"P1", "P2", "P3", "P4", "FLUSH", "FLUSH_CLOSE", "R1", "R2", "R3",
	"FAST_GUARD", "FAST_NEST", "FAST_W", "FAST_STORE", "COMMIT", "COMMIT_SLOW", "GATED",
	"SLOW_BASE", "SLOW_PAGE", "SLOW_STORE", "GIVE_LOAD", "PAGE_OF_GEN", "SETTLE",
	"CROSS_PAD", "CAN_SWITCH", "S1_LOAD", "S1_W", "S2_LOAD", "S4_PAGE", "S4_BASE",
	"S4_POS", "S5_W", "P0", "P1_OR", "P1_CP", "FIN_SLOT", "FIN_SEQ", "FLUSH_STATE",
	"FLUSH_W", "FLUSH_CAN", "FLUSH_FLAG", "GATE_STATE", "GATE_STORE", "STATE", "R0",
	"TAKE", "TAKE_DONE", "R_POS",
	"CLOCK",
};
_Static_assert(ARRAY_SIZE(step_name) == NR_POINTS, "a name for every point");

struct config {
	uint32_t pages;		/* ring pages */
	uint32_t mode;		/* enum rb_mode */
	enum method method;	/* how every writer reserves */
	char name[32];		/* for cmocka */
};

/* One event in the writers' books. */
enum ev_status { EV_PENDING = 1, EV_FILLED, EV_ACCEPTED, EV_REFUSED, EV_OFF };
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
	uint64_t off_refused;			/* ... -RB_EOFF (not counted by the ring) */
	bool off;				/* recording is off, as we turned it */
	unsigned off_gen;			/* changes of it begun or ended */
	unsigned changing;			/* ... running now, on any CPU */
	int readers_in;				/* read_page calls running */
	uint64_t decoded, pages_taken;		/* what the readers got */
	uint64_t lost_overrun, lost_dropped;	/* sums over those pages */
	uint64_t last_ts;			/* last stamp read (I10) */
	uint64_t next_pos;			/* page positions only grow */
	bool flush_ok;				/* a flush returned 0 ... */
	uint64_t refused_at_flush;		/* ... with this many drops before */

	struct inj plan[MAX_PLAN];		/* the injections, in firing order */
	unsigned nplan;				/* ... in use */
	unsigned cur;				/* context running (struct inj.parent) */
	unsigned passes[MAX_CTX];		/* points each context passed */
	bool counting;				/* the operation is running */
	bool primer_pending;			/* OP_WRITE_PRIMED's IRQ to come */

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
	uint64_t sample;			/* --sample N: nested plans, one in N */
	uint64_t unit;				/* (configuration, state, operation)s */
	struct timespec t_last;			/* last progress line */
	unsigned shard, shards;			/* --shard i/n: this share of the work */
	uint64_t shapes[MAX_PLAN + 1];		/* plans run, by injections in them */
	uint64_t hits[NR_POINTS];		/* injections fired, per point */
	uint64_t deep_hits[NR_POINTS];		/* ... of them inside an injected context */
	unsigned max_passes;			/* most points one operation passed */
	uint64_t voided, read_raced, claim_raced; /* paths taken, summed */
	uint64_t busy, commit_overrun, overrun, dropped;
	unsigned fail_lines[MAX_FAIL_LINES];	/* failed checks, per line */
} run;

/* A progress line every 10 s with --all or --verbose, and at the end. */
static void progress(bool last)
{
	struct timespec t;
	double el;

	clock_gettime(CLOCK_MONOTONIC, &t);
	if (!last && (!(run.all || run.verbose) || t.tv_sec - run.t_last.tv_sec < 10))
		return;
	run.t_last = t;
	el = (double)(t.tv_sec - run.t0.tv_sec) + (t.tv_nsec - run.t0.tv_nsec) / 1e9;
	fprintf(last ? stdout : stderr, "inject: %s%s: %llu of %u units, %llu plans run (1: %llu, "
		"2: %llu, 3: %llu, 4: %llu; %llu dry), %llu events checked, %llu failed, "
		"%.1f s\n", run.all ? "all" : "sampled", last ? " (done)" : "",
		(unsigned long long)run.unit, 12u * NR_STATES * NR_OPS,
		(unsigned long long)run.run, (unsigned long long)run.shapes[1],
		(unsigned long long)run.shapes[2], (unsigned long long)run.shapes[3],
		(unsigned long long)run.shapes[4], (unsigned long long)run.dry,
		(unsigned long long)run.events, (unsigned long long)run.failed, el);
	fflush(last ? stdout : stderr);
}

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

static uint64_t head_same(uint64_t head)
{
	return head;
}

/*
 * Reserve, fill, commit one event in the current context, and keep the books.
 * Returns 0, -RB_EFULL or -RB_EOFF; anything else fails the scenario.
 * -RB_EOFF only while recording was off (or being turned) during the
 * reserve, and always when it was off throughout (I12).
 */
static int put_event(uint32_t len)
{
	uint32_t seq = sc.nseq, word, i;
	struct ev *e = &sc.ev[seq];
	unsigned off_gen = sc.off_gen;
	bool off = sc.off, quiet = sc.changing == 0, head;
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
	if (quiet && off_gen == sc.off_gen)	/* no change raced with us */
		CHECK_EQ(rc == -RB_EOFF, off);
	if (rc == -RB_EOFF) {
		e->status = EV_OFF;
		sc.off_refused++;
		return rc;
	}
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

/* Recording off or on, from any CPU, as the books see it. */
static void record(bool on)
{
	/*
	 * The change takes effect at its CAS, before any injection point in
	 * it; a CAS that fails finds the state already as asked.  So another
	 * CPU's change nested in ours is the later one.
	 */
	sc.off_gen++;
	sc.changing++;
	sc.off = !on;
	if (on)
		ring_buffer_record_on(sc.cb);
	else
		ring_buffer_record_off(sc.cb);
	sc.changing--;
	sc.off_gen++;
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
 * An interrupt at level writing n events of len bytes, then flushing if
 * asked.  A flush from an interrupt may only be busy if it landed inside a
 * switch.
 */
static void irq(unsigned level, uint32_t n, uint32_t len, bool with_flush)
{
	unsigned saved = host_trace_level;
	bool switching = sc.cb->switching != 0;
	uint32_t i;
	int rc;

	CHECK(level > saved);
	host_trace_level = level;
	for (i = 0; i < n; i++)
		put_event(len);
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

	do {
		sc.readers_in++;
		rc = ring_buffer_read_page(sc.cb, &rd);
		sc.readers_in--;
		if (rc == 1)
			take_page(&rd);
	} while (rc == 1);
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

/*
 * The context of plan[i] runs, interrupting the current one.  Expected
 * answers: a reader gets -RB_EBUSY exactly when it interrupted (or, remote,
 * came during) another reader's take, else takes everything readable.
 */
static void fire(unsigned i, int point)
{
	const struct kind *kd = sc.plan[i].kind;
	unsigned saved = sc.cur;
	int rc;

	sc.plan[i].fired = true;
	run.hits[point]++;
	if (saved)
		run.deep_hits[point]++;
	sc.cur = i + 1;
	sc.passes[sc.cur] = 0;
	switch (kd->what) {
	case W_WRITE:
		irq((unsigned)kd->level, 1, kd->level == 3 ? LEN_NMI : LEN_IRQ, false);
		break;
	case W_STORM:
		irq((unsigned)kd->level, storm_events(), LEN_STORM, false);
		break;
	case W_WRITE_FLUSH:
		irq((unsigned)kd->level, 1, LEN_IRQ, true);
		break;
	case W_READ: {
		unsigned saved_level = host_trace_level;
		bool busy = sc.readers_in > 0;

		if (kd->level != REMOTE) {
			CHECK(kd->level > (int)saved_level);
			host_trace_level = (unsigned)kd->level;
		}
		rc = read_all();
		CHECK_EQ(rc, busy ? -RB_EBUSY : 0);
		host_trace_level = saved_level;
		break;
	}
	case W_OFF_ON:
		record(false);
		record(true);
		break;
	case W_OFF:
		if (!sc.off)
			record(false);
		break;
	}
	sc.cur = saved;
}

/*
 * host_hook_step and host_hook_clock: the current context passes an
 * injection point.  The next injection of the plan fires if it is for this
 * context and this pass.
 */
static void on_point(int point)
{
	unsigned o, i;

	CHECK(point >= 0 && point < NR_POINTS);
	if (!sc.counting)
		return;
	o = ++sc.passes[sc.cur];
	for (i = 0; i < sc.nplan && sc.plan[i].fired; i++)
		;
	if (i < sc.nplan && sc.plan[i].parent == sc.cur && sc.plan[i].ord == o)
		fire(i, point);
	if (sc.primer_pending && sc.cur == 0 &&
	    (point == RB_STEP_FAST_B || point == RB_STEP_SLOW_B)) {
		sc.primer_pending = false;
		sc.cur = CTX_PRIMER;
		irq(2, 1, LEN_IRQ, false);	/* lands between the stamp and the reservation */
		sc.cur = 0;
	}
}

static void on_step(int step)
{
	on_point(step);
}

static void on_clock(void)
{
	on_point(T_CLOCK);
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
	case OP_OFF_ON:
		/* Recording off from this CPU: the writer after it is refused,
		 * uncounted; on again: the next one is stored. */
		record(false);
		put_event(LEN_OUTER1);
		record(true);
		put_event(LEN_OUTER2);
		break;
	default:
		CHECK(!"a known operation");
	}
	sc.counting = false;
	if (sc.off)	/* a remote CPU turned it off: on again for the checks */
		record(true);
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
	CHECK_EQ(cb->state, RB_STATE_RECORDING);
	CHECK_EQ(cb->gate, RB_GATE_OPEN);	/* I12 */
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
		CHECK(sc.ev[s].status == EV_ACCEPTED || sc.ev[s].status == EV_REFUSED ||
		      sc.ev[s].status == EV_OFF);
		missing += sc.ev[s].status == EV_ACCEPTED && !sc.ev[s].decoded;
	}
	ring_buffer_stats(sc.cb, &st);
	CHECK_EQ(host_warn_count, 0);
	CHECK_EQ(st.state, RB_STATE_RECORDING);
	CHECK_EQ(st.written, sc.nseq - sc.off_refused);
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
 * One scenario with plan[0..nplan) armed (none: a dry run).  Leaves the
 * points each context passed in sc.passes.  Returns false if a check
 * failed (sc.fail_msg says).
 */
static bool scenario(unsigned nplan)
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
	sc.accepted = sc.refused = sc.off_refused = sc.decoded = sc.pages_taken = 0;
	sc.lost_overrun = sc.lost_dropped = sc.last_ts = sc.next_pos = 0;
	sc.nplan = nplan;
	for (i = 0; i < nplan; i++)
		sc.plan[i].fired = false;
	sc.cur = 0;
	memset(sc.passes, 0, sizeof(sc.passes));
	sc.counting = sc.primer_pending = sc.flush_ok = sc.off = false;
	sc.off_gen = sc.changing = 0;
	sc.readers_in = 0;
	if (setjmp(sc.fail_jmp)) {
		host_trace_level = 0;
		sc.counting = false;
		sc.cur = 0;
		sc.readers_in = 0;
		sc.changing = 0;
		return false;
	}
	for (i = 0; i <= MAX_PAGES; i++)
		memset(sc.pages[i], 0xa5, PAGE_SIZE);	/* garbage, on purpose */
	CHECK_EQ(ring_buffer_cpu_init(sc.cb, sc.cb_size, &c, sc.pages), 0);
	setup_state();

	sc.counting = true;
	outer_op();
	for (i = 0; i < nplan; i++)
		CHECK(sc.plan[i].fired);
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
	char plan[200] = "";
	size_t at = 0;
	unsigned i;

	for (i = 0; i < sc.nplan && at < sizeof(plan); i++)
		at += (size_t)snprintf(plan + at, sizeof(plan) - at, "%s%s in %u at #%u",
				       i ? ", " : "; ", sc.plan[i].kind->name, sc.plan[i].parent,
				       sc.plan[i].ord);
	if (run.failed++ - failed0 < 5 || run.verbose)	/* a few per configuration */
		print_message("FAIL %s%s\n", sc.fail_msg, plan);
}

/* The local level of context ctx (0 the task's, i + 1 plan[i]'s). */
static int ctx_level(unsigned ctx)
{
	for (; ctx; ctx = sc.plan[ctx - 1].parent)
		if (sc.plan[ctx - 1].kind->level != REMOTE)
			return sc.plan[ctx - 1].kind->level;
	return 0;
}

/* How many contexts deep ctx is: 0 the task's operation. */
static unsigned ctx_depth(unsigned ctx)
{
	unsigned d = 0;

	for (; ctx; ctx = sc.plan[ctx - 1].parent)
		d++;
	return d;
}

/*
 * May kd interrupt context ctx?  A local interrupt only above its level; a
 * remote CPU's action inside a local context only (one other CPU at a time).
 */
static bool kind_fits(const struct kind *kd, unsigned ctx)
{
	if (kd->level == REMOTE)
		return !ctx || sc.plan[ctx - 1].kind->level != REMOTE;
	return kd->level > ctx_level(ctx);
}

/* A plan of n injections is run (--all: every one; else a sample). */
static bool selected(unsigned n)
{
	return n == 1 || run.all || run.index++ % run.sample == 0;
}

static uint64_t failed0_cfg;

/*
 * Run plan[0..n) and every plan that extends it: one more injection into
 * the context of plan[n - 1], at each point it passes, of each kind that
 * may land there (down to four levels: the task, IRQ, NMI, a remote
 * reader or recording switch; a storm's context is not entered, its
 * points being the one event's many times); and, for a single injection,
 * a second one later in the task's operation.
 */
static void explore(unsigned n)
{
	unsigned passes[MAX_CTX], o, ki, last = n;
	const struct inj *e = &sc.plan[n - 1];

	if (!selected(n))
		return;
	run.run++;
	run.shapes[n]++;
	if (!scenario(n)) {
		report_failure(failed0_cfg);
		return;
	}
	if (n == MAX_PLAN)
		return;
	memcpy(passes, sc.passes, sizeof(passes));
	if (e->kind->what != W_STORM && ctx_depth(last) < 3 &&
	    (n == 1 || e->parent == n - 1))
		for (o = 1; o <= passes[last]; o++)
			for (ki = 0; ki < ARRAY_SIZE(kinds); ki++) {
				if (!kind_fits(&kinds[ki], last))
					continue;
				sc.plan[n] = (struct inj){ last, o, &kinds[ki], false };
				explore(n + 1);
			}
	if (n == 1)	/* two injections into the task's operation */
		for (o = e->ord + 1; o <= passes[0]; o++)
			for (ki = 0; ki < ARRAY_SIZE(kinds); ki++) {
				if (kinds[ki].what != W_WRITE && kinds[ki].what != W_READ &&
				    kinds[ki].what != W_OFF_ON)
					continue;
				sc.plan[1] = (struct inj){ 0, o, &kinds[ki], false };
				sc.plan[2].parent = 0;	/* no nesting under a pair */
				explore(2);
			}
}

/* Every plan over one configuration's states and operations, or a sample. */
static void test_config(void **state)
{
	const struct config *cfg = *state;
	unsigned o, ki, passes0;
	int st, op;

	failed0_cfg = run.failed;
	sc.cfg = cfg;
	for (st = 0; st < NR_STATES; st++) {
		for (op = 0; op < NR_OPS; op++) {
			if (run.unit++ % run.shards != run.shard)
				continue;
			sc.state = st;
			sc.op = op;
			snprintf(sc.where, sizeof(sc.where), "%s %s %s", cfg->name,
				 state_name[st], op_name[op]);
			run.dry++;
			if (!scenario(0)) {
				report_failure(failed0_cfg);
				continue;
			}
			passes0 = sc.passes[0];
			if (passes0 > run.max_passes)
				run.max_passes = passes0;
			for (o = 1; o <= passes0; o++)
				for (ki = 0; ki < ARRAY_SIZE(kinds); ki++) {
					sc.plan[0] = (struct inj){ 0, o, &kinds[ki], false };
					explore(1);
				}
			progress(false);
		}
	}
	if (run.failed != failed0_cfg)
		fail_msg("%s: %llu scenarios failed", cfg->name,
			 (unsigned long long)(run.failed - failed0_cfg));
}

/* Last: every point was interrupted somewhere; the summary. */
static void test_every_point_hit(void **state)
{
	char line[4000], deep[4000];
	size_t at = 0, dat = 0;
	int p, missed = 0, l;

	(void)state;
	deep[0] = 0;
	for (p = 0; p < NR_POINTS; p++) {
		at += (size_t)snprintf(line + at, sizeof(line) - at, " %s=%llu", step_name[p],
				       (unsigned long long)run.hits[p]);
		dat += (size_t)snprintf(deep + dat, sizeof(deep) - dat, " %s=%llu", step_name[p],
					(unsigned long long)run.deep_hits[p]);
		missed += run.hits[p] == 0;
	}
	progress(true);
	print_message("inject: hits:%s\n", line);
	print_message("inject: of them inside an injected context:%s\n", deep);
	print_message("inject: at most %u points in one operation; paths: voided %llu, "
		      "read_raced %llu, claim_raced %llu, busy %llu, commit_overrun %llu, "
		      "overrun %llu, dropped %llu\n", run.max_passes,
		      (unsigned long long)run.voided, (unsigned long long)run.read_raced,
		      (unsigned long long)run.claim_raced, (unsigned long long)run.busy,
		      (unsigned long long)run.commit_overrun, (unsigned long long)run.overrun,
		      (unsigned long long)run.dropped);
	for (l = 0; l < MAX_FAIL_LINES; l++)
		if (run.fail_lines[l])
			print_message("inject: check at line %d failed %u times\n", l,
				      run.fail_lines[l]);
	for (p = 0; p < NR_POINTS; p++)
		if (!run.hits[p])
			print_message("inject: point %s never interrupted\n", step_name[p]);
	if (run.shards == 1)
		assert_int_equal(missed, 0);
}

int main(int argc, char **argv)
{
	static struct config cfgs[12];
	struct CMUnitTest tests[ARRAY_SIZE(cfgs) + 1];
	uint32_t i;
	int a, rc;

	run.sample = SAMPLE_EVERY;
	run.shards = 1;
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--all"))
			run.all = true;
		else if (!strcmp(argv[a], "--verbose"))
			run.verbose = true;
		else if (!strcmp(argv[a], "--sample") && a + 1 < argc && atoi(argv[a + 1]) > 0)
			run.sample = (uint64_t)atoi(argv[++a]);
		else if (!strcmp(argv[a], "--shard") && a + 1 < argc &&
			 sscanf(argv[a + 1], "%u/%u", &run.shard, &run.shards) == 2 &&
			 run.shards > 0 && run.shard < run.shards)
			a++;
		else {
			fprintf(stderr, "usage: %s [--sample N | --all] [--shard I/N] "
				"[--verbose]\n", argv[0]);
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &run.t0);
	run.t_last = run.t0;
	sc.cb_size = ALIGN_UP(ring_buffer_cpu_size(MAX_PAGES), CACHELINE_SIZE);
	sc.cb = aligned_alloc(CACHELINE_SIZE, sc.cb_size);
	for (i = 0; i <= MAX_PAGES; i++)
		sc.pages[i] = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	host_warn_quiet = 1;
	host_hook_step = on_step;
	host_hook_clock = on_clock;
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
	tests[i] = (struct CMUnitTest){ .name = "every_point_hit",
					.test_func = test_every_point_hit };
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	for (i = 0; i <= MAX_PAGES; i++)
		free(sc.pages[i]);
	free(sc.cb);
	return rc;
}
