/*
 * The in-kernel ring buffer stress test (the bare-metal counterpart of
 * Linux's ring buffer start-up test). For each mode, on small buffers so
 * that overwrite and drops really happen:
 *
 *   - every CPU but the boot CPU writes stress events in a loop (task
 *     level), its LAPIC timer fires at STRESS_TIMER_HZ and writes from IRQ
 *     level, and the boot CPU sends it NMIs that write from NMI level;
 *   - the boot CPU waits until every writer has written a burst of more
 *     than its whole ring can hold (so overwrite and drops are certain),
 *     then reads pages from all of them while they keep writing, until
 *     each has written its quota at every level; then it stops them,
 *     flushes and drains every buffer.
 *
 * The run is bounded by work done, never by time: under icount on QEMU 7.2
 * a CPU that spins without pause keeps the emulator to itself (see
 * stress_mode()), so a window of time could end before a writer ran at all.
 * The time limit only turns a writer that cannot make progress into a
 * failure that names it.
 *
 * Checked: every payload (per CPU and level, seq strictly increasing and
 * check == mix(cpu, level, seq)); stamps never decrease in a CPU's buffer
 * order; the events read plus the loss the pages reported add up; and the
 * identity written = read + overrun + dropped (+ in-buffer, 0 after the
 * drain), with written equal to what the writers counted themselves.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include "kernel/console.h"
#include "kernel/ktest.h"
#include "kernel/pmm.h"
#include "kernel/trace_printk.h"
#include "kernel/tracing.h"

#define STRESS_PAGES		8
#define STRESS_TIMER_HZ		20000
#define STRESS_WRITERS_MAX	64
#define STRESS_EV_LEN		16	/* payload bytes of a stress event */
/* Task-level events per writer before the reader starts: every page of the
 * ring (and the reader's spare) filled twice over, so the ring overflows. */
#define STRESS_BURST		(2 * (STRESS_PAGES + 1) * \
				 (RB_PAGE_SIZE_DEFAULT / (4 + STRESS_EV_LEN)))
#define STRESS_LIVE_RINGS	32	/* rings' worth of task events while read */
#define STRESS_IRQ_MIN		20	/* IRQ-level events per writer, at least */
#define STRESS_NMI_MIN		10	/* NMI-level events per writer, at least */
#define STRESS_LIMIT_MS		20000	/* a writer short of its quota by then fails */
#define STRESS_YIELD_EVERY	16	/* task-level events between pauses */

struct stress_cpu {
	uint32_t seq[4];		/* next seq per level, writer side */
	uint64_t written;		/* stored or dropped (the buffer's "written") */
	uint64_t refused;		/* refused: recursion, off */
	bool started;			/* the writer loop began (writer sets) */
	uint32_t task_at_read;		/* seq[0] when the reader started */
	uint64_t live_pages;		/* pages read while the writers ran */
	uint32_t read_seq[4];		/* last seq seen per level, reader side */
	bool seen[4];			/* any seen at that level */
	uint64_t last_ts;		/* last stamp read */
	uint64_t events_read;		/* events validated */
	uint64_t lost_reported;		/* sum of the pages' loss */
	uint64_t errors;		/* validation failures */
	const char *first_error;	/* what the first one was */
} __aligned(CACHELINE_SIZE);

static struct stress_cpu stress[STRESS_WRITERS_MAX];
static volatile bool stress_stop;

static uint32_t mix(uint32_t cpu, uint32_t level, uint32_t seq)
{
	uint32_t h = seq * 0x9E3779B1u ^ (cpu << 24) ^ (level << 20);

	h ^= h >> 15;
	h *= 0x85EBCA77u;
	return h ^ (h >> 13);
}

static void stress_write(void)
{
	struct percpu *pc = this_cpu();
	struct stress_cpu *s = &stress[pc->cpu];
	uint32_t level = arch_trace_level() & 3;
	uint32_t seq = s->seq[level];
	int err = trace_stress(seq, mix(pc->cpu, level, seq), level);

	if (err == 0 || err == -RB_EFULL) {
		/* A dropped seq is a gap the reader may see. Atomic: the boot
		 * CPU watches the counts to know when the quotas are met. */
		__atomic_store_n(&s->seq[level], seq + 1, __ATOMIC_RELAXED);
		s->written++;
	} else {
		s->refused++;
	}
}

static void stress_irq(struct trap_frame *f)
{
	(void)f;
	this_cpu()->timer_ticks++;
	stress_write();
	lapic_eoi();
}

static void stress_nmi(struct trap_frame *f)
{
	(void)f;
	stress_write();
}

static void stress_writer(void *arg)
{
	(void)arg;
	__atomic_store_n(&stress[this_cpu()->cpu].started, true, __ATOMIC_RELEASE);
	irq_enable();
	lapic_timer_periodic(STRESS_TIMER_HZ);
	/* A pause now and then ends this CPU's turn under icount, so that no
	 * writer can starve the ones after it (see stress_mode()). */
	for (unsigned n = 1; !__atomic_load_n(&stress_stop, __ATOMIC_ACQUIRE); n++) {
		stress_write();
		if (!(n % STRESS_YIELD_EVERY))
			cpu_relax();
	}
	lapic_timer_stop();
}

static void fail(struct stress_cpu *s, const char *why)
{
	if (!s->errors++)
		s->first_error = why;
}

static void check_page(unsigned cpu, const struct rb_read *rd)
{
	struct stress_cpu *s = &stress[cpu];
	struct rb_page_iter it;
	struct rb_event ev;
	int r;

	s->lost_reported += rd->lost_overrun + rd->lost_dropped;
	if (rb_page_iter_init(&it, rd->page, rd->page_size) != RB_ITER_END) {
		fail(s, "malformed page header");
		return;
	}
	while ((r = rb_page_iter_next(&it, &ev)) == RB_ITER_EVENT) {
		const uint32_t *p = (const uint32_t *)ev.data;
		if (ev.ts < s->last_ts)
			fail(s, "stamp went backwards in buffer order");
		s->last_ts = ev.ts;
		s->events_read++;
		if ((p[0] & 0xFFFF) != TEV_stress)
			continue;	/* e.g. the IPI that started the writer: counted, not checked */
		if (ev.len != 16) {
			fail(s, "stress event of the wrong size");
			continue;
		}
		uint32_t seq = p[1], check = p[2], level = p[3];
		if (level > 3 || level != ((p[0] >> 16) & 0xFF)) {
			fail(s, "level does not match the header's context");
			continue;
		}
		if (check != mix(cpu, level, seq))
			fail(s, "payload check mismatch");
		if (s->seen[level] && seq <= s->read_seq[level])
			fail(s, "seq did not increase");
		s->seen[level] = true;
		s->read_seq[level] = seq;
	}
	if (r == RB_ITER_ERROR)
		fail(s, "malformed records");
}

/*
 * Read and check up to max pages of each writer's buffer (0: until it is
 * empty). While the writers run, a buffer may fill as fast as it is read
 * (under icount the emulator may give every CPU the same share), so an
 * unbounded drain could keep the boot CPU on one buffer for ever.
 */
static unsigned drain(unsigned ncpu, unsigned max, bool live)
{
	struct rb_read rd;
	unsigned pages = 0;

	for (unsigned c = 1; c < ncpu; c++) {
		if (!cpus[c] || !cpus[c]->online)
			continue;
		for (unsigned n = 0; !max || n < max; n++) {
			if (ring_buffer_read_page(ring_buffer_cpu(&trace_rb, c), &rd) != 1)
				break;
			check_page(c, &rd);
			stress[c].live_pages += live;
			pages++;
		}
	}
	return pages;
}

static bool writer_cpu(unsigned c)
{
	return cpus[c] && cpus[c]->online;
}

static uint32_t seq_of(unsigned c, unsigned level)
{
	return __atomic_load_n(&stress[c].seq[level], __ATOMIC_RELAXED);
}

/* Has writer c written the burst (before reading) / all its quotas? */
static bool burst_done(unsigned c)
{
	return seq_of(c, 0) >= STRESS_BURST;
}

static bool quota_done(unsigned c, bool reading)
{
	return reading && seq_of(c, 0) - stress[c].task_at_read >= STRESS_LIVE_RINGS *
	       STRESS_BURST / 2 && seq_of(c, 2) >= STRESS_IRQ_MIN && seq_of(c, 3) >= STRESS_NMI_MIN;
}

/*
 * The boot CPU's side of one mode. It waits and reads in one loop that
 * executes pause on every round. That matters under icount on QEMU 7.2:
 * all CPUs run in turn on one thread, and each turn may last until the
 * next timer deadline; a CPU that spins without pause or hlt uses all of
 * it, the CPUs after it in the round find no budget left, and the next
 * round starts again with CPU 0. With -smp 2 the writer then never ran
 * (measured: not one instruction in a 3 s spin of the boot CPU). A pause
 * ends the turn (QEMU raises EXCP_INTERRUPT), so every writer gets the
 * emulator up to its next deadline on every round, whatever the CPU count.
 */
static const char *stress_mode(int mode, unsigned ncpu)
{
	trap_handler_t old_timer = trap_get_handler(VEC_TIMER);
	trap_handler_t old_nmi = trap_get_handler(VEC_NMI);
	uint64_t t0, lim = tsc.hz / 1000 * STRESS_LIMIT_MS, nmis = 0;
	unsigned next = 1;
	bool reading = false;
	const char *why = NULL;

	if (!tracing_reconfigure(STRESS_PAGES, mode))
		return "could not rebuild the buffers";
	tracing_start();
	for (unsigned c = 0; c < ncpu; c++)
		stress[c] = (struct stress_cpu){ 0 };
	stress_stop = false;
	trap_set_handler(VEC_TIMER, stress_irq);
	trap_set_handler(VEC_NMI, stress_nmi);
	for (unsigned c = 1; c < ncpu; c++)
		if (writer_cpu(c) && !smp_call_async(c, stress_writer, NULL))
			why = "a writer CPU is busy";
	t0 = rdtsc();
	while (!why) {
		bool all_burst = true, all_done = true;
		for (unsigned c = 1; c < ncpu; c++) {
			if (!writer_cpu(c))
				continue;
			all_burst &= burst_done(c);
			all_done &= quota_done(c, reading);
		}
		if (all_done)
			break;
		if (!reading && all_burst) {
			/* The rings overflowed with nobody reading: loss is certain. */
			for (unsigned c = 1; c < ncpu; c++)
				stress[c].task_at_read = seq_of(c, 0);
			reading = true;
		}
		if (reading)
			drain(ncpu, STRESS_PAGES, true);
		if (writer_cpu(next)) {
			lapic_send_nmi(cpus[next]->apic_id);
			nmis++;
		}
		next = next + 1 < ncpu ? next + 1 : 1;
		cpu_relax();	/* yields the emulator under icount: see above */
		if (rdtsc() - t0 > lim) {
			for (unsigned c = 1; c < ncpu; c++)
				if (writer_cpu(c) && !quota_done(c, reading))
					printk("ktest: stress cpu=%u short of its quota after %u ms: "
					       "started=%s reading=%s task=%u irq=%u/%u nmi=%u/%u\n",
					       c, STRESS_LIMIT_MS,
					       __atomic_load_n(&stress[c].started, __ATOMIC_ACQUIRE) ?
					       "yes" : "no", reading ? "yes" : "no", seq_of(c, 0),
					       seq_of(c, 2), STRESS_IRQ_MIN, seq_of(c, 3), STRESS_NMI_MIN);
			why = "a writer did not reach its quota in time";
		}
	}
	__atomic_store_n(&stress_stop, true, __ATOMIC_RELEASE);
	for (unsigned c = 1; c < ncpu; c++)
		if (writer_cpu(c) && !smp_call_wait(c, 10000) && !why)
			why = "a writer did not stop";
	trap_set_handler(VEC_TIMER, old_timer);
	trap_set_handler(VEC_NMI, old_nmi);
	if (why)
		return why;
	tracing_stop();
	tracing_flush_all();
	drain(ncpu, 0, false);
	tracing_flush_all();	/* a flush in discard mode may need room first */
	drain(ncpu, 0, false);

	for (unsigned c = 1; c < ncpu; c++) {
		struct stress_cpu *s = &stress[c];
		struct rb_stats st;
		if (!writer_cpu(c))
			continue;
		ring_buffer_stats(ring_buffer_cpu(&trace_rb, c), &st);
		printk("ktest: stress mode=%s cpu=%u written=%llu read=%llu overrun=%llu "
		       "dropped=%llu commit_overrun=%llu in_buffer=%llu lost_reported=%llu "
		       "task=%u irq=%u nmi=%u live_pages=%llu refused=%llu errors=%llu\n",
		       mode == RB_MODE_OVERWRITE ? "overwrite" : "discard", c,
		       (unsigned long long)st.written, (unsigned long long)s->events_read,
		       (unsigned long long)st.overrun, (unsigned long long)st.dropped,
		       (unsigned long long)st.commit_overrun, (unsigned long long)st.in_buffer,
		       (unsigned long long)s->lost_reported, s->seq[0], s->seq[2], s->seq[3],
		       (unsigned long long)s->live_pages,
		       (unsigned long long)s->refused, (unsigned long long)s->errors);
		if (s->errors) {
			printk("ktest: stress cpu=%u first error: %s\n", c, s->first_error);
			return s->first_error;
		}
		/* The one other event on a writer CPU: the IPI that started it. */
		if (st.written != s->written + 1)
			return "the buffer's written count differs from the writers' own";
		if (st.in_buffer != 0)
			return "events left in the buffer after the drain";
		if (st.written != s->events_read + st.overrun + st.dropped)
			return "identity broken: written != read + overrun + dropped";
		if (st.read != s->events_read)
			return "the buffer's read count differs from the events validated";
		if (s->lost_reported != st.overrun + st.dropped)
			return "the pages' lost counts differ from overrun + dropped";
		if (!s->live_pages)
			return "no page was read while the writers ran";
	}
	printk("ktest: stress mode=%s nmis_sent=%llu\n",
	       mode == RB_MODE_OVERWRITE ? "overwrite" : "discard", (unsigned long long)nmis);
	return NULL;
}

KTEST(ring_buffer_stress)
{
	struct tracing_setup saved = tracing_setup_get();
	unsigned ncpu = cpu_count < STRESS_WRITERS_MAX ? cpu_count : STRESS_WRITERS_MAX;
	const char *why;

	if (ncpu < 2)
		return KT_SKIP("needs at least 2 CPUs");
	if (!tsc.hz)
		return "the TSC is not calibrated";
	why = stress_mode(RB_MODE_OVERWRITE, ncpu);
	if (!why)
		why = stress_mode(RB_MODE_DISCARD, ncpu);
	if (!tracing_setup_restore(&saved) && !why)
		why = "could not restore the buffers";
	return why;
}

KTEST(ring_buffer_refuses_bad_input)
{
	struct rb_cpu_buffer *cb = this_cpu_rb();
	struct rb_cpu_buffer *none = ring_buffer_cpu(NULL, 0);
	struct rb_stats before, after;
	void *data;

	ring_buffer_stats(cb, &before);
	KT_ASSERT(ring_buffer_reserve(cb, 0, &data) == -RB_EINVAL);
	KT_ASSERT(ring_buffer_reserve(cb, RB_MAX_PAYLOAD + 1, &data) == -RB_EINVAL);
	ring_buffer_stats(cb, &after);
	KT_ASSERT(after.rejected == before.rejected + 2);
	KT_ASSERT(after.written == before.written);
	/* The placeholder (no buffer) refuses and counts. */
	ring_buffer_stats(none, &before);
	KT_ASSERT(ring_buffer_reserve(none, 8, &data) == -RB_ENOBUF);
	ring_buffer_stats(none, &after);
	KT_ASSERT(after.refused == before.refused + 1);
	return NULL;
}

/*
 * Discard mode with a reader that never reads (issue 12, defect 1). A
 * private buffer on the boot CPU is filled, then DS_DROPS more reservations
 * of the largest payload must all be dropped. Each xadd on the closed tail
 * page adds its size to the write word's offset; unless it is given back,
 * the offset grows by RB_MAX_RECORD-ish per drop and after about 2^32 bytes
 * carries into the generation, and the fast path writes past its page.
 *
 * Checked against the test's own counts: every drop answered -RB_EFULL and
 * counted once; the write word's offset stays within a few records of the
 * page's capacity throughout; every reservation that succeeds lies inside
 * the tail page, one of the buffer's pages; and once everything is read, the events
 * decoded (each payload checked) equal the buffer's entries, read = entries,
 * nothing is left, and the pages' loss equals the drops.
 */
#define DS_PAGES	4
#define DS_DROPS	200000u
#define DS_LEN		RB_MAX_PAYLOAD

struct ds_state {
	struct rb_cpu_buffer *cb;
	uint32_t next_seq;	/* seq of the next event stored */
	uint32_t decoded;	/* events read back, payload checked */
	uint64_t lost;		/* the pages' lost counts, summed */
	const char *bad;	/* the first thing found wrong */
};

/*
 * [p, p + DS_LEN) lies in the data area of one of the buffer's pages, and
 * that page is the tail page: the data pages are one block, so a record
 * run past its page's end would still lie "in a page" (the next one).
 */
static bool ds_inside_pages(const struct rb_cpu_buffer *cb, const uint8_t *p)
{
	const uint8_t *tail = __atomic_load_n(&cb->tail_page, __ATOMIC_RELAXED);

	for (uint32_t i = 0; i <= cb->nr_slots; i++) {
		const uint8_t *pg = cb->pages[i];
		if (p >= pg + RB_PAGE_HEADER_SIZE && p + DS_LEN <= pg + cb->page_size)
			return pg == tail;
	}
	return false;
}

/* Reserve once; on success fill, check the pointer, commit. */
static int ds_write(struct ds_state *ds)
{
	uint32_t *p;
	int err = ring_buffer_reserve(ds->cb, DS_LEN, (void **)&p);

	if (err)
		return err;
	if (!ds_inside_pages(ds->cb, (const uint8_t *)p)) {
		if (!ds->bad)
			ds->bad = "a reservation lies outside the buffer's pages";
		ring_buffer_commit(ds->cb);	/* its bit; the space is not ours */
		return 0;
	}
	p[0] = trace_ent_word(TEV_stress, TRACE_ENT_WORDS(stress));
	p[1] = ds->next_seq;
	p[2] = mix(0, 0, ds->next_seq);
	p[DS_LEN / 4 - 1] = ~ds->next_seq;
	ds->next_seq++;
	ring_buffer_commit(ds->cb);
	return 0;
}

/* Take every complete page (flushing the tail), decoding and checking. */
static void ds_read_all(struct ds_state *ds)
{
	for (int round = 0; round < 4; round++) {
		struct rb_read rd;
		while (ring_buffer_read_page(ds->cb, &rd) == 1) {
			struct rb_page_iter it;
			struct rb_event ev;
			int r;
			ds->lost += rd.lost_overrun + rd.lost_dropped;
			if (rb_page_iter_init(&it, rd.page, rd.page_size) != RB_ITER_END)
				ds->bad = ds->bad ? ds->bad : "malformed page header";
			while ((r = rb_page_iter_next(&it, &ev)) == RB_ITER_EVENT) {
				const uint32_t *q = (const uint32_t *)ev.data;
				uint32_t want = ds->decoded;
				if (ev.len != DS_LEN || q[1] != want || q[2] != mix(0, 0, want) ||
				    q[DS_LEN / 4 - 1] != ~want)
					ds->bad = ds->bad ? ds->bad : "an event read back is not the one written";
				ds->decoded++;
			}
			if (r == RB_ITER_ERROR)
				ds->bad = ds->bad ? ds->bad : "malformed records";
		}
		ring_buffer_flush(ds->cb);	/* discard mode: may need room first */
	}
}

KTEST(ring_buffer_discard_stalled)
{
	uint64_t meta = (ring_buffer_cpu_size(DS_PAGES) + PAGE_SIZE - 1) / PAGE_SIZE;
	uint64_t cb_phys = pmm_alloc(meta, 1), data_phys = pmm_alloc(DS_PAGES + 1, 1);
	struct rb_cpu_config cfg = { .cpu = this_cpu()->cpu, .nr_pages = DS_PAGES,
				     .page_size = RB_PAGE_SIZE_DEFAULT, .mode = RB_MODE_DISCARD };
	struct ds_state ds = { 0 };
	void *pages[DS_PAGES + 1];
	struct rb_stats before, after;
	uint32_t stored = 0, fill_full = 0, other = 0, max_off = 0, later = 0;
	uint32_t off_limit;
	const char *why = NULL;

	if (!cb_phys || !data_phys) {
		if (cb_phys) pmm_free(cb_phys, meta);
		if (data_phys) pmm_free(data_phys, DS_PAGES + 1);
		return "no memory for the test's buffer";
	}
	for (unsigned i = 0; i <= DS_PAGES; i++)
		pages[i] = (void *)(uintptr_t)(data_phys + i * PAGE_SIZE);
	ds.cb = (struct rb_cpu_buffer *)(uintptr_t)cb_phys;
	if (ring_buffer_cpu_init(ds.cb, meta * PAGE_SIZE, &cfg, pages)) {
		why = "could not initialise the test's buffer";
		goto out;
	}
	off_limit = ds.cb->cap + 8 * RB_MAX_RECORD;

	/* Fill: store until the first drop (bounded: the ring holds far fewer). */
	for (unsigned i = 0; i < 4 * (DS_PAGES + 1) * RB_PAGE_SIZE_DEFAULT / DS_LEN; i++) {
		int err = ds_write(&ds);
		if (err == -RB_EFULL) {
			fill_full = 1;
			break;
		}
		if (err) {
			why = ds.bad ? ds.bad : "a reservation failed other than full while filling";
			goto out;
		}
		stored++;
	}
	if (ds.bad || !fill_full) {
		why = ds.bad ? ds.bad : "the ring never filled";
		goto out;
	}

	/* The stalled reader: every further reservation must be dropped. */
	ring_buffer_stats(ds.cb, &before);
	for (uint32_t i = 0; i < DS_DROPS; i++) {
		int err = ds_write(&ds);
		uint32_t off = rb_off(__atomic_load_n(&ds.cb->write, __ATOMIC_RELAXED));
		if (err != -RB_EFULL)
			other++;
		if (off > max_off)
			max_off = off;
	}
	ring_buffer_stats(ds.cb, &after);
	printk("ktest: discard_stalled stored=%u drops=%u not_full=%u dropped=%llu "
	       "max_offset=%u cap=%u limit=%u\n", stored, DS_DROPS, other,
	       (unsigned long long)(after.dropped - before.dropped), max_off, ds.cb->cap,
	       off_limit);
	if (other) {
		why = "a reservation on the full ring did not answer -RB_EFULL";
		goto out;
	}
	if (after.dropped - before.dropped != DS_DROPS) {
		why = "dropped did not rise by exactly the reservations attempted";
		goto out;
	}
	if (after.entries != before.entries || after.written != before.written + DS_DROPS) {
		why = "a dropped reservation changed entries, or written missed some";
		goto out;
	}
	if (max_off > off_limit) {
		why = "the full page's write offset kept growing with the drops";
		goto out;
	}

	/* Read everything; then the freed room takes new events, in the pages. */
	ds_read_all(&ds);
	for (unsigned i = 0; i < 4 * (DS_PAGES + 1) * RB_PAGE_SIZE_DEFAULT / DS_LEN; i++) {
		int err = ds_write(&ds);
		if (err == -RB_EFULL)
			break;
		if (err) {
			why = ds.bad ? ds.bad : "a reservation failed other than full after the read";
			goto out;
		}
		later++;
	}
	ds_read_all(&ds);
	ring_buffer_stats(ds.cb, &after);
	printk("ktest: discard_stalled later=%u decoded=%u entries=%llu read=%llu in_buffer=%llu "
	       "dropped=%llu lost=%llu overrun=%llu\n", later, ds.decoded,
	       (unsigned long long)after.entries, (unsigned long long)after.read,
	       (unsigned long long)after.in_buffer, (unsigned long long)after.dropped,
	       (unsigned long long)ds.lost, (unsigned long long)after.overrun);
	if (ds.bad)
		why = ds.bad;
	else if (!later)
		why = "no reservation succeeded after the read";
	else if (ds.decoded != stored + later || after.entries != ds.decoded)
		why = "the events decoded differ from those stored, or from entries";
	else if (after.read != after.entries || after.in_buffer || after.overrun)
		why = "read, in_buffer or overrun do not account for every event";
	else if (after.dropped != fill_full + DS_DROPS + 1 || ds.lost != after.dropped)
		why = "the drops counted, or the pages' loss, differ from the drops made";
out:
	pmm_free(cb_phys, meta);
	pmm_free(data_phys, DS_PAGES + 1);
	return why;
}

#ifdef TRACE_EVENT_LIST_EXTRA
/*
 * A kernel built with tests/host/events_extra.h (make EVENTS_EXTRA=...):
 * record its events, every field kind, with values a test can recompute
 * (i = 0 .. EXTRA_N - 1), for a decoder built without them to read from
 * the dump's descriptions (run=ktest,dump; tests/qemu/test_dump.py).
 */
#define EXTRA_N 40

KTEST(extra_events)
{
	static const char *const paths[] = { "/", "/boot/grub", "/a/path/much/longer/than/sixteen" };
	unsigned written = 0;

	for (uint32_t i = 0; i < EXTRA_N; i++) {
		written += trace_ints((uint8_t)i, (int8_t)-i, (uint16_t)(i * 1000), (int16_t)(-300 * (int)i),
				      0xdead0000u + i, -(int32_t)i * 100000, (uint64_t)i << 40,
				      -((int64_t)i << 40)) == 0;
		written += trace_mixed(i & 1, 0xffff800000000000ull + i, (const void *)&ktest_fn_extra_events,
				       i % 3 ? (i % 3 == 1 ? 1 : 7) : 0, i & 1 ? "tagged" : "t6789abc",
				       paths[i % 3], i % 2 ? "" : "note", (uint8_t)i) == 0;
	}
	printk("ktest: extra_events written=%u\n", written);
	KT_ASSERT(written == 2 * EXTRA_N);
	return 0;
}
#endif

/*
 * trace_printk and trace_puts: lines whose values tests/qemu/test_dump.py
 * recomputes (run=ktest,dump).
 */
KTEST(trace_printk_lines)
{
	int bad = 0;

	for (int i = 0; i < 5; i++)
		bad |= trace_printk("round %d of %u: hex=%#06x neg=%lld str=%-6s| %c %zu%%\n", i, 5u,
				    0xbeef + i, -(1ll << 40) - i, i & 1 ? "odd" : "even", 'a' + i,
				    (size_t)i * 1000);
	bad |= trace_puts("a plain string");
	KT_ASSERT(!bad);
	return 0;
}
