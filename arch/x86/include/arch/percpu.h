/*
 * Per-CPU data, reached through the GS base: %gs:0 holds a pointer to the
 * area itself (self), so this_cpu() is one load. Each area is allocated
 * page-aligned from the page allocator, so no two CPUs share a cache line
 * (or a page) for anything in it, and it never shares a page with code.
 *
 *   struct percpu (one per CPU, page-aligned)
 *   +0     self            -- %gs:0
 *   +8     cpu             -- logical id, 0 = boot CPU
 *   ...    identity, interrupt nesting, cross-CPU calls
 *   ...    GDT, TSS, IST stacks (cold)
 *   +PERCPU_VARS_OFFSET  the subsystems' per-CPU variables (DEFINE_PER_CPU, below)
 */
#ifndef ARCH_PERCPU_H
#define ARCH_PERCPU_H

#include <stdbool.h>
#include <stdint.h>
#include "baretrace/compiler.h"

#define MAX_CPUS	256
#define IST_STACK_SIZE	8192
#define KSTACK_SIZE	16384

struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];	/* stacks for privilege changes (unused: ring 0 only) */
	uint64_t reserved1;
	uint64_t ist[7];	/* IST1..IST7 */
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;	/* past the limit: no I/O bitmap */
} __packed;

struct percpu {
	struct percpu *self;		/* %gs:0; must stay first */
	uint32_t cpu;			/* logical id, 0 = boot CPU */
	uint32_t apic_id;		/* local APIC (x2APIC) id */
	uint32_t acpi_uid;		/* ACPI processor UID */
	volatile uint32_t online;	/* set by the CPU itself once running */
	uint32_t irq_depth;		/* interrupts being handled (nesting) */
	uint32_t nmi_depth;		/* NMIs being handled */
	uint64_t irq_count;		/* interrupts taken */
	uint64_t nmi_count;		/* NMIs taken */
	uint64_t timer_ticks;		/* LAPIC timer interrupts */
	uint64_t ipi_count;		/* call-function IPIs taken */

	/* Cross-CPU calls: the owner runs fn(arg) from its idle loop. */
	void (*volatile call_fn)(void *);	/* pending work, NULL = none */
	void *volatile call_arg;		/* its argument */
	uint32_t call_from;			/* CPU that posted it */
	volatile uint64_t call_done;		/* completions, bumped after fn */

	uint64_t gdt[5] __aligned(16);	/* null, code, data, TSS (2 slots) */
	struct tss tss __aligned(16);	/* IST stacks for NMI, #DF, #MC */
	uint8_t ist_stack[3][IST_STACK_SIZE] __aligned(16);
	uint64_t kstack_top;		/* top of this CPU's kernel stack */
};

_Static_assert(__builtin_offsetof(struct percpu, self) == 0, "self must be at %gs:0");

/*
 * The calling CPU's own fields, one %gs-relative load each (no this_cpu()
 * first): percpu_read32(cpu).  The field's size is checked at compile
 * time.  Volatile, as this_cpu_read() below.
 */
#define percpu_read_sized(field, type, bytes) ({				\
	type v_;								\
	_Static_assert(sizeof(((struct percpu *)0)->field) == (bytes),		\
		       "percpu: " #field " is not " #bytes " bytes");		\
	__asm__ __volatile__("mov %%gs:%c1, %0" : "=r"(v_)			\
			     : "i"(__builtin_offsetof(struct percpu, field)));	\
	v_;									\
})
#define percpu_read32(field)	percpu_read_sized(field, uint32_t, 4)
#define percpu_read_ptr(field)	percpu_read_sized(field, __typeof__(((struct percpu *)0)->field), 8)

static inline struct percpu *this_cpu(void)
{
	return percpu_read_ptr(self);
}

/*
 * Per-CPU variables (Linux's DEFINE_PER_CPU): each subsystem defines its
 * own in its own file, in the .percpu section. That section is a template
 * linked at address 0 (linker.ld), so a variable's address is its offset
 * in the template; each CPU's area carries a copy of the template right
 * after its struct percpu:
 *
 *   %gs base -> +0                   struct percpu (self, ids, depths, ...)
 *               +PERCPU_VARS_OFFSET  copy of .percpu: [&var] is var's slot
 *
 * So the calling CPU's var is at %gs:(PERCPU_VARS_OFFSET + &var), one
 * instruction with the offset as a link-time constant, and another CPU's at
 * cpus[cpu] + the same offset. A variable is never used by its own name
 * (that is the template, not loaded at its address): only through the
 * accessors below. Initial values are copied into each area before the CPU
 * runs (percpu_alloc(), percpu_init_boot()).
 */
#define PERCPU_VARS_OFFSET	((sizeof(struct percpu) + CACHELINE_SIZE - 1) & ~(CACHELINE_SIZE - 1))
#define PERCPU_VARS_MAX		4096	/* template bytes; linker.ld checks the same bound */

#define DECLARE_PER_CPU(type, name)	extern __typeof__(type) name
#define DEFINE_PER_CPU(type, name)	__attribute__((section(".percpu"))) __typeof__(type) name
/* Alone on its cache lines: a writer's hot state (the style's padding rule). */
#define DEFINE_PER_CPU_ALIGNED(type, name) \
	__attribute__((section(".percpu"), aligned(CACHELINE_SIZE))) __typeof__(type) name

/*
 * var's offset from any CPU's GS base; var may name a field (wd.state).
 * The accessors' asm takes &var and PERCPU_VARS_OFFSET as two operands
 * and adds them in the operand (%gs:var+offset): GCC does not always see
 * the sum, an integer made from an address, as the constant "i" wants.
 */
#define percpu_offset(var)	(PERCPU_VARS_OFFSET + (uintptr_t)&(var))

/* var in the area pc; another CPU's (or this one's) by logical id: cpus[cpu] must exist. */
#define percpu_area_ptr(pc, var) \
	((__typeof__(&(var)))((char *)(pc) + percpu_offset(var)))
#define per_cpu_ptr(var, cpu)	percpu_area_ptr(cpus[(cpu)], var)
#define this_cpu_ptr(var)	percpu_area_ptr(this_cpu(), var)

#define percpu_check_scalar(var) \
	_Static_assert(sizeof(var) == 1 || sizeof(var) == 2 || sizeof(var) == 4 || \
		       sizeof(var) == 8, "this_cpu: " #var " is not a scalar")

/*
 * The calling CPU's var, read or written in one %gs-relative instruction:
 * atomic against this CPU's own interrupts, and relaxed against the other
 * CPUs (which reach it only through per_cpu_ptr()). Volatile, so each use
 * is its own access, as with __atomic_*_n(..., __ATOMIC_RELAXED).
 */
#define this_cpu_read(var) ({							\
	__typeof__(var) v_;							\
	percpu_check_scalar(var);						\
	__asm__ __volatile__("mov %%gs:%c1+%c2, %0" : "=r"(v_)			\
			     : "i"(&(var)), "i"(PERCPU_VARS_OFFSET));		\
	v_;									\
})
#define this_cpu_write(var, v) do {						\
	percpu_check_scalar(var);						\
	__asm__ __volatile__("mov %2, %%gs:%c0+%c1" : : "i"(&(var)),		\
			     "i"(PERCPU_VARS_OFFSET), "er"((__typeof__(var))(v))	\
			     : "memory");						\
} while (0)

/*
 * The calling CPU's var |= v, &= v: one read-modify-write instruction, so
 * atomic against this CPU's own interrupts (no other CPU writes it).
 */
#define this_cpu_op(op, var, v) do {						\
	_Static_assert(sizeof(var) == 4 || sizeof(var) == 8,			\
		       "this_cpu_" op ": " #var " is not 4 or 8 bytes");	\
	if (sizeof(var) == 4)	/* the suffix: v may be an immediate */	\
		__asm__ __volatile__(op "l %2, %%gs:%c0+%c1" : : "i"(&(var)),	\
				     "i"(PERCPU_VARS_OFFSET), "ir"((uint32_t)(v))	\
				     : "memory");					\
	else								\
		__asm__ __volatile__(op "q %2, %%gs:%c0+%c1" : : "i"(&(var)),	\
				     "i"(PERCPU_VARS_OFFSET), "er"((uint64_t)(v))	\
				     : "memory");					\
} while (0)
#define this_cpu_or(var, v)	this_cpu_op("or", var, v)
#define this_cpu_and(var, v)	this_cpu_op("and", var, v)

/*
 * v | the calling CPU's var, in one instruction (var folded into the or),
 * var left as it is.  Volatile like the reads, so each use pays for its
 * own read: a loop of events costs what the same events apart would.
 */
#define this_cpu_or_into(var, v) ({						\
	__typeof__(var) r_ = (v);						\
	percpu_check_scalar(var);						\
	__asm__ __volatile__("or %%gs:%c1+%c2, %0" : "+r"(r_)			\
			     : "i"(&(var)), "i"(PERCPU_VARS_OFFSET));		\
	r_;									\
})

extern struct percpu *cpus[MAX_CPUS];	/* by logical id; NULL past the last */
extern unsigned cpu_count;		/* CPUs with an area */
extern unsigned cpus_online;		/* CPUs running */

/* Set up the boot CPU's area (GS base, GDT, TSS) early in boot. */
void percpu_init_boot(void);
void percpu_free(struct percpu *pc);	/* an AP that did not start */
/* Allocate an area for a CPU that is about to start. */
struct percpu *percpu_alloc(uint32_t cpu, uint32_t apic_id, uint32_t uid);
/* Load GS base, GDT and TSS on the CPU that owns pc. */
void percpu_load(struct percpu *pc);

#endif
