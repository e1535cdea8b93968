/*
 * Per-CPU lockless ring buffer: setup, control, and the writer's slow paths
 * (voiding, page crossing, page switch, publish, flush).
 *
 * The contract, glossary, layout, invariants I1..I11 and the fast path's
 * interleaving points A..G are in the design block of <trace/ring_buffer.h>;
 * the reader is in its own file.  This file adds:
 *
 *   Page switch (rb_switch_page), run by the writer that found the tail page
 *   closed:
 *     S1 take the switching flag      S2 claim the next slot (CAS; races R3)
 *     S3 start the new page's header  S4 store tail page, base and position
 *     S5 store the write word: nested writers now see the new page
 *     S6 drop the flag
 *   Publish (rb_publish), run by the outermost writer after its commit:
 *     P1 take the publish bit, clear unpublished   P2 finalise pages
 *     P3 release commit_pos   P4 drop the bit; look again if unpublished
 *
 * Concurrency within one CPU is by stack discipline (I7): an interrupt runs
 * to completion before the code it interrupted resumes, so a context that
 * finds a word unchanged across a window knows nothing ran in between, and
 * a flag a context sets and clears itself needs no atomic instruction (the
 * switching flag).  The nest word also carries a flag that one context sets
 * and another clears (unpublished), so it only changes by single local
 * read-modify-write instructions, which no interrupt can split.  Across
 * CPUs only the slot words (CAS) and commit_pos (release/acquire) are
 * shared with the reader; counters use relaxed atomics so statistics may be
 * read from anywhere.
 */
#include <trace/ring_buffer.h>

#define RB_RESERVE_TRIES	8	/* reservation attempts before dropping */
#define RB_PUBLISH_ROUNDS	4	/* publishes in a row before giving up */
#define RB_FLUSH_ROUNDS		6	/* close, switch, close, switch, check */

enum rb_switch_result {
	RB_SW_DONE,		/* we moved the tail */
	RB_SW_STALE,		/* someone already had */
	RB_SW_BUSY,		/* an interrupted context is switching (I9) */
	RB_SW_FULL,		/* discard mode: next page not read yet */
	RB_SW_COMMIT_OVERRUN,	/* next page still has uncommitted data (I5) */
	RB_SW_STOPPED,		/* an invariant broke; recording stopped */
};

/* Answers for a CPU without a buffer: refuses and counts everything. */
struct rb_cpu_buffer rb_cpu_absent = { .gate = RB_GATE_CLOSED };

/*
 * I12: make gate say what state says, after any change of state.  Store,
 * then look again: a change that raced with the store is seen and gate
 * stored again, so whoever stores last stores the final state's answer.
 * Sequentially consistent, so the look cannot pass the store.
 */
static void rb_sync_gate(struct rb_cpu_buffer *cb)
{
	uint32_t s;

	do {
		s = __atomic_load_n(&cb->state, __ATOMIC_SEQ_CST);
		arch_rb_step(RB_STEP_GATE_STATE);
		__atomic_store_n(&cb->gate, s == RB_STATE_RECORDING ? RB_GATE_OPEN :
					    s == RB_STATE_OFF ? RB_GATE_OFF : RB_GATE_CLOSED,
				 __ATOMIC_SEQ_CST);
		arch_rb_step(RB_STEP_GATE_STORE);
	} while (__atomic_load_n(&cb->state, __ATOMIC_SEQ_CST) != s);
}

static inline void rb_count(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

/* A writer-owned value that statistics may read from another CPU. */
static inline void rb_set(uint64_t *var, uint64_t v)
{
	__atomic_store_n(var, v, __ATOMIC_RELAXED);
}

static inline struct rb_page_header *rb_hdr(uint8_t *page)
{
	return (struct rb_page_header *)page;
}

/* ---- setup and control ---- */

size_t ring_buffer_cpu_size(uint32_t nr_pages)
{
	if (nr_pages < 2 || nr_pages > RB_MAX_PAGES)
		return 0;
	return sizeof(struct rb_cpu_buffer) + (size_t)nr_pages * sizeof(uint64_t) +
	       ((size_t)nr_pages + 1) * sizeof(uint8_t *);
}

static void rb_start_page(struct rb_cpu_buffer *cb, uint8_t *page, uint64_t pos,
			  uint64_t base)
{
	struct rb_page_header *hdr = rb_hdr(page);

	hdr->base_ts = base;
	hdr->seq = 0;
	hdr->dropped = __atomic_load_n(&cb->dropped, __ATOMIC_RELAXED);
	hdr->pos = pos - cb->nr_slots;
	hdr->commit = 0;
	/* Atomic: statistics may sum live entries from another CPU. */
	__atomic_store_n(&hdr->entries, 0, __ATOMIC_RELAXED);
	hdr->lost = 0;
	hdr->cpu = (uint16_t)cb->cpu;
	hdr->version = RB_FORMAT_VERSION;
	hdr->flags = 0;
}

int ring_buffer_cpu_init(struct rb_cpu_buffer *cb, size_t cb_size,
			 const struct rb_cpu_config *cfg, void *const pages[])
{
	uint32_t n, i;
	uint64_t base;

	if (!cb || !cfg || !pages || (uintptr_t)cb % CACHELINE_SIZE)
		return -RB_EINVAL;
	n = cfg->nr_pages;
	if (ring_buffer_cpu_size(n) == 0 || cb_size < ring_buffer_cpu_size(n))
		return -RB_EINVAL;
	if (cfg->page_size < RB_PAGE_SIZE_MIN || cfg->page_size > RB_PAGE_SIZE_MAX ||
	    (cfg->page_size & (cfg->page_size - 1)) ||
	    (cfg->mode != RB_MODE_OVERWRITE && cfg->mode != RB_MODE_DISCARD) ||
	    cfg->cpu > 0xffffu)
		return -RB_EINVAL;
	for (i = 0; i <= n; i++)
		if (!pages[i] || (uintptr_t)pages[i] % 8u)
			return -RB_EINVAL;

	__builtin_memset(cb, 0, sizeof(*cb));
	cb->slots = (uint64_t *)(cb + 1);
	cb->pages = (uint8_t **)(cb->slots + n);
	for (i = 0; i <= n; i++)
		cb->pages[i] = (uint8_t *)pages[i];
	cb->nr_slots = n;
	cb->page_size = cfg->page_size;
	cb->cap = cfg->page_size - RB_PAGE_HEADER_SIZE;
	cb->mode = cfg->mode;
	cb->cpu = cfg->cpu;

	/*
	 * Positions start at N so that q - N never underflows.  Page 0 is the
	 * tail at position N; the other slots hold "consumed" positions 1 ..
	 * N - 1, free for the writer (I4, I5); page N is the reader's.
	 */
	cb->slots[0] = rb_slot_make(n, false, 0);
	for (i = 1; i < n; i++)
		cb->slots[i] = rb_slot_make(i, true, i);
	cb->reader_page = n;
	cb->read_pos = n;
	cb->commit_pos = n;
	cb->tail_pos = n;
	cb->tail_slot = 0;

	base = arch_read_cycles();
	if (cfg->base_adjust >= 0) {
		base += (uint64_t)cfg->base_adjust;
	} else {
		uint64_t back = 0 - (uint64_t)cfg->base_adjust;	/* |adjust|, even for INT64_MIN */
		base = base > back ? base - back : 0;
	}
	rb_start_page(cb, cb->pages[0], n, base);
	cb->tail_page = cb->pages[0];
	cb->tail_base = base;
	cb->write = (uint64_t)n << 32;

	/* Last: from here on writers and readers may come (release). */
	__atomic_store_n(&cb->state, cfg->start_off ? RB_STATE_OFF : RB_STATE_RECORDING,
			 __ATOMIC_RELEASE);
	rb_sync_gate(cb);
	return 0;
}

struct rb_cpu_buffer *ring_buffer_cpu(const struct ring_buffer *rb, uint32_t cpu)
{
	if (!rb || !rb->cpus || cpu >= rb->nr_cpus || !rb->cpus[cpu])
		return &rb_cpu_absent;
	return rb->cpus[cpu];
}

static void rb_state_change(struct rb_cpu_buffer *cb, uint32_t from, uint32_t to)
{
	if (__atomic_compare_exchange_n(&cb->state, &from, to, false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED)) {
		arch_rb_step(RB_STEP_STATE);
		rb_sync_gate(cb);
	}
}

void ring_buffer_record_on(struct rb_cpu_buffer *cb)
{
	rb_state_change(cb, RB_STATE_OFF, RB_STATE_RECORDING);
}

void ring_buffer_record_off(struct rb_cpu_buffer *cb)
{
	rb_state_change(cb, RB_STATE_RECORDING, RB_STATE_OFF);
}

/*
 * The integrity stop (our RB_WARN_ON): recording on this CPU ends, the
 * reason is kept and reported once, and every later call is refused.
 */
void ring_buffer_stop(struct rb_cpu_buffer *cb, const char *why)
{
	const char *none = NULL;
	uint32_t state = __atomic_load_n(&cb->state, __ATOMIC_RELAXED);

	if (state == RB_STATE_NONE) {
		rb_count(&cb->refused, 1);
		return;
	}
	__atomic_compare_exchange_n(&cb->stop_reason, &none, why, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	state = __atomic_exchange_n(&cb->state, RB_STATE_STOPPED, __ATOMIC_RELAXED);
	rb_sync_gate(cb);
	if (state != RB_STATE_STOPPED)
		arch_trace_warn(cb->cpu, why);
}

/* ---- refusals (out of line so the fast path stays short) ---- */

static inline struct rb_reservation rb_fail(int err)
{
	return (struct rb_reservation){ NULL, err };
}

struct rb_reservation rb_refuse(struct rb_cpu_buffer *cb, uint32_t state)
{
	/* Recording off is the cheap, expected case: not counted. */
	if (state == RB_STATE_OFF || state == RB_STATE_RECORDING)
		return rb_fail(-RB_EOFF);
	rb_count(&cb->refused, 1);
	return rb_fail(state == RB_STATE_STOPPED ? -RB_ESTOPPED : -RB_ENOBUF);
}

struct rb_reservation rb_reject_size(struct rb_cpu_buffer *cb)
{
	rb_count(&cb->rejected, 1);
	return rb_fail(-RB_EINVAL);
}

struct rb_reservation rb_refuse_nesting(struct rb_cpu_buffer *cb)
{
	rb_count(&cb->refused, 1);
	rb_count(&cb->recursion, 1);
	return rb_fail(-RB_ERECURSION);
}

/*
 * The commit found more than its own bit in nest (I7, I8): a writer it
 * interrupted, a publish it interrupted, a publish due, or a bit it never
 * held (its sub borrowed into the zero bits: undo that and count it).
 * The bit is the caller's level's, read again here so that the fast path
 * keeps nothing for this call.
 */
void rb_commit_slow(struct rb_cpu_buffer *cb)
{
	uint32_t bit = arch_trace_level_bit();
	uint32_t nest = rb_nest_load(cb);

	arch_rb_step(RB_STEP_COMMIT_SLOW);
	if (bit == 0 || (nest & RB_NEST_GUARD)) {
		arch_local_add32(&cb->nest, bit);
		rb_count(&cb->refused, 1);
		return;
	}
	if (nest & (RB_NEST_WRITERS | RB_NEST_PUBLISH))
		return;		/* not outermost: the outermost publishes */
	if (nest & RB_NEST_UNPUBLISHED)
		rb_publish(cb);
}

/* ---- the writer's slow paths ---- */

/*
 * The page holding generation gen.  Only called for a page this context has
 * space on, which cannot be reused until our commit (I3, I5), so the slot
 * still names it.  tail_pos is stored before the write word (S4 < S5): gen
 * is never ahead of it.
 */
static uint8_t *rb_page_of_gen(struct rb_cpu_buffer *cb, uint32_t gen)
{
	uint64_t tp = cb->tail_pos;
	uint64_t pos = tp - (uint32_t)((uint32_t)tp - gen);
	uint64_t s;

	arch_rb_step(RB_STEP_PAGE_OF_GEN);
	s = __atomic_load_n(&cb->slots[pos % cb->nr_slots], __ATOMIC_RELAXED);
	if (rb_slot_pos(s) != pos || rb_slot_consumed(s))
		return NULL;
	return cb->pages[rb_slot_id(s)];
}

/*
 * Our xadd of rec found the page of gen(w) closed already (offset past cap):
 * the space is nobody's.  Take rec back off the write word, as Linux gives
 * a failed reservation's size back to its tail page, so that dropped
 * reservations on a closed page (discard mode with the ring full, commit
 * overruns) cannot add up until the 32-bit offset carries into gen (I11).
 *
 * Only while the word still holds gen(w): after a switch it belongs to a
 * new page, which our xadd never touched.  A local cmpxchg, because an
 * interrupt between our look and our store may switch.  Every offset on
 * the closed page includes the crosser's end and our rec, so the result
 * stays past cap: the page stays closed.  An interrupt that lands between
 * the load and the cmpxchg and does not switch leaves the word as it found
 * it (its own xadd, then its own give-back; stack discipline), so the
 * second attempt succeeds; the bound is for safety only.
 */
static void rb_give_back(struct rb_cpu_buffer *cb, uint64_t w, uint32_t rec)
{
	uint64_t cur = __atomic_load_n(&cb->write, __ATOMIC_RELAXED), seen;
	uint32_t tries;

	for (tries = 0; tries < RB_RESERVE_TRIES; tries++) {
		if (rb_gen(cur) != rb_gen(w) || rb_off(cur) <= cb->cap + rec)
			return;		/* switched, or not ours to take */
		arch_rb_step(RB_STEP_GIVE_LOAD);
		seen = arch_local_cmpxchg(&cb->write, cur, cur - rec);
		if (seen == cur) {
			arch_rb_step(RB_STEP_GIVE_BACK);
			return;
		}
		cur = seen;
	}
}

/*
 * Deal with a reservation [off, off + rec) on page gen(w) that failed its
 * check /D/ (I2).  If it fits, an interrupt hit the window A..C: void the
 * space.  If it starts inside the page and ends past it, we are the
 * crosser: pad the end and set the page's commit.  If it starts past the
 * end, the crosser is someone else.  Returns 0, or -1 after a stop.
 */
static int rb_settle(struct rb_cpu_buffer *cb, uint64_t w, uint32_t rec)
{
	uint32_t off = rb_off(w), cap = cb->cap;
	uint8_t *page;

	if (off > cap) {
		rb_give_back(cb, w, rec);
		return 0;
	}
	page = rb_page_of_gen(cb, rb_gen(w));
	if (!page) {
		ring_buffer_stop(cb, "reserved space on a page no longer in the ring");
		return -1;
	}
	arch_rb_step(RB_STEP_SETTLE);
	if (off + rec <= cap) {
		rb_put_padding(page + RB_PAGE_HEADER_SIZE + off, rec);
		rb_count(&cb->voided, 1);
		arch_rb_step(RB_STEP_VOID);
		return 0;
	}
	if (off < cap)
		rb_put_padding(page + RB_PAGE_HEADER_SIZE + off, cap - off);
	arch_rb_step(RB_STEP_CROSS_PAD);
	/* No reader before commit_pos passes this page, after our commit. */
	rb_hdr(page)->commit = off;
	arch_rb_step(RB_STEP_CROSS);
	return 0;
}

/* May the tail move now?  Same rules as S2 (I5). */
static bool rb_can_switch(const struct rb_cpu_buffer *cb)
{
	uint32_t i = cb->tail_slot + 1 == cb->nr_slots ? 0 : cb->tail_slot + 1;
	uint64_t s = __atomic_load_n(&cb->slots[i], __ATOMIC_ACQUIRE);

	arch_rb_step(RB_STEP_CAN_SWITCH);
	if (rb_slot_consumed(s))
		return true;
	return cb->mode == RB_MODE_OVERWRITE && rb_slot_pos(s) < cb->commit_pos;
}

/*
 * Move the tail from the closed page of generation gen to the next position.
 * Called by a writer holding its nest bit, so no publish can run meanwhile.
 */
static enum rb_switch_result rb_switch_page(struct rb_cpu_buffer *cb, uint32_t gen)
{
	enum rb_switch_result ret;
	uint32_t n = cb->nr_slots, i, tries;
	uint64_t w, s, q, base;
	uint8_t *page;

	/*S1*/ if (__atomic_load_n(&cb->switching, __ATOMIC_RELAXED))
		return RB_SW_BUSY;	/* we interrupted a switch (I9) */
	arch_rb_step(RB_STEP_S1_LOAD);
	__atomic_store_n(&cb->switching, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	arch_rb_step(RB_STEP_S1);

	w = __atomic_load_n(&cb->write, __ATOMIC_RELAXED);
	arch_rb_step(RB_STEP_S1_W);
	if (rb_gen(w) != gen) {
		ret = RB_SW_STALE;
		goto out;
	}
	if (rb_off(w) <= cb->cap) {
		ring_buffer_stop(cb, "page switch from a page that is not closed");
		ret = RB_SW_STOPPED;
		goto out;
	}

	q = cb->tail_pos + 1;
	i = cb->tail_slot + 1 == n ? 0 : cb->tail_slot + 1;
	s = __atomic_load_n(&cb->slots[i], __ATOMIC_ACQUIRE);
	for (tries = 0;; tries++) {
		if (rb_slot_pos(s) != q - n || tries > 1) {
			ring_buffer_stop(cb, "slot out of step with the tail");
			ret = RB_SW_STOPPED;
			goto out;
		}
		if (!rb_slot_consumed(s)) {
			if (rb_slot_pos(s) >= cb->commit_pos) {
				ret = RB_SW_COMMIT_OVERRUN;
				goto out;
			}
			if (cb->mode == RB_MODE_DISCARD) {
				ret = RB_SW_FULL;
				goto out;
			}
		}
		/*
		 * S2: acquire pairs with the reader's release CAS in
		 * ring_buffer_read_page() (R3): once we see its spare, its
		 * reads of that page are done.  Release orders nothing we
		 * need but keeps the pair symmetric.  A failure means the
		 * reader consumed the slot just now; it can only do that
		 * once, so the second try must succeed.
		 */
		arch_rb_step(RB_STEP_S2_LOAD);
		if (__atomic_compare_exchange_n(&cb->slots[i], &s,
						rb_slot_make(q, false, rb_slot_id(s)), false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
		rb_count(&cb->claim_raced, 1);
		arch_rb_step(RB_STEP_S2);
	}

	arch_rb_step(RB_STEP_S2);
	page = cb->pages[rb_slot_id(s)];
	if (!rb_slot_consumed(s))	/* overwrite: complete, never read (I5) */
		rb_set(&cb->overrun, cb->overrun + rb_hdr(page)->entries);

	/*S3*/ base = arch_read_cycles();
	if (base < cb->tail_base) {	/* keep bases ordered (I10) */
		rb_count(&cb->write_backwards, 1);
		base = cb->tail_base;
	}
	rb_start_page(cb, page, q, base);
	cb->prev_dropped = cb->tail_dropped;
	cb->tail_dropped = rb_hdr(page)->dropped;
	arch_rb_step(RB_STEP_S3);

	/*S4*/ __atomic_store_n(&cb->tail_page, page, __ATOMIC_RELAXED);
	arch_rb_step(RB_STEP_S4_PAGE);
	__atomic_store_n(&cb->tail_base, base, __ATOMIC_RELAXED);
	arch_rb_step(RB_STEP_S4_BASE);
	rb_set(&cb->tail_pos, q);
	arch_rb_step(RB_STEP_S4_POS);
	cb->tail_slot = i;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	arch_rb_step(RB_STEP_S4);
	/*S5*/ __atomic_store_n(&cb->write, (uint64_t)(uint32_t)q << 32, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	arch_rb_step(RB_STEP_S5_W);
	arch_local_or32(&cb->nest, RB_NEST_UNPUBLISHED);	/* I8 */
	arch_rb_step(RB_STEP_S5);
	ret = RB_SW_DONE;
out:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/*S6*/ __atomic_store_n(&cb->switching, 0, __ATOMIC_RELAXED);
	arch_rb_step(RB_STEP_S6);
	return ret;
}

/* Count a failed switch against the event that needed it. */
static int rb_drop(struct rb_cpu_buffer *cb, enum rb_switch_result why)
{
	if (why == RB_SW_STOPPED) {
		rb_count(&cb->refused, 1);
		return -RB_ESTOPPED;
	}
	if (why == RB_SW_BUSY)
		rb_count(&cb->busy, 1);
	else if (why == RB_SW_COMMIT_OVERRUN)
		rb_count(&cb->commit_overrun, 1);
	rb_count(&cb->dropped, 1);
	return -RB_EFULL;
}

/*
 * The fast path's guard failed: refuse a writer whose level is invalid or
 * already active (or below an active one), else take the bit and reserve
 * here (a flag was set: a publish is running or due).
 */
struct rb_reservation rb_reserve_gated(struct rb_cpu_buffer *cb, uint32_t len,
				       unsigned how, uint32_t bit)
{
	uint32_t state = __atomic_load_n(&cb->state, __ATOMIC_RELAXED);

	if (state != RB_STATE_RECORDING)
		return rb_refuse(cb, state);
	if (bit == 0 || (rb_nest_load(cb) & RB_NEST_WRITERS) >= bit)
		return rb_refuse_nesting(cb);
	arch_rb_step(RB_STEP_GATED);
	arch_local_or32(&cb->nest, bit);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return rb_reserve_slow(cb, len, how, 0, 0);
}

/*
 * Everything the fast path does not handle: a large delta (extend or
 * absolute stamp), a clock below the base, an interrupted window, a page
 * crossing, a closed page, the cmpxchg method's retries.  The caller holds
 * its nest bit; on failure we release it as a commit would.
 */
struct rb_reservation rb_reserve_slow(struct rb_cpu_buffer *cb, uint32_t len,
				      unsigned how, uint64_t w, uint64_t w0)
{
	const bool use_cmpxchg = (how & RB_SLOW_CMPXCHG) != 0;
	enum rb_switch_result sw;
	uint64_t base, delta;
	uint32_t rec, ext, tries;
	uint8_t *page, *rp;
	int ret;

	/*
	 * Zeroed memory (I12): its gate is open and its cap 0, so writers
	 * come here; give back the xadd, if any, and refuse.
	 */
	if (unlikely(__atomic_load_n(&cb->state, __ATOMIC_RELAXED) == RB_STATE_NONE)) {
		if (how & RB_SLOW_AFTER_XADD)
			arch_local_xadd(&cb->write, 0 - (uint64_t)rb_data_record_size(len));
		ring_buffer_commit(cb);
		return rb_refuse(cb, RB_STATE_NONE);
	}
	if ((how & RB_SLOW_AFTER_XADD) && rb_settle(cb, w, rb_data_record_size(len))) {
		ret = -RB_ESTOPPED;
		goto fail;
	}
	for (tries = 0; tries < RB_RESERVE_TRIES; tries++) {
		/*A*/ w0 = __atomic_load_n(&cb->write, __ATOMIC_ACQUIRE);
		arch_rb_step(RB_STEP_SLOW_A);
		if (rb_off(w0) > cb->cap) {
			sw = rb_switch_page(cb, rb_gen(w0));
			if (sw == RB_SW_DONE || sw == RB_SW_STALE)
				continue;
			ret = rb_drop(cb, sw);
			goto fail;
		}
		base = __atomic_load_n(&cb->tail_base, __ATOMIC_RELAXED);
		arch_rb_step(RB_STEP_SLOW_BASE);
		page = __atomic_load_n(&cb->tail_page, __ATOMIC_RELAXED);
		arch_rb_step(RB_STEP_SLOW_PAGE);
		/*B*/ delta = arch_read_cycles() - base;
		arch_rb_step(RB_STEP_SLOW_B);
		if ((int64_t)delta < 0) {
			rb_count(&cb->write_backwards, 1);
			delta = 0;
		}
		if (delta < RB_DELTA_LIMIT)
			ext = 0;
		else if (delta < RB_EXTEND_LIMIT)
			ext = RB_EXTEND_SIZE;
		else
			ext = RB_ABS_SIZE;
		rec = ext + rb_data_record_size(len);

		/*C*/ if (use_cmpxchg) {
			/* Overflowing is allowed: it makes us the crosser (I2). */
			w = arch_local_cmpxchg(&cb->write, w0, w0 + rec);
			if (w != w0)
				continue;	/* an interrupt reserved: retry */
		} else {
			w = arch_local_xadd(&cb->write, rec);
		}
		arch_rb_step(RB_STEP_SLOW_C);
		/*D*/ if (w == w0 && rb_off(w) + rec <= cb->cap) {
			arch_rb_step(RB_STEP_SLOW_D);
			/*E*/ rp = page + RB_PAGE_HEADER_SIZE + rb_off(w);
			if (ext == RB_EXTEND_SIZE) {
				rb_store32(rp, rb_record_word(RB_KIND_EXTEND,
							      (uint32_t)(delta >> RB_DELTA_BITS)));
				rp += RB_EXTEND_SIZE;
				delta &= RB_DELTA_LIMIT - 1;
			} else if (ext == RB_ABS_SIZE) {
				rb_store32(rp, rb_record_word(RB_KIND_ABS, 0));
				rb_store64(rp + 4, base + delta);
				rp += RB_ABS_SIZE;
				delta = 0;
			}
			rp = rb_put_data(rp, len, delta);
			arch_rb_step(RB_STEP_SLOW_STORE);
			arch_local_add32(&rb_hdr(page)->entries, 1);
			arch_rb_step(RB_STEP_SLOW_E);
			return (struct rb_reservation){ rp, 0 };
		}
		if (rb_settle(cb, w, rec)) {
			ret = -RB_ESTOPPED;
			goto fail;
		}
	}
	/* Interrupted over and over: give up on this one event. */
	rb_count(&cb->dropped, 1);
	ret = -RB_EFULL;
fail:
	ring_buffer_commit(cb);
	return rb_fail(ret);
}

/*
 * P2: make page p readable: check it, then stamp the running total of
 * stored events the reader uses to count overwritten ones.  Complete by I3:
 * every writer that had space on it has committed.
 */
static bool rb_finalize(struct rb_cpu_buffer *cb, uint64_t p)
{
	uint64_t s = __atomic_load_n(&cb->slots[p % cb->nr_slots], __ATOMIC_RELAXED);
	struct rb_page_header *hdr;

	arch_rb_step(RB_STEP_FIN_SLOT);
	if (rb_slot_pos(s) != p || rb_slot_consumed(s))
		return false;
	hdr = rb_hdr(cb->pages[rb_slot_id(s)]);
	if (hdr->pos != p - cb->nr_slots || hdr->commit > cb->cap ||
	    hdr->entries > cb->cap / 4u)
		return false;
	hdr->seq = cb->fin_seq;
	arch_rb_step(RB_STEP_FIN_SEQ);
	rb_set(&cb->fin_seq, cb->fin_seq + hdr->entries);
	rb_set(&cb->fin_bytes, cb->fin_bytes + hdr->commit);
	return true;
}

/*
 * Called by the context whose commit left no writer or publish bit in nest
 * when the tail has moved past commit_pos (unpublished, I8).  Interrupts
 * that write meanwhile see the publish
 * bit and leave publishing to us; if they move the tail we go round again.
 */
void rb_publish(struct rb_cpu_buffer *cb)
{
	uint64_t cp, tp, p;
	uint32_t round;

	for (round = 0; round < RB_PUBLISH_ROUNDS; round++) {
		if (rb_nest_load(cb) & (RB_NEST_WRITERS | RB_NEST_PUBLISH))
			return;
		arch_rb_step(RB_STEP_P0);
		/*P1*/ arch_local_or32(&cb->nest, RB_NEST_PUBLISH);
		arch_rb_step(RB_STEP_P1_OR);
		/* Before reading the tail: a switch from here on sets it again. */
		arch_local_and32(&cb->nest, ~RB_NEST_UNPUBLISHED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		arch_rb_step(RB_STEP_P1);
		if (__atomic_load_n(&cb->state, __ATOMIC_RELAXED) == RB_STATE_STOPPED)
			goto out;
		cp = cb->commit_pos;
		arch_rb_step(RB_STEP_P1_CP);
		tp = cb->tail_pos;
		if (tp < cp || tp - cp >= cb->nr_slots) {
			ring_buffer_stop(cb, "tail and commit out of range");
			goto out;
		}
		for (p = cp; p < tp; p++) {
			/*P2*/ if (!rb_finalize(cb, p)) {
				ring_buffer_stop(cb, "page header inconsistent at publish");
				goto out;
			}
			arch_rb_step(RB_STEP_P2);
		}
		/*
		 * P3: release; pairs with the acquire in ring_buffer_read_page()
		 * (R1).  Everything written to pages before tp, by us and by
		 * the interrupts nested in us, is visible before the position.
		 */
		__atomic_store_n(&cb->commit_pos, tp, __ATOMIC_RELEASE);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		arch_rb_step(RB_STEP_P3);
		/*P4*/ arch_local_and32(&cb->nest, ~RB_NEST_PUBLISH);
		arch_rb_step(RB_STEP_P4);
		if (!(rb_nest_load(cb) & RB_NEST_UNPUBLISHED))
			return;
	}
	return;
out:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	arch_local_and32(&cb->nest, ~RB_NEST_PUBLISH);
}

/*
 * Ends pages until the tail page is empty and the page before it started
 * after the last drop: then every stored event and every counted drop is
 * on a page the publish at our commit makes readable.  At most: close the
 * tail, switch, close the new (empty) page that carries the drops, switch.
 */
int ring_buffer_flush(struct rb_cpu_buffer *cb)
{
	uint32_t state = __atomic_load_n(&cb->state, __ATOMIC_RELAXED);
	uint32_t bit, round;
	enum rb_switch_result sw;
	uint64_t w0, w;
	uint8_t *page;
	int ret = 0;

	if (state != RB_STATE_RECORDING && state != RB_STATE_OFF)
		return rb_refuse(cb, state).err;
	arch_rb_step(RB_STEP_FLUSH_STATE);
	bit = arch_trace_level_bit();
	if (bit == 0 || (rb_nest_load(cb) & RB_NEST_WRITERS) >= bit)
		return rb_refuse_nesting(cb).err;
	arch_local_or32(&cb->nest, bit);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	arch_rb_step(RB_STEP_FLUSH);

	for (round = 0; round < RB_FLUSH_ROUNDS; round++) {
		w0 = __atomic_load_n(&cb->write, __ATOMIC_ACQUIRE);
		arch_rb_step(RB_STEP_FLUSH_W);
		if (rb_off(w0) <= cb->cap) {
			if (rb_off(w0) == 0 &&
			    cb->prev_dropped == __atomic_load_n(&cb->dropped, __ATOMIC_RELAXED))
				goto out;	/* nothing left to hand over */
			if (!rb_can_switch(cb)) {
				ret = -RB_EFULL;
				goto out;
			}
			arch_rb_step(RB_STEP_FLUSH_CAN);
			/* Close the page: a reservation that cannot fit makes
			 * us its crosser, or finds it closed already (I2). */
			w = arch_local_xadd(&cb->write, cb->cap + 1);
			arch_rb_step(RB_STEP_FLUSH_CLOSE);
			if (rb_off(w) <= cb->cap) {
				page = rb_page_of_gen(cb, rb_gen(w));
				if (page)
					rb_hdr(page)->flags |= RB_PAGE_FLUSHED;
				arch_rb_step(RB_STEP_FLUSH_FLAG);
			}
			if (rb_settle(cb, w, cb->cap + 1)) {
				ret = -RB_ESTOPPED;
				goto out;
			}
			continue;
		}
		sw = rb_switch_page(cb, rb_gen(w0));
		if (sw == RB_SW_DONE || sw == RB_SW_STALE)
			continue;
		ret = sw == RB_SW_STOPPED ? -RB_ESTOPPED :
		      sw == RB_SW_BUSY ? -RB_EBUSY : -RB_EFULL;
		goto out;
	}
	ret = -RB_EAGAIN;
out:
	ring_buffer_commit(cb);	/* release our bit; publish if outermost */
	return ret;
}

/* ---- statistics ---- */

static uint64_t rb_get(const uint64_t *var)
{
	return __atomic_load_n(var, __ATOMIC_RELAXED);
}

void ring_buffer_stats(const struct rb_cpu_buffer *cb, struct rb_stats *st)
{
	uint64_t cp, tp, p, s, live = 0, gone;

	__builtin_memset(st, 0, sizeof(*st));
	st->state = __atomic_load_n(&cb->state, __ATOMIC_RELAXED);
	st->stop_reason = __atomic_load_n(&cb->stop_reason, __ATOMIC_RELAXED);
	st->rejected = rb_get(&cb->rejected);
	st->refused = rb_get(&cb->refused);
	st->recursion = rb_get(&cb->recursion);
	if (st->state == RB_STATE_NONE)
		return;

	/* Events on pages not yet final: commit_pos .. tail_pos. */
	cp = __atomic_load_n(&cb->commit_pos, __ATOMIC_ACQUIRE);
	tp = rb_get(&cb->tail_pos);
	for (p = cp; p <= tp && p - cp < cb->nr_slots; p++) {
		s = __atomic_load_n(&cb->slots[p % cb->nr_slots], __ATOMIC_RELAXED);
		if (rb_slot_pos(s) == p && !rb_slot_consumed(s))
			live += __atomic_load_n(&rb_hdr(cb->pages[rb_slot_id(s)])->entries,
						__ATOMIC_RELAXED);
	}
	st->entries = rb_get(&cb->fin_seq) + live;
	st->overrun = rb_get(&cb->overrun);
	st->dropped = rb_get(&cb->dropped);
	st->commit_overrun = rb_get(&cb->commit_overrun);
	st->busy = rb_get(&cb->busy);
	st->written = st->entries + st->dropped;
	st->read = rb_get(&cb->read);
	gone = st->read + st->overrun;
	st->in_buffer = st->entries > gone ? st->entries - gone : 0;
	st->bytes = rb_get(&cb->fin_bytes);
	st->read_bytes = rb_get(&cb->read_bytes);
	st->lost = rb_get(&cb->lost);
	st->pages_read = rb_get(&cb->pages_read);
	st->voided = rb_get(&cb->voided);
	st->write_backwards = rb_get(&cb->write_backwards);
	st->read_backwards = rb_get(&cb->read_backwards);
	st->clock_backwards = st->write_backwards + st->read_backwards;
	st->bad_pages = rb_get(&cb->bad_pages);
	st->claim_raced = rb_get(&cb->claim_raced);
	st->read_raced = rb_get(&cb->read_raced);
}
