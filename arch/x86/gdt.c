/*
 * GDT and TSS. Long mode ignores segment bases and limits for code and data;
 * what we need the GDT for is a 64-bit code segment and a TSS whose
 * interrupt-stack table (IST) gives NMI, double fault and machine check
 * their own known-good stacks, so a fault on a broken stack can still be
 * reported.
 *
 *   selector  descriptor
 *   0x00      null
 *   0x08      kernel code, 64-bit (L=1)
 *   0x10      kernel data
 *   0x18      TSS (16 bytes, two slots)
 */
#include <stdint.h>
#include "baretrace/compiler.h"
#include <arch/trap.h>

#define SEL_KCODE	0x08
#define SEL_KDATA	0x10
#define SEL_TSS		0x18

#define IST_STACK_SIZE	8192
#define IST_NMI		1
#define IST_DF		2
#define IST_MC		3

struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];	/* stacks for privilege changes (unused: ring 0 only) */
	uint64_t reserved1;
	uint64_t ist[7];	/* IST1..IST7 */
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;	/* past the limit: no I/O bitmap */
} __packed;

_Static_assert(sizeof(struct tss) == 104, "TSS is 104 bytes");

static uint64_t gdt[5] __aligned(16);
static struct tss tss __aligned(16);
static uint8_t ist_stacks[3][IST_STACK_SIZE] __aligned(16);

struct desc_ptr {
	uint16_t limit;
	uint64_t base;
} __packed;

void gdt_init(void)
{
	uint64_t base = (uint64_t)&tss;
	uint64_t limit = sizeof(tss) - 1;
	struct desc_ptr p = { sizeof(gdt) - 1, (uint64_t)gdt };

	tss.ist[IST_NMI - 1] = (uint64_t)&ist_stacks[0][IST_STACK_SIZE];
	tss.ist[IST_DF - 1] = (uint64_t)&ist_stacks[1][IST_STACK_SIZE];
	tss.ist[IST_MC - 1] = (uint64_t)&ist_stacks[2][IST_STACK_SIZE];
	tss.iomap_base = sizeof(tss);

	gdt[0] = 0;
	gdt[1] = 0x00AF9A000000FFFFull;	/* P, DPL0, code exec/read, L, G */
	gdt[2] = 0x00CF92000000FFFFull;	/* P, DPL0, data read/write, G */
	/* 64-bit available TSS (type 9), split across two slots. */
	gdt[3] = (limit & 0xFFFF) | ((base & 0xFFFFFF) << 16) |
		 (0x89ull << 40) | (((limit >> 16) & 0xF) << 48) |
		 (((base >> 24) & 0xFF) << 56);
	gdt[4] = base >> 32;

	__asm__ __volatile__(
		"lgdt %0\n\t"
		"pushq %1\n\t"
		"leaq 1f(%%rip), %%rax\n\t"
		"pushq %%rax\n\t"
		"lretq\n"
		"1:\n\t"
		"movw %w2, %%ax\n\t"
		"movw %%ax, %%ds\n\t"
		"movw %%ax, %%es\n\t"
		"movw %%ax, %%ss\n\t"
		"movw %w3, %%ax\n\t"
		"ltr %%ax\n\t"
		: : "m"(p), "i"(SEL_KCODE), "i"(SEL_KDATA), "i"(SEL_TSS)
		: "rax", "memory");
}
