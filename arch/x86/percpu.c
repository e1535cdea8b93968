/*
 * Per-CPU areas and the per-CPU GDT/TSS. Each CPU needs its own TSS (a TSS
 * is marked busy when loaded, and its IST stacks must be private), hence
 * its own GDT too.
 *
 *   selector  descriptor
 *   0x00      null
 *   0x08      kernel code, 64-bit (L=1)
 *   0x10      kernel data
 *   0x18      TSS (16 bytes, two slots)
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/trap.h>
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/pmm.h"

#define SEL_KCODE	0x08
#define SEL_KDATA	0x10
#define SEL_TSS		0x18
#define MSR_GS_BASE	0xC0000101
#define IST_NMI		1
#define IST_DF		2
#define IST_MC		3

_Static_assert(sizeof(struct tss) == 104, "TSS is 104 bytes");

struct percpu *cpus[MAX_CPUS];
unsigned cpu_count;
unsigned cpus_online;

/* cpu 0: needed before the allocator; room for the template (linker.ld checks it). */
static uint8_t boot_area[PERCPU_VARS_OFFSET + PERCPU_VARS_MAX] __aligned(4096);

/* The per-CPU template (linker.ld): its size, and where the image holds it. */
extern char __percpu_start[], __percpu_end[], __percpu_load[];

static uint64_t area_bytes(void)
{
	return PERCPU_VARS_OFFSET + (uint64_t)(__percpu_end - __percpu_start);
}

struct desc_ptr {
	uint16_t limit;
	uint64_t base;
} __packed;

static void build_gdt(struct percpu *pc)
{
	uint64_t base = (uint64_t)&pc->tss;
	uint64_t limit = sizeof(pc->tss) - 1;

	pc->tss.ist[IST_NMI - 1] = (uint64_t)&pc->ist_stack[0][IST_STACK_SIZE];
	pc->tss.ist[IST_DF - 1] = (uint64_t)&pc->ist_stack[1][IST_STACK_SIZE];
	pc->tss.ist[IST_MC - 1] = (uint64_t)&pc->ist_stack[2][IST_STACK_SIZE];
	pc->tss.iomap_base = sizeof(pc->tss);
	pc->gdt[0] = 0;
	pc->gdt[1] = 0x00AF9A000000FFFFull;	/* P, DPL0, code exec/read, L, G */
	pc->gdt[2] = 0x00CF92000000FFFFull;	/* P, DPL0, data read/write, G */
	/* 64-bit available TSS (type 9), split across two slots. */
	pc->gdt[3] = (limit & 0xFFFF) | ((base & 0xFFFFFF) << 16) |
		     (0x89ull << 40) | (((limit >> 16) & 0xF) << 48) |
		     (((base >> 24) & 0xFF) << 56);
	pc->gdt[4] = base >> 32;
}

void percpu_load(struct percpu *pc)
{
	struct desc_ptr p = { sizeof(pc->gdt) - 1, (uint64_t)pc->gdt };

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
		"xorl %%eax, %%eax\n\t"
		"movw %%ax, %%fs\n\t"
		"movw %%ax, %%gs\n\t"
		"movw %w3, %%ax\n\t"
		"ltr %%ax\n\t"
		: : "m"(p), "i"(SEL_KCODE), "i"(SEL_KDATA), "i"(SEL_TSS)
		: "rax", "memory");
	/* Loading GS zeroed the base: set it after. */
	wrmsr(MSR_GS_BASE, (uint64_t)pc);
}

static void init_area(struct percpu *pc, uint32_t cpu, uint32_t apic_id, uint32_t uid)
{
	memset(pc, 0, PERCPU_VARS_OFFSET);
	memcpy((char *)pc + PERCPU_VARS_OFFSET, __percpu_load, (size_t)(__percpu_end - __percpu_start));
	pc->self = pc;
	pc->cpu = cpu;
	pc->apic_id = apic_id;
	pc->acpi_uid = uid;
	build_gdt(pc);
	cpus[cpu] = pc;
	if (cpu + 1 > cpu_count)
		cpu_count = cpu + 1;
}

void percpu_init_boot(void)
{
	struct percpu *pc = (struct percpu *)boot_area;

	init_area(pc, 0, 0, 0);
	percpu_load(pc);
	pc->online = 1;
	cpus_online = 1;
}

/*
 * Give back an AP's area and stack that percpu_alloc() made, once its AP
 * did not start (smp_init(): sent INIT again, it cannot run them).
 */
#define AREA_PAGES	((area_bytes() + PAGE_SIZE - 1) / PAGE_SIZE)

void percpu_free(struct percpu *pc)
{

	if (cpus[pc->cpu] == pc)
		cpus[pc->cpu] = NULL;
	pmm_free(pc->kstack_top - KSTACK_SIZE, KSTACK_SIZE / PAGE_SIZE);
	pmm_free((uint64_t)(uintptr_t)pc, AREA_PAGES);
}

struct percpu *percpu_alloc(uint32_t cpu, uint32_t apic_id, uint32_t uid)
{
	uint64_t pages = AREA_PAGES;
	uint64_t area = pmm_alloc(pages, 1);
	uint64_t stack = pmm_alloc(KSTACK_SIZE / PAGE_SIZE, 1);
	struct percpu *pc;

	if (!area || !stack || cpu >= MAX_CPUS) {
		if (area)
			pmm_free(area, pages);
		if (stack)
			pmm_free(stack, KSTACK_SIZE / PAGE_SIZE);
		return NULL;
	}
	pc = (struct percpu *)(uintptr_t)area;
	init_area(pc, cpu, apic_id, uid);
	pc->kstack_top = stack + KSTACK_SIZE;
	return pc;
}
