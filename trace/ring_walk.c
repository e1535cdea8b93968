/*
 * The non-consuming walk of one CPU's ring buffer: what it reads and why it
 * may trust it is in <trace/ring_walk.h>.  The state checks below restate
 * the ring's invariants (I3, I4, I11) as tests on numbers that may be
 * anything: a previous boot's memory, possibly damaged.
 */
#include <trace/ring_walk.h>

static uint8_t walk_seen[(RB_MAX_PAGES + 1 + 7) / 8];	/* page ids met (I4) */

static inline uint64_t ld64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline uint32_t ld32(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void ring_walk_state(const struct rb_cpu_buffer *cb, struct rb_walk_state *st)
{
	__builtin_memset(st, 0, sizeof(*st));
	st->write = ld64(&cb->write);
	st->tail_pos = ld64(&cb->tail_pos);
	st->commit_pos = ld64(&cb->commit_pos);
	st->read_pos = ld64(&cb->read_pos);
	st->rd_seq = ld64(&cb->rd_seq);
	st->rd_dropped = ld64(&cb->rd_dropped);
	st->rd_last_ts = ld64(&cb->rd_last_ts);
	st->overrun = ld64(&cb->overrun);
	st->dropped = ld64(&cb->dropped);
	st->nest = ld32(&cb->nest);
	st->nr_slots = cb->nr_slots;
	st->page_size = cb->page_size;
	st->cap = cb->cap;
	st->cpu = cb->cpu;
	st->mode = cb->mode;
	st->reader_page = ld32(&cb->reader_page);
	st->state = ld32(&cb->state);
}

/* The state's own consistency: NULL, or why it cannot be walked. */
static const char *check_state(const struct rb_walk *w)
{
	const struct rb_walk_state *st = w->st;
	uint64_t n = st->nr_slots, tp = st->tail_pos;
	uint32_t i, id;

	if (n < 2 || n > RB_MAX_PAGES)
		return "ring size out of range";
	if (st->page_size < RB_PAGE_SIZE_MIN || st->page_size > RB_PAGE_SIZE_MAX ||
	    (st->page_size & (st->page_size - 1)) || st->cap != st->page_size - RB_PAGE_HEADER_SIZE)
		return "page size inconsistent";
	if (st->cpu != w->cpu)
		return "buffer of another CPU";
	if (st->mode != RB_MODE_OVERWRITE && st->mode != RB_MODE_DISCARD)
		return "mode unknown";
	if (st->state != RB_STATE_OFF && st->state != RB_STATE_RECORDING &&
	    st->state != RB_STATE_STOPPED)
		return "state unknown";
	/* I3; positions start at N; the reader never passes commit_pos. */
	if (tp < n || tp > (1ull << (64 - RB_SLOT_POS_SHIFT)) || st->commit_pos > tp ||
	    tp - st->commit_pos >= n || st->read_pos < n || st->read_pos > st->commit_pos)
		return "positions out of order";
	/* I1, I11: the write word names the tail and stays below its bound. */
	if (rb_gen(st->write) != (uint32_t)tp ||
	    rb_off(st->write) >= st->cap + RB_NEST_MAX * (st->cap + 1) + RB_MAX_RECORD)
		return "write word inconsistent";
	if (st->nest & RB_NEST_GUARD)
		return "nest word inconsistent";
	/* I4: every slot in its window, the N + 1 page ids each exactly once. */
	if (st->reader_page > n)
		return "page id out of range";
	__builtin_memset(walk_seen, 0, (size_t)(n + 1 + 7) / 8);
	walk_seen[st->reader_page / 8] |= (uint8_t)(1u << (st->reader_page % 8));
	for (i = 0; i < n; i++) {
		uint64_t s = w->slots[i], pos = rb_slot_pos(s);

		id = rb_slot_id(s);
		if (id > n)
			return "page id out of range";
		if (walk_seen[id / 8] & (1u << (id % 8)))
			return "page id used twice";
		walk_seen[id / 8] |= (uint8_t)(1u << (id % 8));
		if (pos % n != i || pos + n <= tp || pos > tp)
			return "slot out of its window";
	}
	return NULL;
}

/*
 * Records of one page up to commit: well formed, entries of them, stamps
 * from *last_ts on never decreasing (I10).  NULL, or why not.
 */
static const char *check_records(const uint8_t *page, uint32_t page_size, uint32_t commit,
				 uint32_t entries, uint64_t *last_ts)
{
	const struct rb_page_header *hdr = (const struct rb_page_header *)page;
	struct rb_page_iter it;
	struct rb_event ev;
	uint64_t prev = *last_ts;
	uint32_t count = 0;
	int r;

	if (rb_page_iter_init(&it, page, page_size) != RB_ITER_END)
		return "page header malformed";
	it.end = commit;	/* the tail page: the write offset, not the header's 0 */
	if (hdr->base_ts < prev)
		return "page base below the stamp before it";
	prev = hdr->base_ts;
	while ((r = rb_page_iter_next(&it, &ev)) == RB_ITER_EVENT) {
		if (ev.ts < prev)
			return "stamps out of order";
		prev = ev.ts;
		count++;
	}
	if (r != RB_ITER_END)
		return "records malformed";
	if (count != entries)
		return "event count is not the header's";
	*last_ts = prev;
	return NULL;
}

int ring_walk(const struct rb_walk *w, int (*emit)(void *ctx, const struct rb_walk_page *pg),
	      void *ctx, struct rb_walk_result *res)
{
	const struct rb_walk_state *st = w->st;
	uint64_t n, p, first, expect_seq, prev_dropped, last_ts, pending_lost = 0;
	const char *why;

	__builtin_memset(res, 0, sizeof(*res));
	why = check_state(w);
	if (why) {
		res->why = why;
		return -1;
	}
	n = st->nr_slots;
	first = st->read_pos;
	if (first + n <= st->tail_pos)
		first = st->tail_pos - n + 1;	/* lapped: older positions reused (I5) */
	expect_seq = st->rd_seq;
	prev_dropped = st->rd_dropped;
	last_ts = st->rd_last_ts;

	for (p = first; p <= st->tail_pos; p++) {
		uint64_t s = w->slots[p % n];
		uint32_t id = rb_slot_id(s), commit, claimed;
		const uint8_t *page = w->page(w->ctx, id);
		const struct rb_page_header *hdr = (const struct rb_page_header *)page;
		bool tail = p == st->tail_pos, published = p < st->commit_pos;
		struct rb_walk_page pg;

		/* The reader's (a take the stop interrupted, I6): not in the ring. */
		if (rb_slot_consumed(s))
			continue;
		why = NULL;
		/*
		 * What a refused page held, for the loss count: its header's
		 * count if plausible (a damaged header may say less; nothing
		 * better is left), else 0.
		 */
		claimed = page && hdr->entries <= st->cap / 4u ? hdr->entries : 0;
		if (!page)
			why = "page not in the range";
		else if (w->page_ok && !w->page_ok(w->ctx, id))
			why = "page checksum mismatch";
		else if (hdr->pos != p - n || hdr->cpu != w->cpu || hdr->version != RB_FORMAT_VERSION)
			why = "page header is not its slot's";
		else if (hdr->entries > st->cap / 4u || hdr->dropped < prev_dropped ||
			 (published && hdr->seq < expect_seq))
			why = "page counts inconsistent";
		if (!why) {
			commit = hdr->commit;
			if (tail && (st->nest & RB_NEST_WRITERS))
				why = "a writer was mid-event on the tail page";
			else if (tail && rb_off(st->write) <= st->cap)
				commit = rb_off(st->write);
			if (!why && (commit > st->cap || commit % 4u))
				why = "page commit outside the page";
			if (!why)
				why = check_records(page, st->page_size, commit, claimed, &last_ts);
		}
		if (why) {
			/*
			 * Counted as lost: by the next published page's seq
			 * (which subsumes this), else here, at the end.
			 */
			pending_lost += claimed;
			res->refused++;
			if (!res->why)
				res->why = why;
			continue;
		}
		pg.page = page;
		pg.pos = hdr->pos;
		pg.seq = published ? hdr->seq : expect_seq + pending_lost;
		pg.lost_overrun = pg.seq - expect_seq;
		pg.lost_dropped = hdr->dropped - prev_dropped;
		pg.commit = commit;
		pg.entries = claimed;
		pg.tail = tail;
		pending_lost = 0;
		expect_seq = pg.seq + claimed;
		prev_dropped = hdr->dropped;
		res->events += claimed;
		res->lost += pg.lost_overrun + pg.lost_dropped;
		res->pages++;
		if (emit(ctx, &pg))
			break;
	}
	res->lost += pending_lost;
	return 0;
}
