/*
 * Traps: trap_dispatch(), the one entry from every vector's stub, sends
 * each vector to its registered handler and keeps the per-CPU context the
 * tracer reads; exceptions and interrupts without a handler are fatal.
 *
 * Fatal exceptions: print everything a person needs to find the bug
 * (vector and name, error code, RIP, RSP, CR2, all general registers, a
 * frame-pointer backtrace with symbol names), then hand over to the panic
 * path (kernel/panic.c): the other CPUs stopped, the trace dumped, the end.
 *
 * The backtrace follows the RBP chain (the kernel is built with
 * -fno-omit-frame-pointer): [rbp] is the caller's rbp, [rbp+8] the return
 * address. Each step is checked (aligned, inside the identity map, moving up
 * the stack) so a corrupt chain ends the walk rather than faulting again.
 *
 * A subsystem may have taken a return slot over (function_graph puts its
 * return trampoline there): each return address read is handed to the
 * trap hooks' unwind(), which give the real one back, as Linux's unwinder
 * asks the function tracer. The walk runs at the level the report runs
 * at, which is the trapped code's: exceptions keep the level they
 * interrupt, and the watchdog reports from its NMI before trap_dispatch()
 * calls the hooks' enter(). It only ever moves down the stack: the chain
 * leaves an interrupt handler's frames (trap_dispatch() keeps the
 * interrupted rbp) for those of the code the interrupt stopped.
 *
 * Traps know no subsystem: interrupt context and return addresses reach
 * them through TRAP_HOOK() (<arch/trap.h>), as CPU bring-up's do through
 * CPU_HOOK(), and the end of a fatal trap (the kernel's panic) through
 * TRAP_FATAL().
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/exit.h>
#include <arch/percpu.h>
#include <arch/trap.h>
#include <arch/lapic.h>
#include "kernel/console.h"
#include "kernel/ksyms.h"

#define BACKTRACE_MAX	32
#define MAPPED_LIMIT	0x100000000ull	/* the boot identity map: 4 GiB */

static const char *const exc_names[32] = {
	"divide error (#DE)", "debug (#DB)", "NMI", "breakpoint (#BP)",
	"overflow (#OF)", "bound range (#BR)", "invalid opcode (#UD)",
	"device not available (#NM)", "double fault (#DF)",
	"coprocessor segment overrun", "invalid TSS (#TS)",
	"segment not present (#NP)", "stack fault (#SS)",
	"general protection (#GP)", "page fault (#PF)", "reserved 15",
	"x87 floating point (#MF)", "alignment check (#AC)",
	"machine check (#MC)", "SIMD floating point (#XM)",
	"virtualization (#VE)", "control protection (#CP)", "reserved 22",
	"reserved 23", "reserved 24", "reserved 25", "reserved 26",
	"reserved 27", "hypervisor injection (#HV)", "VMM communication (#VC)",
	"security (#SX)", "reserved 31",
};

static void print_addr(const char *label, uint64_t addr)
{
	uint64_t off;
	const char *name = ksym_lookup(addr, &off);

	if (name)
		printk("%s 0x%016llx %s+0x%llx\n", label, (unsigned long long)addr,
		       name, (unsigned long long)off);
	else
		printk("%s 0x%016llx ?\n", label, (unsigned long long)addr);
}

extern const struct trap_hook __start_trap_hooks[], __stop_trap_hooks[];
_Static_assert(sizeof(struct trap_hook) == 40, "linker.ld's TRAP_HOOKS_MAX bound counts 40 bytes");
_Static_assert(sizeof(struct trap_fatal_ops) == 24, "linker.ld's TRAP_FATAL bound counts 24 bytes");

/* ret from the slot at slot, as the hook that took the slot over (if any) maps it back. */
static uint64_t unwind_ret(struct trap_unwind *u, uint64_t ret, const uint64_t *slot)
{
	for (const struct trap_hook *h = __start_trap_hooks; h < __stop_trap_hooks; h++, u++)
		if (h->unwind)
			ret = h->unwind(u, ret, slot);
	return ret;
}

static void backtrace(uint64_t rbp)
{
	struct trap_unwind u[TRAP_HOOKS_MAX] = { 0 };

	for (int depth = 0; depth < BACKTRACE_MAX && rbp; depth++) {
		if (rbp & 7 || rbp + 16 > MAPPED_LIMIT || rbp < 0x1000) {
			printk("  (frame pointer 0x%llx is not valid; stopping)\n",
			       (unsigned long long)rbp);
			return;
		}
		uint64_t next = ((uint64_t *)rbp)[0];
		uint64_t ret = unwind_ret(u, ((uint64_t *)rbp)[1], (uint64_t *)rbp + 1);
		if (!ret)
			return;
		print_addr("  ", ret);
		if (next && next <= rbp) {
			printk("  (frame chain goes down the stack; stopping)\n");
			return;
		}
		rbp = next;
	}
}

void trap_backtrace(const struct trap_frame *f)
{
	printk("Backtrace:\n");
	print_addr("  ", f->rip);
	backtrace(f->rbp);
}

extern const struct trap_fatal_ops __start_trap_fatal[], __stop_trap_fatal[];

static const struct trap_fatal_ops *fatal_ops(void)
{
	const struct trap_fatal_ops *first = __start_trap_fatal;

	return first < __stop_trap_fatal ? first : NULL;
}

void trap_fatal_begin(struct trap_frame *f)
{
	const struct trap_fatal_ops *ops = fatal_ops();

	if (ops)
		ops->begin(f);	/* recording off; returns only to the one CPU that reports */
	else
		irq_disable();
	console_enter_panic_mode();
}

void trap_fatal_end(enum trap_end how)
{
	const struct trap_fatal_ops *ops = fatal_ops();

	if (ops)
		ops->end(how);	/* stop the other CPUs, dump the trace, end */
	machine_exit(false);
}

void trap_fatal_nmi(struct trap_frame *f)
{
	const struct trap_fatal_ops *ops = fatal_ops();

	if (ops)
		ops->nmi(f);
}

void trap_fatal(struct trap_frame *f, const char *why)
{
	const char *name = f->vector < 32 ? exc_names[f->vector] : "interrupt";

	trap_fatal_begin(f);
	printk("PANIC: %s: vector=%llu (%s) error_code=0x%llx\n", why,
	       (unsigned long long)f->vector, name,
	       (unsigned long long)f->error_code);
	print_addr("RIP:", f->rip);
	printk("RSP: 0x%016llx RFLAGS: 0x%016llx CS: 0x%llx SS: 0x%llx\n",
	       (unsigned long long)f->rsp, (unsigned long long)f->rflags,
	       (unsigned long long)f->cs, (unsigned long long)f->ss);
	printk("CR2: 0x%016llx CR3: 0x%016llx CR0: 0x%016llx CR4: 0x%016llx\n",
	       (unsigned long long)read_cr2(), (unsigned long long)read_cr3(),
	       (unsigned long long)read_cr0(), (unsigned long long)read_cr4());
	printk("RAX: 0x%016llx RBX: 0x%016llx RCX: 0x%016llx\n",
	       (unsigned long long)f->rax, (unsigned long long)f->rbx,
	       (unsigned long long)f->rcx);
	printk("RDX: 0x%016llx RSI: 0x%016llx RDI: 0x%016llx\n",
	       (unsigned long long)f->rdx, (unsigned long long)f->rsi,
	       (unsigned long long)f->rdi);
	printk("RBP: 0x%016llx R8:  0x%016llx R9:  0x%016llx\n",
	       (unsigned long long)f->rbp, (unsigned long long)f->r8,
	       (unsigned long long)f->r9);
	printk("R10: 0x%016llx R11: 0x%016llx R12: 0x%016llx\n",
	       (unsigned long long)f->r10, (unsigned long long)f->r11,
	       (unsigned long long)f->r12);
	printk("R13: 0x%016llx R14: 0x%016llx R15: 0x%016llx\n",
	       (unsigned long long)f->r13, (unsigned long long)f->r14,
	       (unsigned long long)f->r15);
	trap_backtrace(f);
	printk("PANIC: end of report\n");
	trap_fatal_end(TRAP_END_FAULT);
}

/* ---- dispatch ---- */

extern const struct extable_entry __start_ex_table[], __stop_ex_table[];

/*
 * An exception at an instruction listed in ex_table (rdmsr_safe() and
 * the like) resumes at its fixup, which tells its caller: such a fault
 * is an answer, not a bug. A linear search: a handful of entries.
 */
static bool trap_fixup(struct trap_frame *f)
{
	for (const struct extable_entry *e = __start_ex_table; e < __stop_ex_table; e++)
		if (e->insn == f->rip) {
			f->rip = e->fixup;
			return true;
		}
	return false;
}

static trap_handler_t handlers[256];

trap_handler_t trap_get_handler(unsigned vector)
{
	return vector < 256 ? handlers[vector] : NULL;
}

void trap_set_handler(unsigned vector, trap_handler_t h)
{
	if (vector < 256)
		handlers[vector] = h;
}

/*
 * An IRQ or NMI handler h at level, between the trap hooks' enter() and
 * leave() (reverse order), each with its slot on this stack.
 */
static void run_at_level(trap_handler_t h, struct trap_frame *f, uint32_t level)
{
	struct trap_hook_save save[TRAP_HOOKS_MAX];
	const struct trap_hook *k;

	for (k = __start_trap_hooks; k < __stop_trap_hooks; k++)
		if (k->enter)
			k->enter(level, &save[k - __start_trap_hooks]);
	h(f);
	while (k-- > __start_trap_hooks)
		if (k->leave)
			k->leave(&save[k - __start_trap_hooks]);
}

/*
 * The one entry for every vector. It keeps the per-CPU nesting depths and
 * tells the trap hooks which context level a handler runs at (task, IRQ,
 * NMI): the place to instrument interrupt entry and exit.
 */
void trap_dispatch(struct trap_frame *f)
{
	trap_handler_t h = f->vector < 256 ? handlers[f->vector] : 0;
	struct percpu *pc = this_cpu();

	/* The hooks' claims first, before anything is counted, traced or handled. */
	for (const struct trap_hook *k = __start_trap_hooks; k < __stop_trap_hooks; k++)
		if (k->claim && k->claim(f))
			return;
	if (h) {
		if (f->vector == VEC_NMI) {
			pc->nmi_depth++;
			pc->nmi_count++;
			run_at_level(h, f, TRACE_LEVEL_NMI);
			pc->nmi_depth--;
		} else if (f->vector >= VEC_FIRST_IRQ) {
			pc->irq_depth++;
			pc->irq_count++;
			run_at_level(h, f, TRACE_LEVEL_IRQ);
			pc->irq_depth--;
		} else {
			h(f);
		}
		return;
	}
	if (f->vector < VEC_FIRST_IRQ && f->vector != VEC_NMI && trap_fixup(f))
		return;
	if (f->vector < VEC_FIRST_IRQ)
		trap_fatal(f, "unhandled exception");
	trap_fatal(f, "unexpected interrupt");
}
