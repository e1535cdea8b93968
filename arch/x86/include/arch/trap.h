/* Interrupt and exception entry: the saved frame and the handler registry. */
#ifndef ARCH_TRAP_H
#define ARCH_TRAP_H

#include <stdint.h>

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
