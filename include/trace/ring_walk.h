/*
 * Walking a ring buffer without taking from it: every event still in one
 * CPU's buffer, oldest first, from its state alone, changing nothing.
 *
 * CONTRACT
 *   The buffer's writers are quiescent: stopped (a panic, its CPUs halted)
 *   or gone (the previous boot, read from the memory it left).  Nothing
 *   here writes to the buffer, so a panic dump that walks leaves the next
 *   boot everything it will read.  One walk at a time (a static bitmap).
 *
 *   The state is untrusted: every field, slot word and page header is
 *   checked before it is used, and no pointer of the buffer's is followed
 *   (pages come from the caller's page(), by id).  What fails its checks is
 *   refused, with a reason, never decoded past.
 *
 * WHAT IS READ (I1..I11 are the ring's invariants, <trace/ring_buffer.h>)
 *   The positions from the reader's cursor (read_pos; or the oldest page
 *   still in the ring, tail_pos - N + 1, if writers lapped it) up to and
 *   including the tail page, in position order:
 *     - before commit_pos: published pages (I3), seq final;
 *     - commit_pos .. tail_pos - 1: closed by their crosser (I2) but not yet
 *       published (a writer was inside when the CPU stopped): their seq is
 *       the running count of the pages before;
 *     - the tail page, up to the write word's offset, only if no writer
 *       holds a nest bit (I7): a writer between reserve and commit may have
 *       half-written its event, and which record it is cannot be told (the
 *       fast path marks no commit per event), so the whole tail page is
 *       dropped and its events counted as lost.
 *   A page is refused if its header is not the one its slot promises (pos,
 *   cpu, version), its commit is outside it, a record is malformed, its
 *   count is not its entries, a stamp is below the one before it on this
 *   CPU, or the caller's page_ok() says its seal does not match.
 */
#ifndef TRACE_RING_WALK_H
#define TRACE_RING_WALK_H

#include <trace/ring_buffer.h>

/* The fields of struct rb_cpu_buffer a walk reads, copied out (and sealed). */
struct rb_walk_state {
	uint64_t write;		/* tail page's write word (I1) */
	uint64_t tail_pos;	/* position of the tail page */
	uint64_t commit_pos;	/* pages before it are published (I3) */
	uint64_t read_pos;	/* the reader's next position */
	uint64_t rd_seq;	/* seq the reader expects next */
	uint64_t rd_dropped;	/* dropped count on the reader's last page */
	uint64_t rd_last_ts;	/* last stamp the reader saw (I10) */
	uint64_t overrun;	/* events lost to overwrite */
	uint64_t dropped;	/* events dropped */
	uint32_t nest;		/* writer levels and flags (I7) */
	uint32_t nr_slots;	/* N */
	uint32_t page_size;	/* bytes per page */
	uint32_t cap;		/* record bytes per page */
	uint32_t cpu;		/* owning CPU */
	uint32_t mode;		/* enum rb_mode */
	uint32_t reader_page;	/* id of the page outside the ring */
	uint32_t state;		/* RB_STATE_* */
};

/* Copy the walked fields of cb (relaxed loads: writers are quiescent). */
void ring_walk_state(const struct rb_cpu_buffer *cb, struct rb_walk_state *st);

struct rb_walk {
	const struct rb_walk_state *st;	/* the buffer's state */
	const uint64_t *slots;		/* its N slot words */
	uint32_t cpu;			/* the CPU the buffer must belong to */
	/* Page id (0 .. N) to its page_size bytes; NULL if the caller has none. */
	const uint8_t *(*page)(void *ctx, uint32_t id);
	/* Optional: false if the page's seal does not match (damaged). */
	bool (*page_ok)(void *ctx, uint32_t id);
	void *ctx;
};

/* One page as a reader would have taken it, with the fields a copy needs. */
struct rb_walk_page {
	const uint8_t *page;	/* the page, unchanged */
	uint64_t pos;		/* its header's pos */
	uint64_t seq;		/* events stored on this CPU before its first */
	uint64_t lost_overrun;	/* events overwritten between the previous page and it */
	uint64_t lost_dropped;	/* events dropped in between */
	uint32_t commit;	/* record bytes to decode (the tail page: the write offset) */
	uint32_t entries;	/* data events in them */
	bool tail;		/* the tail page */
};

struct rb_walk_result {
	uint64_t events;	/* events on the pages handed out */
	uint64_t lost;		/* lost before them, as their losses say, plus refused pages' */
	uint32_t pages;		/* pages handed out */
	uint32_t refused;	/* pages refused (a mid-event tail page included) */
	const char *why;	/* the first reason a page or the state was refused, or NULL */
};

/*
 * Walk w, calling emit(ctx, pg) for each readable page, oldest first.
 * Returns 0, or -1 if the state itself is inconsistent (nothing emitted;
 * res->why says why).  emit returning nonzero ends the walk early.
 */
int ring_walk(const struct rb_walk *w, int (*emit)(void *ctx, const struct rb_walk_page *pg),
	      void *ctx, struct rb_walk_result *res);

#endif
