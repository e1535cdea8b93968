/*
 * Panic: what a fatal exception (trap_fatal) does after and around its
 * register report, so that the trace recorded up to the fault gets out.
 *
 *   1. panic_begin(): recording stops on every CPU (each buffer's record
 *      off: any CPU may do that at any time), so the trace ends at the
 *      fault. One CPU wins the report (a compare-and-swap on panic_cpu);
 *      a CPU that panics at the same time stops where it is and waits for
 *      the winner's NMI, so two panics give one report.
 *   2. trap_fatal() prints the registers and the backtrace.
 *   3. panic_end(): every other online CPU, one at a time, gets an NMI.
 *      In it (panic_nmi()) the CPU flushes its own tail page (only the
 *      owning CPU may), prints one line (where it was, whether a writer of
 *      its buffer was between reserve and commit), says it is done and
 *      halts with NMIs blocked for good. The owner waits a bounded time
 *      for each, then flushes its own buffer and dumps without asking any
 *      CPU for anything (dump_panic()).
 *   4. The machine ends as panic.action= says.
 *
 * The owner faulting again (anywhere from panic_begin() on, the dump
 * included) finds panic_cpu already its own: it prints one line and ends,
 * rather than reporting inside its report.
 *
 * One CPU prints at a time (the owner waits while a stopped CPU prints),
 * and the console is in panic mode: no lock that a stopped CPU may hold.
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
#include "kernel/dump.h"
#include "kernel/ksyms.h"
#include "kernel/panic.h"
#include "kernel/persist.h"
#include "kernel/tracing.h"
#include "trace/persist.h"

#define NO_CPU		UINT32_MAX
#define STOP_WAIT_NS	1000000000ll	/* for each CPU to answer its NMI */
#define STOP_WAIT_SPINS	100000000	/* the same bound without a clock */
#define NEST_LEVELS	((1u << RB_NEST_MAX) - 1)	/* the nest word's Ln bits */

enum panic_action { PANIC_EXIT, PANIC_HALT, PANIC_REBOOT };
static const char *const actions[] = { "exit", "halt", "reboot", NULL };
static const char *const injects[] = { "none", "dump", NULL };

static char panic_dump_sel[32] = "text";
static uint64_t panic_dump_last = 100;
static int panic_action = PANIC_EXIT;
static int panic_inject;		/* 1: fault once the dump has begun */

CMDLINE_OPTION(panic_dump, .name = "panic.dump", .type = OPT_LIST, .var = panic_dump_sel,
	       .size = sizeof(panic_dump_sel), .choices = dump_choices,
	       .help = "what a panic dumps: text, bin, usb (comma list) or none");
bool panic_dump_has(const char *item)
{
	return cmdline_list_has(panic_dump_sel, item);
}

CMDLINE_OPTION(panic_dump_last, .name = "panic.dump.last", .type = OPT_UINT,
	       .var = &panic_dump_last, .min = 0, .max = 100000000,
	       .help = "events in a panic's text dump, the most recent, all CPUs merged; 0 = all");
CMDLINE_OPTION(panic_action, .name = "panic.action", .type = OPT_ENUM, .var = &panic_action,
	       .choices = actions, .help = "after a panic: exit (with failure), halt, or reboot");
CMDLINE_OPTION(panic_inject, .name = "panic.inject", .type = OPT_ENUM, .var = &panic_inject,
	       .choices = injects, .help = "test facility: dump = fault again inside the panic dump");

static uint32_t panic_cpu = NO_CPU;	/* the CPU that owns the report */
static uint32_t stopped[MAX_CPUS];	/* 1 once that CPU printed its line and halted */
static uint64_t fault_rip[MAX_CPUS];	/* a CPU that panicked too: where (else 0) */

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

/* The calling CPU was stopped inside a write of its own buffer. */
static bool in_tracer(void)
{
	struct rb_cpu_buffer *cb = this_cpu_rb();

	return cb && (__atomic_load_n(&cb->nest, __ATOMIC_RELAXED) & NEST_LEVELS);
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

void panic_begin(struct trap_frame *f)
{
	uint32_t me = this_cpu()->cpu, owner = NO_CPU;

	irq_disable();
	watchdog_stop();	/* the report and dump may take long with interrupts off */
	fault_rip[me] = f->rip ? f->rip : 1;	/* read only if another CPU owns the report */
	tracing_stop();
	if (__atomic_compare_exchange_n(&panic_cpu, &owner, me, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return;
	if (owner == me) {
		/* One line, no register report: the report is what faulted. */
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

void panic_nmi(struct trap_frame *f)
{
	uint32_t owner = __atomic_load_n(&panic_cpu, __ATOMIC_ACQUIRE);
	struct percpu *pc = this_cpu();
	uint32_t me = pc->cpu;

	if (owner == NO_CPU || owner == me)
		return;
	bool busy = in_tracer();
	/* Only this CPU may end its tail page; a writer it interrupted keeps its page unpublished. */
	int fl = ring_buffer_flush(this_cpu_rb());
	unsigned long long off;
	const char *sym = sym_of(fault_rip[me] ? fault_rip[me] : f->rip, &off);

	printk("panic: stopped cpu=%u rip=%s+0x%llx in_tracer=%s%s flush=%d\n", me, sym, off,
	       busy ? "yes" : "no", fault_rip[me] ? " panicked=yes" : "", fl);
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

static __noinline void inject_fault(void)
{
	volatile uint64_t *unmapped = (volatile uint64_t *)0x00007F0000000000ull;

	printk("panic: faulting in the dump on purpose (panic.inject=dump)\n");
	(void)*unmapped;
}

void panic_end(void)
{
	panic_end_as(PERSIST_END_PANIC);
}

void panic_end_as(uint32_t end)
{
	struct percpu *pc = this_cpu();
	unsigned others = 0, answered = 0;

	for (uint32_t c = 0; c < cpu_count; c++)
		others += c != pc->cpu && cpus[c] && cpus[c]->online;
	printk("panic: cpu=%u in_tracer=%s recording=off stopping=%u\n", pc->cpu,
	       in_tracer() ? "yes" : "no", others);
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
	int fl = ring_buffer_flush(this_cpu_rb());
	printk("panic: stopped=%u/%u flush=%d dump=%s last=%llu\n", answered, others, fl,
	       panic_dump_sel, (unsigned long long)panic_dump_last);
	persist_mark_end(end);	/* every writer stopped: seal the range */
	if (!cmdline_list_has(panic_dump_sel, "none")) {
		if (panic_inject)
			inject_fault();
		dump_panic(cmdline_list_has(panic_dump_sel, "text"),
			   cmdline_list_has(panic_dump_sel, "bin"),
			   cmdline_list_has(panic_dump_sel, "usb"), panic_dump_last);
	}
	printk("panic: end action=%s\n", actions[panic_action]);
	end_machine();
}
