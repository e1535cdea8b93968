/*
 * The reader of the per-CPU ring buffer: takes complete pages out of the
 * ring while the owning CPU keeps writing, and tells how many events were
 * lost before each page.
 *
 * CONTRACT
 *   One reader per CPU buffer at a time, on any CPU (the reader_busy
 *   try-lock turns a second one away).  A reader on the owning CPU may be
 *   interrupted by writers; it never waits for one.  It takes only pages
 *   before commit_pos (I3, I6), never the page writers are on.
 *
 * Interleaving points (the writer's S1..S6 and P1..P4 are in the writer's
 * file, the invariants in the design block of <trace/ring_buffer.h>):
 *   R1 acquire commit_pos   R2 load the slot of read_pos
 *   R3 CAS the slot from {h, page} to {h, consumed, our spare}
 *
 * The one race: R3 against the writer's S2 on the same slot, in overwrite
 * mode when the writer wants position h + N.  Exactly one CAS wins.
 *   - Reader first: the writer's CAS fails, it reloads, finds the slot
 *     consumed and fills our spare instead; nothing is lost.
 *   - Writer first: our CAS fails and the slot now says h + N or later:
 *     position h was overwritten (counted as overrun by the writer), and
 *     every position up to that minus N as well; we skip to the first one
 *     that can still be there and try again.
 * Every attempt reads commit_pos afresh: in overwrite mode any position
 * at or below commit_pos - N has been reclaimed, so the reader starts at
 * the oldest page that may still exist instead of chasing the writer
 * through positions it has already reused.  A writer lapping a small ring
 * faster than a take completes can still make the reader give up after
 * RB_READ_TRIES attempts: it then returns -RB_EAGAIN and loses nothing.
 *
 * Lost events.  Each page carries seq, the number of events stored on its
 * CPU before its first one, and dropped, the CPU's running count of dropped
 * events when the page started.  Between the previous page taken, prev, and
 * this one, exactly seq - (prev.seq + prev.entries) stored events were
 * overwritten: pages are finalised in position order and none is
 * overwritten before it is final (I5).  And dropped - prev.dropped events
 * were dropped after prev started and before this page did; in discard
 * mode, where drops happen while the tail page is full, that is exactly
 * the gap between the two pages' events.
 */
#include <trace/ring_buffer.h>

#define RB_READ_TRIES	8	/* overwritten positions to skip before giving up */

static inline void rb_bump(uint64_t *var, uint64_t n)
{
	/* Reader-owned; atomic only so statistics may read it anywhere. */
	__atomic_store_n(var, *var + n, __ATOMIC_RELAXED);
}

/*
 * Walk the records of a page we own: each must be well formed, their count
 * must be the header's entries, and no stamp may lie below the one before
 * it in this CPU's stream (the previous page taken included; I10).  A clock
 * that steps back is not the buffer's fault: it is counted and the page is
 * flagged, and reading goes on.  Returns false for a malformed page.
 */
static bool rb_check_records(struct rb_cpu_buffer *cb, const uint8_t *page,
			     uint32_t *backwards)
{
	const struct rb_page_header *hdr = (const struct rb_page_header *)page;
	uint64_t prev = cb->rd_last_ts;
	struct rb_page_iter it;
	struct rb_event ev;
	uint32_t n = 0;
	int r;

	*backwards = 0;
	if (rb_page_iter_init(&it, page, cb->page_size) != RB_ITER_END)
		return false;
	if (hdr->base_ts < prev)
		(*backwards)++;
	prev = hdr->base_ts;
	while ((r = rb_page_iter_next(&it, &ev)) == RB_ITER_EVENT) {
		if (ev.ts < prev)
			(*backwards)++;
		prev = ev.ts;
		n++;
	}
	if (r != RB_ITER_END || n != hdr->entries)
		return false;
	cb->rd_last_ts = prev;
	return true;
}

/*
 * Check the page we now own and report the events lost before it.
 * Returns 1, or 0 if the page is unusable: recording stops (if it had not)
 * and the caller skips the page, whose events the next page's seq then
 * counts as lost.
 */
static int rb_take(struct rb_cpu_buffer *cb, uint64_t h, uint64_t s,
		   struct rb_read *rd)
{
	uint8_t *page = cb->pages[rb_slot_id(s)];
	struct rb_page_header *hdr = (struct rb_page_header *)page;
	uint64_t overwritten, dropped, lost;
	uint32_t backwards;

	cb->reader_page = rb_slot_id(s);
	if (hdr->pos != h - cb->nr_slots || hdr->commit > cb->cap ||
	    hdr->version != RB_FORMAT_VERSION || hdr->seq < cb->rd_seq ||
	    hdr->dropped < cb->rd_dropped) {
		ring_buffer_stop(cb, "reader: page header inconsistent");
		return 0;
	}
	if (!rb_check_records(cb, page, &backwards)) {
		ring_buffer_stop(cb, "reader: page records malformed");
		return 0;
	}
	arch_rb_step(RB_STEP_TAKE);
	if (backwards) {
		hdr->flags |= RB_PAGE_CLOCK_BACK;
		rb_bump(&cb->read_backwards, backwards);
	}
	overwritten = hdr->seq - cb->rd_seq;
	dropped = hdr->dropped - cb->rd_dropped;
	lost = overwritten + dropped;
	hdr->lost = lost > 0xffffffffu ? 0xffffffffu : (uint32_t)lost;
	if (lost)
		hdr->flags |= RB_PAGE_LOST;
	cb->rd_seq = hdr->seq + hdr->entries;
	cb->rd_dropped = hdr->dropped;

	rb_bump(&cb->read, hdr->entries);
	rb_bump(&cb->read_bytes, hdr->commit);
	rb_bump(&cb->lost, lost);
	rb_bump(&cb->pages_read, 1);
	arch_rb_step(RB_STEP_TAKE_DONE);

	rd->page = page;
	rd->page_size = cb->page_size;
	rd->entries = hdr->entries;
	rd->pos = hdr->pos;
	rd->lost_overrun = overwritten;
	rd->lost_dropped = dropped;
	return 1;
}

int ring_buffer_read_page(struct rb_cpu_buffer *cb, struct rb_read *rd)
{
	uint32_t state = __atomic_load_n(&cb->state, __ATOMIC_RELAXED);
	uint32_t n, tries;
	uint64_t cp, h, s, q;
	int ret;

	/*
	 * After an integrity stop the pages completed before it are still
	 * read (the evidence); commit_pos no longer moves (P1 sees the stop),
	 * and each page is checked on its own as always.
	 */
	if (state == RB_STATE_NONE) {
		__atomic_fetch_add(&cb->refused, 1, __ATOMIC_RELAXED);
		return -RB_ENOBUF;
	}
	if (__atomic_exchange_n(&cb->reader_busy, 1, __ATOMIC_ACQUIRE))
		return -RB_EBUSY;
	arch_rb_step(RB_STEP_R0);

	n = cb->nr_slots;
	h = cb->read_pos;
	ret = -RB_EAGAIN;
	for (tries = 0; tries < RB_READ_TRIES; tries++) {
		/*R1*/ cp = __atomic_load_n(&cb->commit_pos, __ATOMIC_ACQUIRE);
		/* acquire; pairs with the release in rb_publish() (P3) */
		arch_rb_step(RB_STEP_R1);
		if (cb->mode == RB_MODE_OVERWRITE && h + n <= cp)
			h = cp - n + 1;	/* all before it reclaimed (I4, I5) */
		if (h >= cp) {
			ret = 0;	/* nothing complete to take */
			break;
		}
		/*R2*/ s = __atomic_load_n(&cb->slots[h % n], __ATOMIC_ACQUIRE);
		arch_rb_step(RB_STEP_R2);
		q = rb_slot_pos(s);
		if (q > h) {
			/* Overwritten: the writer is at least one lap ahead (I5). */
			if (cb->mode != RB_MODE_OVERWRITE || (q - h) % n) {
				ring_buffer_stop(cb, "reader: slot ahead of its cursor");
				ret = -RB_ESTOPPED;
				break;
			}
			h = q - n + 1;
			continue;
		}
		if (q != h || rb_slot_consumed(s)) {
			ring_buffer_stop(cb, "reader: slot behind its cursor");
			ret = -RB_ESTOPPED;
			break;
		}
		/*
		 * R3: release, so our reads of the spare we hand back are done
		 * before the writer can claim it; pairs with the acquire of
		 * the writer's CAS in rb_switch_page() (S2).  On failure the
		 * writer overwrote position h: look again.
		 */
		if (__atomic_compare_exchange_n(&cb->slots[h % n], &s,
						rb_slot_make(h, true, cb->reader_page), false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			arch_rb_step(RB_STEP_R3);
			ret = rb_take(cb, h, s, rd);
			h++;
			if (ret == 1)
				break;
			/* Unusable page: now ours, skipped; its events count as
			 * lost on the next page taken.  Try that one. */
			rb_bump(&cb->bad_pages, 1);
			ret = -RB_ESTOPPED;
			continue;
		}
		rb_bump(&cb->read_raced, 1);
	}
	__atomic_store_n(&cb->read_pos, h, __ATOMIC_RELAXED);
	arch_rb_step(RB_STEP_R_POS);

	/* release; pairs with the acquire of the next reader's exchange */
	__atomic_store_n(&cb->reader_busy, 0, __ATOMIC_RELEASE);
	return ret;
}
