/* Small x86 instruction wrappers: CPUID, MSRs, control registers, TSC. */
#ifndef ARCH_CPU_H
#define ARCH_CPU_H

#include <stdint.h>
#include <arch/tsc_site.h>

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_regs r;
	__asm__ __volatile__("cpuid"
			     : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
			     : "a"(leaf), "c"(subleaf));
	return r;
}

#define MSR_EFER	0xC0000080	/* extended feature enables */
#define EFER_NXE	(1ull << 11)	/* no-execute bit in page tables; reserved while clear */

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

/*
 * An exception-table entry: a fault at insn resumes at fixup instead of
 * being fatal (trap_fixup(), arch/x86/traps.c).  The fixup code lives in
 * .text.fixup, out of the caller's straight line.
 */
struct extable_entry {
	uint64_t insn;		/* the instruction that may fault */
	uint64_t fixup;		/* where to resume if it does */
};

#define EXTABLE(insn, fixup)						\
	".pushsection ex_table, \"a\"\n\t"				\
	".balign 8\n\t"						\
	".quad " #insn ", " #fixup "\n\t"				\
	".popsection\n\t"

/*
 * rdmsr of an MSR that may not exist: 0 and *v set, or -1 (and *v = 0)
 * if the CPU raised #GP (an absent or unreadable MSR, Intel SDM vol. 2B
 * RDMSR: "If ECX specifies a reserved or unimplemented MSR address").
 */
static inline int rdmsr_safe(uint32_t msr, uint64_t *v)
{
	uint32_t lo, hi;
	int err;

	__asm__ __volatile__("xor %2, %2\n\t"
			     "1: rdmsr\n\t"
			     "2:\n\t"
			     ".pushsection .text.fixup, \"ax\"\n\t"
			     "3: mov $-1, %2\n\t"
			     "xor %0, %0\n\t"
			     "xor %1, %1\n\t"
			     "jmp 2b\n\t"
			     ".popsection\n\t"
			     EXTABLE(1b, 3b)
			     : "=a"(lo), "=d"(hi), "=&r"(err) : "c"(msr));
	*v = ((uint64_t)hi << 32) | lo;
	return err;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ __volatile__("wrmsr" : : "c"(msr), "a"((uint32_t)v),
			     "d"((uint32_t)(v >> 32)) : "memory");
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("1: rdtsc\n\t" TSC_SITE(TSC_SITE_RDTSC) : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t read_cr0(void)
{
	uint64_t v;
	__asm__ __volatile__("mov %%cr0, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_cr2(void)
{
	uint64_t v;
	__asm__ __volatile__("mov %%cr2, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_cr3(void)
{
	uint64_t v;
	__asm__ __volatile__("mov %%cr3, %0" : "=r"(v));
	return v;
}

static inline void write_cr3(uint64_t v)
{
	__asm__ __volatile__("mov %0, %%cr3" : : "r"(v) : "memory");
}

static inline uint64_t read_cr4(void)
{
	uint64_t v;
	__asm__ __volatile__("mov %%cr4, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_rflags(void)
{
	uint64_t v;
	__asm__ __volatile__("pushfq; popq %0" : "=r"(v));
	return v;
}

static inline void cpu_relax(void)
{
	__asm__ __volatile__("pause" ::: "memory");
}

static inline void irq_disable(void)
{
	__asm__ __volatile__("cli" ::: "memory");
}

static inline void irq_enable(void)
{
	__asm__ __volatile__("sti" ::: "memory");
}

static inline void cpu_halt(void)
{
	__asm__ __volatile__("hlt" ::: "memory");
}

/*
 * Sleep until an interrupt: enable interrupts and halt.  sti takes effect
 * after the next instruction, so an interrupt pending at sti wakes the hlt
 * instead of being taken between the two and leaving the CPU asleep.
 * Returns with interrupts enabled, after the interrupt's handler ran.
 */
static inline void cpu_sleep_until_irq(void)
{
	__asm__ __volatile__("sti; hlt" ::: "memory");
}

#define RFLAGS_IF	(1u << 9)

#endif
