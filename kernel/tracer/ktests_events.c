/*
 * ktests of per-event enable and disable (kernel/tracer/trace_ctl.c):
 * demo:mark flipped thousands of times while every CPU records it.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/text_poke.h>
#include <arch/tsc.h>
#include "kernel/console.h"
#include "kernel/ktest.h"
#include "kernel/trace_ctl.h"
#include "kernel/tracing.h"

#define FLIPS		2000
#define PER_EPOCH	3	/* marks a CPU tries in each state it sees */
#define LIMIT_MS	240000	/* TSC time for all the flips */
#define WAIT_MS		30000

/* One CPU's counts of what trace_mark() returned; that CPU writes them. */
struct flip_cpu {
	uint64_t ok, off, full, other;
	uint64_t epochs;	/* flip epochs it wrote in */
	uint64_t written0;	/* its ring's written count before */
} __aligned(CACHELINE_SIZE);

static struct flip_cpu flip[MAX_CPUS];
static uint64_t flip_epoch;	/* flips done; the writers' pace */
static bool flip_stop;

static void count(struct flip_cpu *f, int err)
{
	if (err == 0)
		f->ok++;
	else if (err == -RB_EOFF)
		f->off++;
	else if (err == -RB_EFULL)
		f->full++;
	else
		f->other++;
}

/*
 * PER_EPOCH marks for each flip this CPU sees, then sleep: each flip's
 * code-change syncs are IPIs that wake it (and a CPU that never sleeps
 * makes every sync wait for host time under TCG).  The writes race the
 * patching: some meet a site in its int3 state.
 */
static void flip_writer(void *arg)
{
	struct flip_cpu *f = &flip[this_cpu()->cpu];
	uint64_t t0 = rdtsc(), lim = tsc.hz / 1000 * LIMIT_MS, seen = (uint64_t)-1;

	(void)arg;
	while (!__atomic_load_n(&flip_stop, __ATOMIC_ACQUIRE) && rdtsc() - t0 < lim) {
		uint64_t e = __atomic_load_n(&flip_epoch, __ATOMIC_ACQUIRE);

		if (e != seen) {
			seen = e;
			f->epochs++;
			for (unsigned i = 0; i < PER_EPOCH; i++)
				count(f, trace_mark((uint32_t)(e << 8 | i)));
			continue;
		}
		irq_disable();	/* a wake-up between the check and hlt is not lost */
		if (!__atomic_load_n(&flip_stop, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&flip_epoch, __ATOMIC_ACQUIRE) == seen)
			cpu_sleep_until_irq();
		irq_enable();
	}
}

/* An answer of an enabled event's write: recorded, or refused by a full
 * ring in discard mode (the one mode where a ring is ever full). */
static bool write_passed_key(int err)
{
	return err == 0 || (err == -RB_EFULL && trace_mode == RB_MODE_DISCARD);
}

static uint64_t ring_written(unsigned cpu)
{
	struct rb_stats st;

	ring_buffer_stats(ring_buffer_cpu(&trace_rb, cpu), &st);
	return st.written;
}

/*
 * Only demo:mark records during the test (the others are disabled and put
 * back after), so each CPU's ring counts exactly the marks it wrote:
 * written - written0 == ok + full, counted on both sides independently.
 * The boot CPU writes one mark after each flip and checks the answer:
 * 0 while enabled, -RB_EOFF while disabled.  In discard mode a full ring
 * refuses the write of an enabled event (-RB_EFULL: it passed the key,
 * so it still tells "enabled"); in overwrite mode a ring is never full.
 * A CPU "saw both" states if it got -RB_EOFF and a write past the key (ok
 * or, in discard mode, full): with trace.pages=2 the earlier ktests may
 * have filled the ring before this one starts.  `run=ktest,dump` then shows
 * the marks; tests/qemu/test_events.py counts them per CPU against ok.
 * Mutations tried: the writer gated on a stale copy of the state instead
 * of its key (bsp_wrong), a flip that skips the mirror (enabled[] != key).
 */
KTEST(trace_event_flip_stress)
{
	uint8_t saved[TEV_MAX];
	unsigned ncpu = cpu_count, refused = 0, flips = 0, mismatched = 0;
	uint64_t t0, lim = tsc.hz / 1000 * LIMIT_MS, bsp_wrong = 0;
	bool running[MAX_CPUS] = { false };
	const char *why = NULL;
	char err[TRACE_SELECT_ERR_MAX];

	if (!tracing_on())
		return "recording is off";
	for (uint32_t id = 0; id < TEV_MAX; id++)
		saved[id] = trace_events_enabled()[id];
	if (trace_events_apply("-*,demo:mark", TRACE_SELECT_ENABLE, NULL, err))
		return "could not leave only demo:mark enabled";
	for (unsigned c = 0; c < ncpu; c++)
		flip[c] = (struct flip_cpu){ .written0 = ring_written(c) };
	__atomic_store_n(&flip_epoch, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&flip_stop, false, __ATOMIC_RELEASE);
	for (unsigned c = 1; c < ncpu; c++) {
		if (!cpus[c] || !cpus[c]->online)
			continue;
		running[c] = smp_call_async(c, flip_writer, NULL);
		if (!running[c])
			why = "a CPU is busy";
	}
	t0 = rdtsc();
	for (unsigned i = 0; i < FLIPS && !why; i++) {
		bool on = i & 1;	/* starts enabled: the first flip disables */
		int r;

		refused += trace_event_set(TEV_mark, on);
		flips++;
		__atomic_store_n(&flip_epoch, flips, __ATOMIC_RELEASE);
		r = trace_mark((uint32_t)i);
		count(&flip[0], r);
		bsp_wrong += on ? !write_passed_key(r) : r != -RB_EOFF;
		if (trace_events_enabled()[TEV_mark] != on)
			mismatched++;
		if (rdtsc() - t0 > lim)
			why = "the flips did not finish in time";
	}
	__atomic_store_n(&flip_stop, true, __ATOMIC_RELEASE);
	text_sync();	/* wakes every CPU from its sleep */
	for (unsigned c = 1; c < ncpu; c++)
		if (running[c] && !smp_call_wait(c, WAIT_MS) && !why)
			why = "a CPU did not stop";

	uint64_t lost = 0, ok = 0, off = 0, both = 0;
	for (unsigned c = 0; c < ncpu; c++) {
		const struct flip_cpu *f = &flip[c];
		uint64_t w = ring_written(c) - f->written0;

		printk("ktest: trace_event_flip_stress cpu=%u ok=%llu off=%llu full=%llu other=%llu "
		       "epochs=%llu ring_written=%llu\n", c, (unsigned long long)f->ok,
		       (unsigned long long)f->off, (unsigned long long)f->full,
		       (unsigned long long)f->other, (unsigned long long)f->epochs,
		       (unsigned long long)w);
		if (w != f->ok + f->full || f->other)
			lost++;
		ok += f->ok;
		off += f->off;
		both += c == 0 || ((f->ok || (trace_mode == RB_MODE_DISCARD && f->full)) && f->off);
	}
	/* Put every event back as it was. */
	for (uint32_t id = 1; id < TEV_MAX; id++)
		refused += trace_event_set(id, saved[id]);
	printk("ktest: trace_event_flip_stress cpus=%u flips=%u refused=%u ok=%llu off=%llu "
	       "bsp_wrong=%llu mismatched=%u unaccounted_cpus=%llu cpus_saw_both=%llu\n",
	       ncpu, flips, refused, (unsigned long long)ok, (unsigned long long)off,
	       (unsigned long long)bsp_wrong, mismatched, (unsigned long long)lost,
	       (unsigned long long)both);
	if (why)
		return why;
	KT_ASSERT(flips == FLIPS && refused == 0);
	KT_ASSERT(bsp_wrong == 0 && mismatched == 0);
	KT_ASSERT(lost == 0);
	KT_ASSERT(both == ncpu);
	return NULL;
}
