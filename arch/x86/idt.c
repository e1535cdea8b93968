/*
 * IDT: all 256 vectors point at the stubs in isr.asm, which call
 * trap_dispatch() (traps.c). The double fault, NMI and machine check run on
 * stacks of their own (IST entries of the per-CPU TSS).
 */
#include <stddef.h>
#include <stdint.h>
#include "baretrace/compiler.h"
#include <arch/percpu.h>
#include <arch/trap.h>

#define SEL_KCODE	0x08
#define GATE_INTR	0x8E	/* present, DPL0, 64-bit interrupt gate */

struct idt_gate {
	uint16_t off_lo;	/* handler bits 0..15 */
	uint16_t sel;		/* code segment selector */
	uint8_t ist;		/* interrupt stack table index, 0 = none */
	uint8_t type;		/* gate type and present bit */
	uint16_t off_mid;	/* handler bits 16..31 */
	uint32_t off_hi;	/* handler bits 32..63 */
	uint32_t zero;
} __packed;

_Static_assert(sizeof(struct idt_gate) == 16, "IDT gate is 16 bytes");

struct desc_ptr {
	uint16_t limit;
	uint64_t base;
} __packed;

extern const uint64_t isr_stub_table[256];

static struct idt_gate idt[256] __aligned(16);

static void set_gate(unsigned v, uint64_t addr, uint8_t ist)
{
	idt[v].off_lo = addr & 0xFFFF;
	idt[v].sel = SEL_KCODE;
	idt[v].ist = ist;
	idt[v].type = GATE_INTR;
	idt[v].off_mid = (addr >> 16) & 0xFFFF;
	idt[v].off_hi = addr >> 32;
	idt[v].zero = 0;
}

void idt_load(void)
{
	struct desc_ptr p = { sizeof(idt) - 1, (uint64_t)idt };

	__asm__ __volatile__("lidt %0" : : "m"(p) : "memory");
}

void idt_init(void)
{
	for (unsigned v = 0; v < 256; v++)
		set_gate(v, isr_stub_table[v], 0);
	idt[VEC_NMI].ist = 1;
	idt[VEC_DF].ist = 2;
	idt[VEC_MC].ist = 3;
	idt_load();
}
