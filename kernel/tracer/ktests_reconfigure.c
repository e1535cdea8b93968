/*
 * tracing_reconfigure() while every other CPU writes (issue 12, defect 4).
 *
 * Every CPU but the boot CPU writes at task level in a loop and holds each
 * reservation open for RECONF_HOLD rounds of a delay loop (some hundreds of
 * instructions) before it commits; its LAPIC timer writes from IRQ level
 * meanwhile. The boot CPU calls tracing_reconfigure() RECONF_ROUNDS times,
 * each time once every writer is inside a reservation, alternating between
 * two sizes (overwrite mode: a writer never runs out of room).
 *
 * A writer that finds, at the end of its hold, that its CPU's buffer pointer
 * was switched to the placeholder meanwhile (the case a reconfiguration
 * must wait for; counted, so the test proves it happened) goes on holding,
 * as a slow or descheduled writer would, until a real buffer is installed
 * again or RECONF_LINGER_MS pass. A correct reconfiguration waits for it
 * throughout (the pointer stays the placeholder until the writer commits);
 * one that does not wait frees and rebuilds the buffers meanwhile, whatever
 * the emulator's scheduling. Two detectors, independent of each other:
 *
 *   - the boot CPU numbers its reconfigurations (gen) and the writer notes
 *     the gen it read just after loading its buffer pointer. A writer seen
 *     inside a reservation with gen < k after reconfiguration k returned
 *     loaded its pointer before k began: k freed that buffer under it.
 *   - the writer checks, after its hold, that the buffer is still the one
 *     it reserved in: its own nest bit still set, recording still on, its
 *     payload unchanged. Freeing breaks all three: freed buffer memory is
 *     poisoned, and a new buffer at the same address starts with nest 0.
 */
#include <arch/cpu.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include "kernel/console.h"
#include "kernel/ktest.h"
#include "kernel/tracing.h"

#define RECONF_PAGES		4	/* small buffers (and one page more, in turn) */
#define RECONF_ROUNDS		100	/* reconfigurations under the writers */
#define RECONF_HOLD		200	/* delay rounds inside each reservation */
#define RECONF_TIMER_HZ		10000	/* IRQ-level writes meanwhile */
#define RECONF_WAIT_MS		2000	/* for writers to start, or to be inside */
#define RECONF_LINGER_MS	1	/* hold on after seeing the switch, at most */
#define RECONF_STUCK_MS		50	/* how long the refusal test lets CPU 1 stay */
#define RECONF_MAGIC		0x5eed1e55u
#define RECONF_CPUS_MAX		64

struct reconf_cpu {
	uint32_t inside;		/* inside a reservation now (writer sets) */
	uint32_t inside_gen;		/* gen read just after loading its cb */
	bool started;			/* the writer loop began */
	uint64_t reserved;		/* reservations that succeeded */
	uint64_t refused;		/* reserves refused (the placeholder, mostly) */
	uint64_t switched;		/* holds during which the buffer pointer changed */
	uint64_t corrupted;		/* holds that found their buffer gone */
	const char *first;		/* what the first of those found */
	uint64_t irq_writes;		/* IRQ-level events written */
	uint64_t returned_inside;	/* reconfigurations that returned while it
					 * was inside on the buffer they freed */
} __aligned(CACHELINE_SIZE);

static struct reconf_cpu rcpu[RECONF_CPUS_MAX];
static volatile bool reconf_stop;
static uint32_t reconf_gen;	/* reconfigurations begun (boot CPU) */

static void reconf_irq(struct trap_frame *f)
{
	(void)f;
	this_cpu()->timer_ticks++;
	if (trace_lapic_tick((uint32_t)this_cpu()->timer_ticks) == 0)
		rcpu[this_cpu()->cpu].irq_writes++;
	lapic_eoi();
}

/*
 * Hold the reservation, linger if the switch came meanwhile (counted in
 * *switched), then say what is wrong with the buffer reserved in, or NULL.
 */
static const char *hold(struct rb_cpu_buffer *cb, const uint32_t *p, uint32_t cpu,
			uint32_t seq, uint64_t *switched)
{
	const struct rb_cpu_buffer *none = ring_buffer_cpu(NULL, 0);

	/* Some hundreds of instructions, with a pause halfway: under icount
	 * that ends this CPU's turn inside the reservation, so the boot CPU
	 * runs while the writers are in theirs, as with a descheduled vCPU. */
	for (unsigned i = 0; i < RECONF_HOLD; i++) {
		__asm__ __volatile__("" ::: "memory");
		if (i == RECONF_HOLD / 2)
			cpu_relax();
	}
	if (this_cpu_rb() != cb) {
		uint64_t t0 = rdtsc(), lim = tsc.hz / 1000 * RECONF_LINGER_MS;
		(*switched)++;
		while (this_cpu_rb() == none && rdtsc() - t0 < lim)
			cpu_relax();
	}
	if (!(__atomic_load_n(&cb->nest, __ATOMIC_RELAXED) & arch_trace_level_bit()))
		return "its nest bit vanished: the buffer was rebuilt under the reservation";
	if (__atomic_load_n(&cb->state, __ATOMIC_RELAXED) != RB_STATE_RECORDING)
		return "its buffer stopped recording: freed (poisoned) or stopped";
	if (p[1] != seq || p[2] != (RECONF_MAGIC ^ seq) || p[3] != cpu)
		return "its payload changed: the page was freed or reused";
	return NULL;
}

static void reconf_writer(void *arg)
{
	uint32_t cpu = this_cpu()->cpu;
	struct reconf_cpu *w = &rcpu[cpu];

	(void)arg;
	irq_enable();
	lapic_timer_periodic(RECONF_TIMER_HZ);
	__atomic_store_n(&w->started, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&reconf_stop, __ATOMIC_ACQUIRE)) {
		struct rb_cpu_buffer *cb = this_cpu_rb();
		uint32_t *p, gen, seq = (uint32_t)w->reserved;
		const char *bad;

		/* After the pointer's load (x86 keeps loads in order): a gen
		 * below k means cb was loaded before reconfiguration k began. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		gen = __atomic_load_n(&reconf_gen, __ATOMIC_ACQUIRE);
		if (ring_buffer_reserve(cb, 16, (void **)&p) != 0) {
			/* The placeholder, mid-reconfiguration. Pause: under icount
			 * a CPU spinning without it starves those after it. */
			w->refused++;
			tracing_quiescent();
			cpu_relax();
			continue;
		}
		p[0] = trace_ent_word(TEV_stress, TRACE_ENT_WORDS(stress));
		p[1] = seq;
		p[2] = RECONF_MAGIC ^ seq;
		p[3] = cpu;
		__atomic_store_n(&w->inside_gen, gen, __ATOMIC_RELAXED);
		__atomic_store_n(&w->inside, 1, __ATOMIC_RELEASE);
		bad = hold(cb, p, cpu, seq, &w->switched);
		__atomic_store_n(&w->inside, 0, __ATOMIC_RELEASE);
		w->reserved++;
		if (bad) {
			if (!w->corrupted++)
				w->first = bad;
			continue;	/* not ours any more: no commit into it */
		}
		ring_buffer_commit(cb);
		tracing_quiescent();	/* between events: a quiescent point */
	}
	lapic_timer_stop();
}

static bool online(unsigned c)
{
	return cpus[c] && cpus[c]->online;
}

/* Wait (pausing: under icount that lets the writers run) until ready(c)
 * holds for every writer, at most RECONF_WAIT_MS. */
static bool wait_all(unsigned ncpu, bool (*ready)(unsigned))
{
	uint64_t t0 = rdtsc(), lim = tsc.hz / 1000 * RECONF_WAIT_MS;

	for (;;) {
		bool all = true;
		for (unsigned c = 1; c < ncpu; c++)
			all &= !online(c) || ready(c);
		if (all)
			return true;
		if (rdtsc() - t0 > lim)
			return false;
		cpu_relax();
	}
}

static bool started(unsigned c)
{
	return __atomic_load_n(&rcpu[c].started, __ATOMIC_ACQUIRE);
}

static bool inside(unsigned c)
{
	return __atomic_load_n(&rcpu[c].inside, __ATOMIC_ACQUIRE);
}

static const char *reconf_run(unsigned ncpu)
{
	trap_handler_t old_timer = trap_get_handler(VEC_TIMER);
	const char *why = NULL;
	unsigned rounds = 0, all_inside = 0;

	for (unsigned c = 0; c < ncpu; c++)
		rcpu[c] = (struct reconf_cpu){ 0 };
	reconf_stop = false;
	reconf_gen = 0;
	if (!tracing_reconfigure(RECONF_PAGES, RB_MODE_OVERWRITE))
		return "could not build the buffers";
	tracing_start();
	trap_set_handler(VEC_TIMER, reconf_irq);
	for (unsigned c = 1; c < ncpu; c++)
		if (online(c) && !smp_call_async(c, reconf_writer, NULL))
			why = "a writer CPU is busy";
	if (!why && !wait_all(ncpu, started))
		why = "a writer did not start";
	for (; !why && rounds < RECONF_ROUNDS; rounds++) {
		/* Best effort: with every writer inside, the switch lands on
		 * open reservations; the writers count whether it did. */
		uint32_t k = rounds + 1;
		all_inside += wait_all(ncpu, inside);
		__atomic_store_n(&reconf_gen, k, __ATOMIC_SEQ_CST);
		if (!tracing_reconfigure(RECONF_PAGES + (rounds & 1), RB_MODE_OVERWRITE)) {
			why = "tracing_reconfigure() refused (the line above names the CPU)";
			break;
		}
		for (unsigned c = 1; c < ncpu; c++)
			if (online(c) && inside(c) &&
			    __atomic_load_n(&rcpu[c].inside_gen, __ATOMIC_RELAXED) < k)
				rcpu[c].returned_inside++;
	}
	__atomic_store_n(&reconf_stop, true, __ATOMIC_RELEASE);
	for (unsigned c = 1; c < ncpu; c++)
		if (online(c) && !smp_call_wait(c, 10000) && !why)
			why = "a writer did not stop";
	trap_set_handler(VEC_TIMER, old_timer);
	printk("ktest: reconfigure rounds=%u all_inside=%u\n", rounds, all_inside);
	for (unsigned c = 1; c < ncpu; c++) {
		struct reconf_cpu *w = &rcpu[c];
		struct rb_stats st;
		if (!online(c))
			continue;
		ring_buffer_stats(ring_buffer_cpu(&trace_rb, c), &st);
		printk("ktest: reconfigure cpu=%u reserved=%llu switched=%llu returned_inside=%llu "
		       "corrupted=%llu refused=%llu irq_writes=%llu buffer_refused=%llu state=%u\n",
		       c, (unsigned long long)w->reserved, (unsigned long long)w->switched,
		       (unsigned long long)w->returned_inside,
		       (unsigned long long)w->corrupted, (unsigned long long)w->refused,
		       (unsigned long long)w->irq_writes, (unsigned long long)st.refused,
		       st.state);
		if (w->corrupted)
			printk("ktest: reconfigure cpu=%u first: %s\n", c, w->first);
		if (why)
			continue;
		if (w->returned_inside)
			why = "tracing_reconfigure() returned while a writer was inside a "
			      "reservation on a buffer it freed";
		else if (w->corrupted)
			why = "a writer found its buffer freed or rebuilt inside a reservation";
		else if (!w->switched)
			why = "no reconfiguration landed inside a reservation: nothing was tested";
		else if (st.refused || st.state == RB_STATE_STOPPED)
			why = "the last buffer refused calls or stopped: an unbalanced commit?";
	}
	return why;
}

KTEST(tracing_reconfigure_under_writers)
{
	struct tracing_setup saved = tracing_setup_get();
	unsigned ncpu = cpu_count < RECONF_CPUS_MAX ? cpu_count : RECONF_CPUS_MAX;
	const char *why;

	if (ncpu < 2)
		return KT_SKIP("needs at least 2 CPUs");
	if (!tsc.hz)
		return "the TSC is not calibrated";
	why = reconf_run(ncpu);
	if (!tracing_setup_restore(&saved) && !why)
		why = "could not restore the buffers";
	return why;
}

/*
 * A CPU that never leaves its reservation: the reconfiguration must name it
 * and refuse, leaving every buffer where it was. CPU 1 reserves, then calls
 * tracing_quiescent() from inside the reservation (not a quiescent point, so
 * it must not confirm) until the boot CPU has its answer; then it checks
 * that its buffer is still its own and intact, and commits.
 */
static struct {
	uint32_t phase;			/* 1: reserved, 2: the answer is in */
	const char *bad;		/* what the writer found, or NULL */
	bool restored;			/* its pointer was its buffer again */
	bool reserved;			/* the reservation succeeded */
} stuck;

static void stuck_writer(void *arg)
{
	struct rb_cpu_buffer *cb = this_cpu_rb();
	uint64_t switched = 0;
	uint32_t *p;

	(void)arg;
	if (ring_buffer_reserve(cb, 16, (void **)&p) != 0) {
		__atomic_store_n(&stuck.phase, 2, __ATOMIC_RELEASE);
		return;
	}
	stuck.reserved = true;
	p[0] = trace_ent_word(TEV_stress, TRACE_ENT_WORDS(stress));
	p[1] = 7;
	p[2] = RECONF_MAGIC ^ 7;
	p[3] = this_cpu()->cpu;
	__atomic_store_n(&stuck.phase, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&stuck.phase, __ATOMIC_ACQUIRE) != 2) {
		tracing_quiescent();	/* inside a reservation: must not confirm */
		cpu_relax();
	}
	stuck.restored = this_cpu_rb() == cb;
	stuck.bad = hold(cb, p, this_cpu()->cpu, 7, &switched);
	if (!stuck.bad)
		ring_buffer_commit(cb);
}

KTEST(tracing_reconfigure_refuses_when_stuck)
{
	struct tracing_setup saved = tracing_setup_get();
	uint64_t t0;
	bool ok;

	if (cpu_count < 2 || !online(1))
		return KT_SKIP("needs at least 2 CPUs");
	if (!tsc.hz)
		return "the TSC is not calibrated";
	stuck.phase = 0;
	stuck.bad = NULL;
	stuck.restored = stuck.reserved = false;
	tracing_start();
	KT_ASSERT(smp_call_async(1, stuck_writer, NULL));
	t0 = rdtsc();
	while (!__atomic_load_n(&stuck.phase, __ATOMIC_ACQUIRE) &&
	       rdtsc() - t0 < tsc.hz / 1000 * RECONF_WAIT_MS)
		cpu_relax();
	KT_ASSERT(__atomic_load_n(&stuck.phase, __ATOMIC_ACQUIRE) == 1);
	ok = tracing_reconfigure_within(trace_pages, trace_mode, RECONF_STUCK_MS);
	__atomic_store_n(&stuck.phase, 2, __ATOMIC_RELEASE);
	KT_ASSERT(smp_call_wait(1, 10000));
	KT_ASSERT(stuck.reserved);
	KT_ASSERT(!ok);			/* refused: CPU 1 never confirmed */
	KT_ASSERT(stuck.restored);	/* its old buffer was put back */
	KT_ASSERT(stuck.bad == NULL);	/* and neither freed nor rebuilt */
	KT_ASSERT(tracing_setup_restore(&saved));	/* once it left: fine */
	return NULL;
}
