/* Interrupt and exception entry: the saved frame and the handler registry. */
#ifndef ARCH_TRAP_H
#define ARCH_TRAP_H

#include <stdbool.h>
#include <stdint.h>
#include "baretrace/compiler.h"

/* Layout fixed by isr.asm: keep both in step. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;	/* saved by isr_common */
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;	/* saved by isr_common */
	uint64_t vector;				/* pushed by the stub */
	uint64_t error_code;				/* CPU's, or 0 from the stub */
	uint64_t rip, cs, rflags, rsp, ss;		/* pushed by the CPU */
};

_Static_assert(sizeof(struct trap_frame) == 22 * 8, "isr.asm frame layout");
_Static_assert(__builtin_offsetof(struct trap_frame, vector) == 15 * 8, "isr.asm frame layout");

#define VEC_NMI		2
#define VEC_DF		8
#define VEC_PF		14
#define VEC_MC		18
#define VEC_FIRST_IRQ	32

/* Ring-buffer context levels kept in percpu.trace (see trace_arch.h). */
#define TRACE_LEVEL_TASK	0
#define TRACE_LEVEL_IRQ		2
#define TRACE_LEVEL_NMI		3

/*
 * Trap hooks: a subsystem that owns some traps (the watchdog's NMI), keeps
 * state by interrupt context, or takes over return addresses, registers
 * what traps must do for it with
 * TRAP_HOOK() in the "trap_hooks" linker section, next to its code (as
 * CPU_HOOK() does for bring-up); traps call every hook in link order and
 * know none of them:
 *
 *   claim(f)            first, before anything is counted, traced or
 *                       handed to a handler: true if trap f was the
 *                       hook's alone (then nothing else sees it)
 *   enter(level, save)  an IRQ or NMI handler is about to run at level
 *                       (TRACE_LEVEL_IRQ, TRACE_LEVEL_NMI) on this CPU;
 *                       save is the hook's own slot on this interrupt's
 *                       stack, for what leave puts back
 *   leave(save)         that handler has returned (reverse link order)
 *   unwind(u, ret, slot)  the backtrace read return address ret from the
 *                       stack word at slot: the real one if the hook took
 *                       that slot over, else ret; u is the hook's state
 *                       for this walk, zero at its start
 *
 * Any of them may be NULL. Hooks run in NMI context: no locks. At most
 * TRAP_HOOKS_MAX (linker.ld checks).
 */
#define TRAP_HOOKS_MAX	4

struct trap_hook_save {
	uint64_t word[4];		/* the hook's own; at least its saved context */
};

struct trap_unwind {
	uint64_t word[2];		/* the hook's own; zero when a walk starts */
};

struct trap_hook {
	const char *name;					/* the subsystem */
	bool (*claim)(struct trap_frame *f);			/* or NULL */
	void (*enter)(uint32_t level, struct trap_hook_save *save);	/* or NULL */
	void (*leave)(const struct trap_hook_save *save);	/* or NULL */
	uint64_t (*unwind)(struct trap_unwind *u, uint64_t ret, const uint64_t *slot); /* or NULL */
};

#define TRAP_HOOK(id, ...)						\
	static const struct trap_hook __trap_hook_##id			\
	__section("trap_hooks") __used __aligned(8) = { __VA_ARGS__ }

/*
 * A fatal trap (an exception nobody handles, the hard-lockup watchdog's
 * report) is ended by the kernel's panic, not by arch: kernel/panic.c
 * registers what happens around the report with TRAP_FATAL() in the
 * "trap_fatal" linker section (at most one; linker.ld checks), and arch
 * calls it through trap_fatal_begin() and trap_fatal_end():
 *
 *   begin(f)   first, on any CPU, interrupts off: returns only to the one
 *              CPU that owns the report (others wait there to be stopped)
 *   end(how)   after that CPU's report: stop the others, save, end the
 *              machine; how says what ended it (enum trap_end)
 *   nmi(f)     from the NMI handler (trap_fatal_nmi()): stops this CPU
 *              for good if another one owns a report; else returns
 *
 * With none linked, the report is printed and the machine exits.
 */
enum trap_end {
	TRAP_END_FAULT,			/* an exception or interrupt nobody handles */
	TRAP_END_WATCHDOG,		/* the hard-lockup watchdog */
};

struct trap_fatal_ops {
	void (*begin)(struct trap_frame *f);
	void (*end)(enum trap_end how) __attribute__((noreturn));
	void (*nmi)(struct trap_frame *f);
};

#define TRAP_FATAL(...)							\
	static const struct trap_fatal_ops __trap_fatal			\
	__section("trap_fatal") __used __aligned(8) = { __VA_ARGS__ }

/* The registered begin() (or interrupts off), then the console in panic mode. */
void trap_fatal_begin(struct trap_frame *f);
/* The registered end(how), or exit with failure. */
void __attribute__((noreturn)) trap_fatal_end(enum trap_end how);
/* The registered nmi(f), if any. */
void trap_fatal_nmi(struct trap_frame *f);

typedef void (*trap_handler_t)(struct trap_frame *f);

void idt_init(void);		/* build and load the IDT (boot CPU) */
void idt_load(void);		/* load the same IDT (other CPUs) */
void trap_set_handler(unsigned vector, trap_handler_t h);
trap_handler_t trap_get_handler(unsigned vector);

/* Print the register dump and backtrace for f, then leave with failure. */
void trap_dispatch(struct trap_frame *f);	/* from every vector stub (isr.asm) */
void __attribute__((noreturn)) trap_fatal(struct trap_frame *f, const char *why);
/* "Backtrace:", f's RIP and its frame-pointer chain, one symbol a line. */
void trap_backtrace(const struct trap_frame *f);

#endif
