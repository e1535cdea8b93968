/*
 * Function tracer ktests: the site table, a known call chain, filters
 * checked against the ring buffer's own count of events attempted, the
 * graph tracer under IRQs and NMIs nested in traced code, and tracers
 * switched while every CPU runs traced functions.
 *
 * Counting: ring_buffer_stats() counts every write attempt (written +
 * refused + rejected) whatever the tracer did, so "the hooks wrote what
 * the filters say" is checked against a count the tracer does not keep.
 * Interrupts are off around a counted call (no other event on the CPU),
 * except in the IRQ/NMI test, whose handlers count their own calls.
 *
 * ftrace_chain leaves its events in the buffer for run=dump: the QEMU test
 * reads the call graph from the text dump (nesting and durations).
 */
#include <arch/cpu.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/text_poke.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/ftrace.h"
#include "kernel/ktest.h"
#include "kernel/static_key.h"
#include "kernel/kstring.h"
#include "kernel/trace_ctl.h"
#include "kernel/tracing.h"
#include "ftrace_stack.h"
#include "ftrace_work.h"

#define FLIPS		6	/* tracer switches in the stress test without
				 * ktest.ftrace_flips=: one lap of its order, every
				 * switch between the three tracers once.  Bounded
				 * by work, not time: a time limit ended the run
				 * early on a loaded host while the QEMU test
				 * asserted the count.  Under icount with 8 CPUs one
				 * switch takes ~0.5 s of guest time (every vCPU's
				 * slice is spent before the sync IPI is answered),
				 * so the full suite keeps to one lap */
#define IRQ_CALLS	400	/* task-level chains in the IRQ/NMI test */
#define IRQ_HZ		20000	/* its timer: often enough to land in the chains */
#define IRQ_MIN		20	/* ... and go on until this many IRQs came */
#define IRQ_LIMIT_MS	5000	/* ... or this long */

static uint64_t attempts(unsigned cpu)
{
	struct rb_stats st;

	ring_buffer_stats(ring_buffer_cpu(&trace_rb, cpu), &st);
	return st.written + st.refused + st.rejected;
}

/* Events one call of fn(1) writes on this CPU, interrupts off. */
static uint64_t events_of(void (*fn)(uint32_t))
{
	unsigned cpu = this_cpu()->cpu;
	uint64_t before, after;

	uint64_t flags = read_rflags();

	irq_disable();
	before = attempts(cpu);
	fn(1);
	after = attempts(cpu);
	if (flags & RFLAGS_IF)
		irq_enable();
	return after - before;
}

static bool enabled(const char *name)
{
	uint64_t site = ftrace_site_of(name);

	for (unsigned i = 0; i < ftrace_site_count(); i++)
		if (ftrace_site_addr(i) == site)
			return ftrace_site_enabled(i);
	return false;
}

static const char *reset(void)
{
	if (ftrace_set_tracer(FTRACE_NOP))
		return "could not set nop";
	for (int w = 0; w < FTRACE_LISTS; w++)
		if (ftrace_set_list((enum ftrace_list)w, "", NULL, 0))
			return "could not clear a list";
	ftrace_set_graph_depth(0);
	return NULL;
}

KTEST(ftrace_sites)
{
	unsigned n = ftrace_site_count();

	KT_ASSERT(n > 4);
	for (unsigned i = 1; i < n; i++)
		KT_ASSERT(ftrace_site_addr(i - 1) < ftrace_site_addr(i));
	KT_ASSERT(ftrace_site_of("ftrace_work_a") && ftrace_site_of("ftrace_work_leaf"));
	KT_ASSERT(ftrace_site_of("smp_init"));
	/* The tracer's own dependencies have no sites. */
	KT_ASSERT(!ftrace_site_of("ring_buffer_read_page") && !ftrace_site_of("printk"));
	KT_ASSERT(!ftrace_site_of("text_poke") && !ftrace_site_of("ftrace_entry"));
	KT_ASSERT(!ftrace_site_of("trap_dispatch") && !ftrace_site_of("ftrace_work_loop"));
	KT_ASSERT(ftrace_tracer() == FTRACE_NOP);
	for (unsigned i = 0; i < n; i++)
		KT_ASSERT(!ftrace_site_enabled(i));
	return NULL;
}

/*
 * Each online CPU's contexts carry its own shadow stacks (trace_ctx_build(),
 * an AP's through the tracer's CPU hook), which the trampolines reach in
 * one %gs load: else an AP's graph calls all take the C hook. Catches: the
 * hook not registered or not run, a CPU given another's row.
 */
KTEST(ftrace_ctx_stacks)
{
	unsigned me = this_cpu()->cpu, with = 0;

	for (unsigned c = 0; c < cpu_count; c++) {
		if (!cpus[c] || !cpus[c]->online)
			continue;
		for (unsigned l = 0; l < TRACE_CTX_LEVELS; l++)
			KT_ASSERT((*per_cpu_ptr(trace_ctx_stack, c))[l] == ftrace_stacks[c][l]);
		with += ftrace_stacks[c][0] != &ftrace_stack_none;
	}
	KT_ASSERT(with == cpus_online);	/* every online CPU got stacks at boot */
	KT_ASSERT(this_cpu_read(trace_ctx.level) == 0 &&
		  this_cpu_read(trace_ctx.graph_stack) == ftrace_stacks[me][0]);
	return NULL;
}

KTEST(ftrace_chain)
{
	struct ftrace_stats st;
	const char *why = reset();

	if (why)
		return why;
	KT_ASSERT(!ftrace_set_list(FTRACE_FILTER, "ftrace_work_*", NULL, 0));
	KT_ASSERT(!ftrace_set_tracer(FTRACE_FUNCTION));
	ftrace_get_stats(&st);
	KT_ASSERT(st.enabled == 4);	/* a, b, c, leaf */
	KT_ASSERT(events_of(ftrace_work_a) == 4);	/* a, b, c, c */
	KT_ASSERT(!ftrace_set_tracer(FTRACE_GRAPH));
	KT_ASSERT(events_of(ftrace_work_a) == 8);	/* entry and exit each */
	KT_ASSERT(ftrace_graph_depth_now(this_cpu()->cpu, TRACE_LEVEL_TASK) == 0);
	ftrace_get_stats(&st);
	KT_ASSERT(st.max_depth >= 3 && st.overrun == 0 && st.stale == 0);
	/* Depth limit: b's children are below it. */
	ftrace_set_graph_depth(2);
	KT_ASSERT(events_of(ftrace_work_a) == 4);	/* a and b */
	ftrace_set_graph_depth(0);
	KT_ASSERT(!ftrace_set_tracer(FTRACE_NOP));
	KT_ASSERT(events_of(ftrace_work_a) == 0);
	ftrace_get_stats(&st);
	KT_ASSERT(st.enabled == 0);
	/* Once more for the dump (the QEMU test reads this graph). */
	KT_ASSERT(!ftrace_set_tracer(FTRACE_GRAPH));
	KT_ASSERT(events_of(ftrace_work_a) == 8);
	KT_ASSERT(!ftrace_set_tracer(FTRACE_FUNCTION));
	KT_ASSERT(events_of(ftrace_work_a) == 4);
	return reset();
}

KTEST(ftrace_filters)
{
	struct ftrace_stats st;
	const char *why = reset();

	if (why)
		return why;
	/* A list of bad names only is refused and changes nothing (it must not
	 * widen tracing to every function); a bad name among good ones is left out. */
	KT_ASSERT(ftrace_set_list(FTRACE_FILTER, "nomatch*", NULL, 0) == -1);
	KT_ASSERT(!strcmp(ftrace_list_get(FTRACE_FILTER), ""));
	KT_ASSERT(ftrace_set_list(FTRACE_FILTER, "ftrace_work_a,no_such_fn", NULL, 0) == 1);
	KT_ASSERT(!strcmp(ftrace_list_get(FTRACE_FILTER), "ftrace_work_a"));
	KT_ASSERT(ftrace_set_list(FTRACE_FILTER, "no_such_fn", NULL, 0) == -1);
	KT_ASSERT(!strcmp(ftrace_list_get(FTRACE_FILTER), "ftrace_work_a"));
	/* Exactly what they name. */
	KT_ASSERT(!ftrace_set_list(FTRACE_FILTER, "ftrace_work_?,ftrace_work_leaf", NULL, 0));
	KT_ASSERT(!ftrace_set_list(FTRACE_NOTRACE, "ftrace_work_b", NULL, 0));
	KT_ASSERT(!ftrace_set_tracer(FTRACE_FUNCTION));
	ftrace_get_stats(&st);
	KT_ASSERT(st.enabled == 3);
	KT_ASSERT(enabled("ftrace_work_a") && !enabled("ftrace_work_b") &&
		  enabled("ftrace_work_c") && enabled("ftrace_work_leaf"));
	KT_ASSERT(!enabled("smp_init"));
	KT_ASSERT(events_of(ftrace_work_a) == 3);	/* a, c, c */
	/* graph_function: only below b. */
	KT_ASSERT(!ftrace_set_list(FTRACE_NOTRACE, "", NULL, 0));
	KT_ASSERT(!ftrace_set_list(FTRACE_GRAPH_FUNCTION, "ftrace_work_b", NULL, 0));
	KT_ASSERT(!ftrace_set_tracer(FTRACE_GRAPH));
	KT_ASSERT(events_of(ftrace_work_a) == 6);	/* b, c, c: entry and exit */
	KT_ASSERT(events_of(ftrace_work_c) == 0);	/* not below b */
	KT_ASSERT(!ftrace_set_list(FTRACE_GRAPH_FUNCTION, "", NULL, 0));
	KT_ASSERT(events_of(ftrace_work_c) == 2);
	/* Switching the filter while on repatches: now c alone. */
	KT_ASSERT(!ftrace_set_list(FTRACE_FILTER, "ftrace_work_c", NULL, 0));
	KT_ASSERT(events_of(ftrace_work_a) == 4);	/* c, c */
	ftrace_get_stats(&st);
	KT_ASSERT(st.enabled == 1 && st.refused == 0);
	return reset();
}

/*
 * One half of each graph call through the trampoline's fast path, the
 * other through the C hook: with funcgraph_exit off the pushes are the
 * asm's and the pops ftrace_return()'s; with funcgraph_entry off the
 * other way round. Both must agree on the frame (a slot at another
 * offset ends in lost_return()'s panic, a stale pop is counted) and each
 * call still writes the half that is on. Kills: the asm and C frame
 * layouts or depth handling drifting apart.
 */
KTEST(ftrace_graph_mixed)
{
	static const uint32_t off[2] = { TEV_funcgraph_exit, TEV_funcgraph_entry };
	unsigned cpu = this_cpu()->cpu;
	struct ftrace_stats st;
	const char *why = reset();

	if (why)
		return why;
	KT_ASSERT(!ftrace_set_list(FTRACE_FILTER, "ftrace_work_*", NULL, 0));
	KT_ASSERT(!ftrace_set_tracer(FTRACE_GRAPH));
	for (unsigned i = 0; i < 2; i++) {
		KT_ASSERT(trace_event_set(off[i], false) == 0);
		KT_ASSERT(events_of(ftrace_work_a) == 4);	/* a, b, c, c: one half each */
		KT_ASSERT(trace_event_set(off[i], true) == 0);
		KT_ASSERT(ftrace_graph_depth_now(cpu, TRACE_LEVEL_TASK) == 0);
		KT_ASSERT(events_of(ftrace_work_a) == 8);
	}
	ftrace_get_stats(&st);
	KT_ASSERT(st.stale == 0 && st.overrun == 0 && st.max_depth >= 3);
	return reset();
}

/* ---- IRQs and NMIs nested in traced code ---- */

static volatile uint32_t irq_calls, nmi_calls, wrong_stack;

/*
 * Inside a traced call made by a handler, its own frame is on its level's
 * stack and on no other: the IRQ's stack holds exactly it, the NMI's
 * nothing (an NMI landing in the probe is gone before it reads); in an NMI
 * the NMI's stack holds exactly it. The task's depth is whatever the chain
 * it interrupted had pushed (0 to 3). Kills a hook that pushes on the
 * wrong level's stack, which the event counts alone would not see.
 */
static void probe_in(unsigned level)
{
	uint32_t d[4];

	ftrace_depth_probe(d);
	if (d[level] != 1 || d[TRACE_LEVEL_TASK] > 3 ||
	    (level == TRACE_LEVEL_IRQ && d[TRACE_LEVEL_NMI] != 0))
		wrong_stack++;
}

static void on_test_timer(struct trap_frame *f)
{
	(void)f;
	ftrace_work_c(2);
	probe_in(TRACE_LEVEL_IRQ);
	irq_calls++;
	lapic_eoi();
}

static void on_test_nmi(struct trap_frame *f)
{
	(void)f;
	ftrace_work_c(3);
	probe_in(TRACE_LEVEL_NMI);
	nmi_calls++;
}

KTEST(ftrace_graph_irq_nmi)
{
	trap_handler_t old_timer = trap_get_handler(VEC_TIMER), old_nmi = trap_get_handler(VEC_NMI);
	unsigned cpu = this_cpu()->cpu;
	struct ftrace_stats st;
	uint64_t before, got, want, t0, lim = tsc.hz / 1000 * IRQ_LIMIT_MS;
	uint32_t chains;
	bool irq_on;
	const char *why = reset();

	if (why)
		return why;
	KT_ASSERT(!ftrace_set_list(FTRACE_FILTER, "ftrace_work_*,ftrace_depth_probe", NULL, 0));
	KT_ASSERT(!ftrace_set_tracer(FTRACE_GRAPH));
	irq_calls = nmi_calls = wrong_stack = 0;
	trap_set_handler(VEC_TIMER, on_test_timer);
	trap_set_handler(VEC_NMI, on_test_nmi);
	irq_on = read_rflags() & RFLAGS_IF;
	irq_enable();		/* jobs may run with interrupts off */
	before = attempts(cpu);
	t0 = rdtsc();
	lapic_timer_periodic(IRQ_HZ);
	for (chains = 0; chains < IRQ_CALLS || (irq_calls < IRQ_MIN && rdtsc() - t0 < lim);
	     chains++) {
		ftrace_work_a(chains);
		if (chains % 8 == 0)
			lapic_send_nmi(this_cpu()->apic_id);
	}
	lapic_timer_stop();
	irq_disable();
	got = attempts(cpu) - before;
	want = 8ull * chains + 4ull * (irq_calls + nmi_calls);	/* c and the probe */
	if (irq_on)
		irq_enable();
	trap_set_handler(VEC_TIMER, old_timer);
	trap_set_handler(VEC_NMI, old_nmi);
	ftrace_get_stats(&st);
	printk("ktest: ftrace_graph_irq_nmi chains=%u irqs=%u nmis=%u events=%llu expected=%llu "
	       "stale=%llu overrun=%llu wrong_stack=%u\n", chains, irq_calls, nmi_calls,
	       (unsigned long long)got, (unsigned long long)want,
	       (unsigned long long)st.stale, (unsigned long long)st.overrun, wrong_stack);
	why = reset();
	KT_ASSERT(!why);
	KT_ASSERT(irq_calls > 0 && nmi_calls > 0);
	KT_ASSERT(got == want);
	KT_ASSERT(wrong_stack == 0);
	for (unsigned l = 0; l < 4; l++)
		KT_ASSERT(ftrace_graph_depth_now(cpu, l) == 0);
	KT_ASSERT(st.stale == 0 && st.overrun == 0);
	return NULL;
}

/* ---- tracers switched while every CPU runs traced code ---- */

static uint64_t opt_flips;	/* 0: FLIPS */
CMDLINE_OPTION(ktest_ftrace_flips, .name = "ktest.ftrace_flips", .type = OPT_UINT,
	       .var = &opt_flips, .min = 1, .max = 1000000,
	       .help = "tracer switches in ktest ftrace_flip_stress (default 6: one of each)");

static volatile bool flip_stop;
static uint64_t flip_loops[MAX_CPUS];

static void flip_worker(void *arg)
{
	unsigned cpu = this_cpu()->cpu;

	(void)arg;
	while (!__atomic_load_n(&flip_stop, __ATOMIC_ACQUIRE)) {
		ftrace_work_a(cpu);
		ftrace_work_leaf(cpu);
		flip_loops[cpu]++;
	}
}

KTEST(ftrace_flip_stress)
{
	static const enum ftrace_tracer order[] = { FTRACE_FUNCTION, FTRACE_GRAPH, FTRACE_NOP,
						    FTRACE_GRAPH, FTRACE_FUNCTION, FTRACE_NOP };
	uint64_t want = opt_flips ? opt_flips : FLIPS;
	struct ftrace_stats st;
	const char *why = reset();
	unsigned flips = 0, workers = 0;

	if (why)
		return why;
	KT_ASSERT(!ftrace_set_list(FTRACE_FILTER, "ftrace_work_*", NULL, 0));
	flip_stop = false;
	for (unsigned c = 1; c < cpu_count; c++) {
		flip_loops[c] = 0;
		if (cpus[c] && cpus[c]->online && smp_call_async(c, flip_worker, NULL))
			workers++;
	}
	/* Each switch's waits for the other CPUs are bounded inside
	 * ftrace_set_tracer(), which then fails: the loop ends by count. */
	for (; flips < want; flips++) {
		if (ftrace_set_tracer(order[flips % 6]))
			break;
		ftrace_work_a(0);	/* the patching CPU runs them too */
	}
	ftrace_set_tracer(FTRACE_NOP);
	__atomic_store_n(&flip_stop, true, __ATOMIC_RELEASE);
	for (unsigned c = 1; c < cpu_count; c++)
		if (cpus[c] && cpus[c]->online && !smp_call_wait(c, 10000))
			return "a worker did not stop";
	ftrace_get_stats(&st);
	printk("ktest: ftrace_flip_stress flips=%u want=%llu workers=%u int3_hits=%llu patches=%llu "
	       "stale=%llu overrun=%llu recursion=%llu\n", flips, (unsigned long long)want, workers,
	       (unsigned long long)st.int3_hits, (unsigned long long)st.patches,
	       (unsigned long long)st.stale, (unsigned long long)st.overrun,
	       (unsigned long long)st.recursion);
	why = reset();
	KT_ASSERT(!why);
	KT_ASSERT(flips == want && st.enabled == 0 && st.refused == 0);
	KT_ASSERT(st.stale == 0 && st.overrun == 0);
	for (unsigned c = 0; c < cpu_count; c++) {
		struct rb_stats rs;

		for (unsigned l = 0; l < 4; l++)
			KT_ASSERT(ftrace_graph_depth_now(c, l) == 0);
		if (!cpus[c])
			continue;
		ring_buffer_stats(ring_buffer_cpu(&trace_rb, c), &rs);
		KT_ASSERT(rs.written == rs.entries + rs.dropped);
		KT_ASSERT(rs.entries == rs.in_buffer + rs.read + rs.overrun);
		KT_ASSERT(c == 0 || flip_loops[c] > 0);
	}
	return NULL;
}

/* ---- a tracer switch and a static-key change at once, interrupts off ---- */

#define TWO_WAIT_MS	60000	/* each wait below; a stalled sync costs 10 s */

static DEFINE_STATIC_KEY_FALSE(kt_two_key);

static __noinline int kt_two_site(void)
{
	if (static_branch_unlikely(&kt_two_key))
		return 1;
	return 0;
}

static struct {
	uint64_t asked;		/* text_sync_asked() before the flipper's first flip */
	uint64_t flips;		/* finished flips (release: the flipper's progress) */
	uint64_t refused;	/* sites static_key_set() refused */
	uint64_t wrong;		/* calls after a flip on the path the key does not say */
	bool stop;		/* the switcher is done */
	bool gave_up;		/* the flipper's own bound ran out */
} two;

/*
 * On another CPU, interrupts off (as the switcher's): flip kt_two_key
 * (arg NULL) until told to stop, checking each flip, or switch the tracer
 * to function_graph once (arg non-NULL: the tracer's lock) and answer
 * syncs until told to stop.
 */
static void two_flipper(void *arg)
{
	uint64_t t0 = rdtsc(), lim = tsc.hz / 1000 * TWO_WAIT_MS;

	irq_disable();
	__atomic_store_n(&two.asked, text_sync_asked(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&two.stop, __ATOMIC_ACQUIRE)) {
		bool on = !(two.flips & 1);

		if (arg && two.flips) {
			/*
			 * One switch is the overlap; more would race ours for
			 * the lock, which does not queue (under icount CPU 0
			 * lost it 47304 times in a row). Answer until stopped.
			 */
			text_sync_answer();
			cpu_relax();
		} else if (arg) {
			two.refused += ftrace_set_tracer(on ? FTRACE_GRAPH : FTRACE_NOP) != 0;
		} else {
			two.refused += static_key_set(&kt_two_key, on);
			two.wrong += kt_two_site() != on;
		}
		if (!arg || !two.flips)
			__atomic_store_n(&two.flips, two.flips + 1, __ATOMIC_RELEASE);
		if (rdtsc() - t0 > lim) {	/* expires after TWO_WAIT_MS: reported below */
			two.gave_up = true;
			break;
		}
	}
	static_key_disable(&kt_two_key);
	irq_enable();
}

/*
 * Two patchers at once, interrupts off on both: this CPU switches the
 * tracer to function while CPU 1 changes a static key (tracer false) or
 * switches tracers itself (tracer true: one of the two spins on the
 * tracer's lock while the other, holding it, waits in text_sync() for it).
 * The switch starts only once CPU 1 has asked for a sync this CPU has not
 * answered (it answers from nowhere but a patcher's loop), so the two
 * overlap by construction, not by timing: with tracer true CPU 1 holds the
 * lock, waiting for us, when we take it. Every sync must be answered by
 * every CPU: no sync expired (text_sync_expired(); test_ftrace.py counts
 * the console's "did not answer" lines independently), and the changes
 * took effect.
 */
static const char *two_patchers(bool tracer)
{
	uint64_t t0, lim = tsc.hz / 1000 * TWO_WAIT_MS, expired0 = text_sync_expired();
	uint64_t flips_at_switch = 0, flips_after = 0, expired, asked;
	uint64_t flags = read_rflags();
	const char *why;
	int work_a = -1;

	if (cpu_count < 2 || !cpus[1] || !cpus[1]->online)
		return "SKIP needs a second CPU";
	why = reset();
	if (why)
		return why;
	KT_ASSERT(!ftrace_set_list(FTRACE_FILTER, "ftrace_work_*", NULL, 0));
	two = (typeof(two)){ .asked = UINT64_MAX };
	irq_disable();
	if (!smp_call_async(1, two_flipper, tracer ? &two : NULL)) {
		why = "CPU 1 is busy";
		goto out;	/* not started: nothing to stop */
	}
	/* Until CPU 1 has asked a sync of us; expires after TWO_WAIT_MS. */
	t0 = rdtsc();
	while ((asked = __atomic_load_n(&two.asked, __ATOMIC_ACQUIRE)) == UINT64_MAX ||
	       text_sync_asked() <= asked) {
		if (rdtsc() - t0 > lim) {
			why = "CPU 1 asked for no sync";
			break;
		}
		cpu_relax();
	}
	flips_at_switch = __atomic_load_n(&two.flips, __ATOMIC_ACQUIRE);
	if (!why && ftrace_set_tracer(FTRACE_FUNCTION))
		why = "could not set function";
	flips_after = __atomic_load_n(&two.flips, __ATOMIC_ACQUIRE);
	/* CPU 1's one switch (graph) held the lock before ours: ours is the last. */
	work_a = enabled("ftrace_work_a") && ftrace_tracer() == FTRACE_FUNCTION;
	__atomic_store_n(&two.stop, true, __ATOMIC_RELEASE);
	irq_enable();	/* smp_call_wait() answers no sync: CPU 1's last flip takes our IPI */
	if (!smp_call_wait(1, 2 * TWO_WAIT_MS) && !why)
		why = "CPU 1 did not stop";
out:
	expired = text_sync_expired() - expired0;
	printk("ktest: ftrace_%s flips=%llu at_switch=%llu after_switch=%llu "
	       "refused=%llu wrong=%llu expired=%llu work_a_enabled=%d\n",
	       tracer ? "switch_on_two_cpus" : "switch_with_key_change",
	       (unsigned long long)two.flips, (unsigned long long)flips_at_switch,
	       (unsigned long long)flips_after, (unsigned long long)two.refused,
	       (unsigned long long)two.wrong, (unsigned long long)expired, work_a);
	if (!(flags & RFLAGS_IF))
		irq_disable();
	if (!why && !work_a)
		why = "the switch did not end with function on ftrace_work_a";
	if (reset() && !why)
		why = "could not reset";
	if (why)
		return why;
	KT_ASSERT(!two.gave_up);
	KT_ASSERT(expired == 0);
	KT_ASSERT(two.flips > 0 && two.refused == 0 && two.wrong == 0);
	KT_ASSERT(!static_key_is_enabled(&kt_two_key) && kt_two_site() == 0);
	return NULL;
}

/*
 * A static-key change on CPU 1 during the switch. Mutation caught:
 * text_sync()'s wait loop without text_sync_answer() (the code before the
 * fix): each side's sync waits 10 s for the other and expires (expired=8).
 */
KTEST(ftrace_switch_with_key_change)
{
	return two_patchers(false);
}

/*
 * Tracer switches on CPU 1 during ours: we spin on the tracer's lock while
 * CPU 1, holding it, waits for our answer. Mutation caught: the lock's
 * spin without text_sync_answer(): CPU 1's sync expires.
 */
KTEST(ftrace_switch_on_two_cpus)
{
	return two_patchers(true);
}
