/*
 * Hard-lockup watchdog, x86 side: each watched CPU watches itself with its
 * own LAPIC timer as a deadline delivered as an NMI, so it needs no other
 * CPU, no HPET and no periodic interrupt, and works on 1 CPU as on many.
 *
 *   signs of life      interrupt taken, watchdog_touch(), start of work
 *        |                    (restart the deadline, at most every P/8)
 *        v
 *   [ LAPIC timer, one-shot P = watchdog.ms/2, NMI delivery ]
 *        | expires: NMI on this CPU (the interrupts-off flag is no bar)
 *        v
 *   watchdog_nmi(): wd_sample() (<arch/watchdog_rule.h>, R1..R3)
 *        RESTART  restart the deadline, return: no event, no counter
 *        PROBE    send this CPU VEC_WATCHDOG, restart; the probe is taken
 *                 (a sign of life) as soon as interrupts are back on
 *        STUCK    report: "watchdog: cpu=<n> stuck for <ms> ms at <sym+off>",
 *                 the backtrace, then the panic path with end=watchdog
 *
 * Why no other CPU and no periodic NMI: an NMI sent to a healthy CPU can
 * merge with one a test or a benchmark sends it (QEMU, like the hardware,
 * holds one pending NMI), and that test then counts one handler call
 * less. Here an NMI reaches a CPU only after P with no interrupt and no
 * touch; every NMI the watchdog takes is claimed before trap_dispatch()
 * counts it, calls a handler or records anything, and is told apart from
 * other NMIs by the deadline having run out (the timer's current count is
 * 0 only then). What remains: an NMI sent by another CPU in the few
 * instructions between the expiry and its delivery merges with it; that
 * needs a CPU with no interrupt and no touch for P that is at that moment
 * being sent NMIs. Measured under icount: the whole ktest suite and
 * run=bench bench=all take no watchdog NMI at all (0 samples on every CPU).
 *
 * Watched: see <arch/watchdog.h>. Each CPU's struct wd_cpu (watchdog_cpu,
 * a per-CPU variable) is written by that CPU alone, from its task context
 * and its NMI.
 *
 * The report runs on the stuck CPU's own kernel stack, below where it was
 * interrupted (that code never resumes): the panic path (printk, the dump)
 * was written for a kernel stack, not for the 8 KiB NMI stack.
 */
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/text_poke.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/ksyms.h"

#define WD_MS_MAX	60000		/* the deadline's P must fit the 32-bit timer count */
#define REPORT_STACK_GAP 256		/* bytes left below the interrupted RSP */
#define REPORT_STACK_MIN 0x10000ull	/* a kernel stack lies above this ... */
#define REPORT_STACK_MAX 0x100000000ull	/* ... and in the boot identity map */

DEFINE_PER_CPU(struct wd_cpu, watchdog_cpu);

_Static_assert(VEC_WATCHDOG != VEC_TEXT_SYNC && VEC_WATCHDOG != VEC_CALL &&
	       VEC_WATCHDOG != VEC_TEST, "the probe's vector is its own");

static uint64_t watchdog_ms = 2000;
CMDLINE_OPTION(watchdog_ms, .name = "watchdog.ms", .type = OPT_UINT, .var = &watchdog_ms,
	       .min = 0, .max = WD_MS_MAX,
	       .help = "hard-lockup watchdog: a watched CPU with no interrupt for this long is "
		       "reported (0 = off)");

static bool enabled;		/* set once by watchdog_init(), before any work */
static uint32_t period_ticks;	/* P in LAPIC timer ticks */
static uint64_t period_cycles;	/* P in TSC cycles */
static uint64_t kick_gap;	/* P / 8: the touch rate limit, TSC cycles */

static notrace void restart(void)
{
	lapic_timer_nmi_oneshot(period_ticks);
}

void watchdog_init(void)
{
	if (!watchdog_ms) {
		printk("watchdog: off (watchdog.ms=0)\n");
		return;
	}
	if (!lapic_timer_hz || !tsc.hz) {
		printk("watchdog: off: %s was not measured, and the deadline is counted with it\n",
		       tsc.hz ? "the LAPIC timer" : "the TSC");
		return;
	}
	period_ticks = wd_half_period_ticks(watchdog_ms, lapic_timer_hz);
	period_cycles = (uint64_t)((unsigned __int128)period_ticks * tsc.hz / lapic_timer_hz);
	kick_gap = period_cycles / 8;
	enabled = true;
	printk("watchdog: ms=%llu sample_ms=%llu source=lapic_timer_nmi watched=jobs,calls\n",
	       (unsigned long long)watchdog_ms,
	       (unsigned long long)wd_cycles_to_ms(period_cycles, tsc.hz));
}

notrace void watchdog_work_begin(void)
{
	struct wd_cpu *wd = this_cpu_ptr(watchdog_cpu);

	if (!enabled)
		return;
	wd_begin(wd, rdtsc());
	__atomic_store_n(&wd->state, WD_ARMED, __ATOMIC_RELAXED);
	restart();
}

notrace void watchdog_work_end(void)
{
	struct wd_cpu *wd = this_cpu_ptr(watchdog_cpu);

	if (__atomic_load_n(&wd->state, __ATOMIC_RELAXED) == WD_ARMED)
		lapic_timer_nmi_stop();
	__atomic_store_n(&wd->state, WD_OFF, __ATOMIC_RELAXED);
}

notrace void watchdog_stop(void)
{
	watchdog_work_end();
}

notrace bool watchdog_pause(void)
{
	struct wd_cpu *wd = this_cpu_ptr(watchdog_cpu);

	if (__atomic_load_n(&wd->state, __ATOMIC_RELAXED) != WD_ARMED || wd->expired)
		return false;	/* not watched, or watched through this wait (R5) */
	lapic_timer_nmi_stop();
	__atomic_store_n(&wd->state, WD_PAUSED, __ATOMIC_RELAXED);
	return true;
}

static notrace void resume(bool paused, bool expired)
{
	struct wd_cpu *wd = this_cpu_ptr(watchdog_cpu);

	if (!paused || __atomic_load_n(&wd->state, __ATOMIC_RELAXED) != WD_PAUSED)
		return;		/* the timer was lent meanwhile, or nothing was paused */
	if (!expired) {
		wd_begin(wd, rdtsc());	/* R4 */
		__atomic_store_n(&wd->state, WD_ARMED, __ATOMIC_RELAXED);
		restart();
		return;
	}
	/* R5: the wait counts; the deadline runs on from where it stopped. */
	uint64_t left = wd_resume_expired(wd, rdtsc(), period_cycles);
	uint64_t ticks = (uint64_t)((unsigned __int128)left * period_ticks / period_cycles);

	__atomic_store_n(&wd->state, WD_ARMED, __ATOMIC_RELAXED);
	lapic_timer_nmi_oneshot(ticks ? (uint32_t)ticks : 1);
}

notrace void watchdog_resume(bool paused)
{
	resume(paused, false);
}

notrace void watchdog_resume_expired(bool paused)
{
	resume(paused, true);
}

notrace void watchdog_timer_lent(void)
{
	struct wd_cpu *wd = this_cpu_ptr(watchdog_cpu);
	uint32_t st = __atomic_load_n(&wd->state, __ATOMIC_RELAXED);

	/* The caller reprograms the timer next: no need to stop ours first. */
	if (st == WD_ARMED || st == WD_PAUSED)
		__atomic_store_n(&wd->state, WD_LENT, __ATOMIC_RELAXED);
}

notrace void watchdog_timer_returned(void)
{
	struct wd_cpu *wd = this_cpu_ptr(watchdog_cpu);

	if (__atomic_load_n(&wd->state, __ATOMIC_RELAXED) != WD_LENT)
		return;
	wd_begin(wd, rdtsc());
	__atomic_store_n(&wd->state, WD_ARMED, __ATOMIC_RELAXED);
	restart();
}

notrace void watchdog_touch_armed(void)
{
	struct wd_cpu *wd = this_cpu_ptr(watchdog_cpu);

	if (wd_touch(wd, rdtsc(), kick_gap))
		restart();
}

notrace void watchdog_probe_taken(void)
{
	watchdog_touch();
	lapic_eoi();
}

/* Run fn(arg) with RSP at sp (16-byte aligned); fn does not return. */
static notrace void __attribute__((noreturn)) call_on_stack(void (*fn)(void *), void *arg,
							     uint64_t sp)
{
	__asm__ __volatile__("mov %0, %%rsp\n\t"
			     "xor %%ebp, %%ebp\n\t"
			     "call *%1"
			     : : "r"(sp), "r"(fn), "D"(arg) : "memory");
	__builtin_unreachable();
}

static uint64_t stuck_ms[MAX_CPUS];	/* what each CPU's report says */

static notrace void __attribute__((noreturn)) report(void *arg)
{
	struct trap_frame *f = arg;
	uint64_t off;
	const char *sym = ksym_lookup(f->rip, &off);

	trap_fatal_begin(f);	/* recording off everywhere; returns to one reporter only */
	printk("watchdog: cpu=%u stuck for %llu ms at %s+0x%llx\n", this_cpu()->cpu,
	       (unsigned long long)stuck_ms[this_cpu()->cpu], sym ? sym : "?",
	       (unsigned long long)(sym ? off : f->rip));
	trap_backtrace(f);
	printk("watchdog: end of report\n");
	trap_fatal_end(TRAP_END_WATCHDOG);
}

notrace bool watchdog_nmi(struct trap_frame *f)
{
	struct percpu *pc = this_cpu();
	struct wd_cpu *wd = this_cpu_ptr(watchdog_cpu);
	uint64_t now;

	if (__atomic_load_n(&wd->state, __ATOMIC_RELAXED) != WD_ARMED || !lapic_timer_expired())
		return false;	/* not the deadline: someone else's NMI */
	now = rdtsc();
	switch (wd_sample(wd, now, period_cycles, f->rflags & RFLAGS_IF)) {
	case WD_PROBE:
		lapic_send_ipi(pc->apic_id, VEC_WATCHDOG);
		restart();
		return true;
	case WD_RESTART:
		restart();
		return true;
	case WD_STUCK:
		break;
	}
	__atomic_store_n(&wd->state, WD_OFF, __ATOMIC_RELAXED);
	stuck_ms[pc->cpu] = wd_cycles_to_ms(now - wd->life, tsc.hz);
	/*
	 * Onto the interrupted kernel stack, below its RSP (no red zone in this
	 * kernel), with a copy of the frame; a stack pointer that cannot be a
	 * kernel stack's keeps the report on the NMI stack.
	 */
	if (f->rsp & 7 || f->rsp < REPORT_STACK_MIN || f->rsp > REPORT_STACK_MAX)
		report(f);
	uint64_t sp = (f->rsp - REPORT_STACK_GAP - sizeof(*f)) & ~15ull;
	struct trap_frame *copy = (struct trap_frame *)sp;

	*copy = *f;
	call_on_stack(report, copy, sp);
}

/*
 * Traps' first look (TRAP_HOOK, <arch/trap.h>): the watchdog's NMI and
 * probe are its alone, and any interrupt is a sign of life. Before
 * anything is counted or traced: the watchdog must not show in what tests
 * count.
 */
static notrace bool watchdog_trap_claim(struct trap_frame *f)
{
	if (f->vector == VEC_NMI && watchdog_nmi(f))
		return true;
	if (f->vector == VEC_WATCHDOG) {
		watchdog_probe_taken();
		return true;
	}
	if (f->vector >= VEC_FIRST_IRQ)
		watchdog_touch();	/* an interrupt taken: a sign of life */
	return false;
}
TRAP_HOOK(watchdog, .name = "watchdog", .claim = watchdog_trap_claim);
