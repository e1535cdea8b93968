/*
 * Panic: what a fatal exception (trap_fatal) does after and around its
 * register report, so that what was recorded up to the fault gets out
 * (arch calls it through the TRAP_FATAL() below, <arch/trap.h>).
 * The mechanism is here; what a subsystem saves (the tracer: recording
 * off, tail pages flushed, the range sealed, the dump) is its panic hook
 * (<kernel/panic.h> PANIC_HOOK), called at each phase:
 *
 *   1. panic_begin(): every hook's stop() (the tracer: recording off on
 *      every CPU, which any CPU may do at any time), so the trace ends at
 *      the fault. One CPU wins the report (a compare-and-swap on
 *      panic_cpu); a CPU that panics at the same time stops where it is
 *      and waits for the winner's NMI, so two panics give one report.
 *   2. trap_fatal() prints the registers and the backtrace.
 *   3. panic_end(): one line (the hooks' owner() words), then every other
 *      online CPU, one at a time, gets an NMI. In it (panic_nmi()) the CPU
 *      runs the hooks' stopped_cpu() (the tracer flushes its own tail
 *      page: only the owning CPU may), prints one line (where it was, the
 *      hooks' words), says it is done and halts with NMIs blocked for
 *      good. The owner waits a bounded time for each, then runs the
 *      hooks' stopped_all() (its own flush) and prints one line, then
 *      their end() (seal and dump, asking no CPU for anything).
 *   4. The machine ends as panic.action= says.
 *
 * Invariants (the hooks rely on them):
 *   P1: stop() runs on a panicking CPU before its compare-and-swap: the
 *       loser's too, so nothing is recorded after either fault.
 *   P2: owner(), stopped_all() and end() run on the owner only, in that
 *       order, each once (a fault in them ends the machine: P5).
 *   P3: stopped_cpu() runs on the stopped CPU itself, in its NMI, after
 *       the owner's owner() line; the owner sends the next NMI only once
 *       that CPU has said it is done (stopped[], release/acquire), so one
 *       CPU runs hooks and prints at a time; but a CPU that did not answer
 *       within STOP_WAIT_NS may still answer later, alongside the owner.
 *   P4: stopped_all() and end() come after every other online CPU was
 *       stopped or given up on (and named in a line).
 *   P5: the owner faulting again (anywhere from panic_begin() on, the
 *       dump included) finds panic_cpu already its own: it prints one
 *       line and ends, rather than reporting inside its report.
 *   P6: each line is one printk, after every hook added its words (one
 *       line, one stamp), in the hooks' link order.
 *
 * The console is in panic mode: no lock that a stopped CPU may hold.
 */
#include <stdbool.h>
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/exit.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/ksyms.h"
#include "kernel/panic.h"
#include "lib/format.h"
#include "trace/persist.h"

#define NO_CPU		UINT32_MAX
#define STOP_WAIT_NS	1000000000ll	/* for each CPU to answer its NMI */
#define STOP_WAIT_SPINS	100000000	/* the same bound without a clock */
#define WORDS_MAX	128		/* the hooks' words in one line */

enum panic_action { PANIC_EXIT, PANIC_HALT, PANIC_REBOOT };
static const char *const actions[] = { "exit", "halt", "reboot", NULL };

static int panic_action = PANIC_EXIT;

CMDLINE_OPTION(panic_action, .name = "panic.action", .type = OPT_ENUM, .var = &panic_action,
	       .choices = actions, .help = "after a panic: exit (with failure), halt, or reboot");

static uint32_t panic_cpu = NO_CPU;	/* the CPU that owns the report */
static uint32_t stopped[MAX_CPUS];	/* 1 once that CPU printed its line and halted */
static uint64_t fault_rip[MAX_CPUS];	/* a CPU that panicked too: where (else 0) */

extern const struct panic_hook __start_panic_hooks[];
extern const struct panic_hook __stop_panic_hooks[];

#define for_each_panic_hook(h) \
	for (const struct panic_hook *h = __start_panic_hooks; h < __stop_panic_hooks; h++)

/*
 * A code address as name and offset, for "%s+0x%llx" in one printk (one
 * line, one stamp); an address with no symbol reads "?+0x<address>".
 */
static const char *sym_of(uint64_t rip, unsigned long long *off)
{
	uint64_t o;
	const char *name = ksym_lookup(rip, &o);

	*off = name ? o : rip;
	return name ? name : "?";
}

static void __attribute__((noreturn)) halt_forever(void)
{
	for (;;) {
		irq_disable();
		cpu_halt();
	}
}

static void __attribute__((noreturn)) end_machine(void)
{
	if (panic_action == PANIC_HALT) {
		printk("panic: halted (panic.action=halt)\n");
		halt_forever();
	}
	if (panic_action == PANIC_REBOOT)
		machine_reset();
	machine_exit(false);
}

static void panic_begin(struct trap_frame *f)
{
	uint32_t me = this_cpu()->cpu, owner = NO_CPU;

	irq_disable();
	watchdog_stop();	/* the report and dump may take long with interrupts off */
	fault_rip[me] = f->rip ? f->rip : 1;	/* read only if another CPU owns the report */
	for_each_panic_hook(h)	/* P1: before the CAS, on the loser too */
		if (h->stop)
			h->stop();
	if (__atomic_compare_exchange_n(&panic_cpu, &owner, me, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return;
	if (owner == me) {
		/* P5: one line, no register report: the report is what faulted. */
		console_enter_panic_mode();
		unsigned long long off;
		const char *sym = sym_of(f->rip, &off);

		printk("panic: cpu=%u fault during the panic report: vector=%llu rip=%s+0x%llx; "
		       "ending\n", me, (unsigned long long)f->vector, sym, off);
		end_machine();
	}
	/* Another CPU reports: wait here for its NMI (panic_nmi() says where we faulted). */
	halt_forever();
}

static void panic_nmi(struct trap_frame *f)
{
	uint32_t owner = __atomic_load_n(&panic_cpu, __ATOMIC_ACQUIRE);
	struct percpu *pc = this_cpu();
	uint32_t me = pc->cpu;

	if (owner == NO_CPU || owner == me)
		return;
	char where_buf[WORDS_MAX] = "", done_buf[WORDS_MAX] = "";
	struct kbuf where = { where_buf, sizeof(where_buf), 0 };
	struct kbuf done = { done_buf, sizeof(done_buf), 0 };

	for_each_panic_hook(h)	/* P3: on this CPU, in its NMI, one CPU at a time */
		if (h->stopped_cpu)
			h->stopped_cpu(&where, &done);
	unsigned long long off;
	const char *sym = sym_of(fault_rip[me] ? fault_rip[me] : f->rip, &off);

	printk("panic: stopped cpu=%u rip=%s+0x%llx%s%s%s\n", me, sym, off, where_buf,
	       fault_rip[me] ? " panicked=yes" : "", done_buf);
	/* Release: the line is out; pairs with the acquire in wait_stopped(). */
	__atomic_store_n(&stopped[me], 1, __ATOMIC_RELEASE);
	halt_forever();	/* NMIs stay blocked: no iret */
}

/* Bounded: a CPU with NMIs blocked (in an NMI, or stopped already) never answers. */
static bool wait_stopped(uint32_t c)
{
	long long t0 = tsc_now_ns();

	for (long i = 0; !__atomic_load_n(&stopped[c], __ATOMIC_ACQUIRE); i++) {
		if (t0 >= 0 ? tsc_now_ns() - t0 > STOP_WAIT_NS : i > STOP_WAIT_SPINS)
			return false;
		cpu_relax();
	}
	return true;
}

static void __attribute__((noreturn)) panic_end(enum trap_end how)
{
	uint32_t end = how == TRAP_END_WATCHDOG ? PERSIST_END_WATCHDOG : PERSIST_END_PANIC;
	struct percpu *pc = this_cpu();
	unsigned others = 0, answered = 0;
	char state_buf[WORDS_MAX] = "", done_buf[WORDS_MAX] = "";
	struct kbuf state = { state_buf, sizeof(state_buf), 0 };
	struct kbuf done = { done_buf, sizeof(done_buf), 0 };

	for (uint32_t c = 0; c < cpu_count; c++)
		others += c != pc->cpu && cpus[c] && cpus[c]->online;
	for_each_panic_hook(h)	/* P2 */
		if (h->owner)
			h->owner(&state);
	printk("panic: cpu=%u%s stopping=%u\n", pc->cpu, state_buf, others);
	for (uint32_t c = 0; c < cpu_count; c++) {
		if (c == pc->cpu || !cpus[c] || !cpus[c]->online)
			continue;
		lapic_send_nmi(cpus[c]->apic_id);
		if (wait_stopped(c))
			answered++;
		else
			printk("panic: cpu=%u did not answer its NMI within %lld ms\n", c,
			       STOP_WAIT_NS / 1000000);
	}
	for_each_panic_hook(h)	/* P4: every other CPU stopped or named */
		if (h->stopped_all)
			h->stopped_all(&done);
	printk("panic: stopped=%u/%u%s\n", answered, others, done_buf);
	for_each_panic_hook(h)	/* P2, P4; a fault in it: P5 */
		if (h->end)
			h->end(end);
	printk("panic: end action=%s\n", actions[panic_action]);
	end_machine();
}

TRAP_FATAL(.begin = panic_begin, .end = panic_end, .nmi = panic_nmi);
