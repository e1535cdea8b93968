/*
 * IDT: all 256 vectors point at the stubs in isr.asm; trap_dispatch() sends
 * each to its registered handler. Exceptions without a handler are fatal:
 * they print the register dump (traps.c) and leave QEMU with failure.
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
static trap_handler_t handlers[256];

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

trap_handler_t trap_get_handler(unsigned vector)
{
	return vector < 256 ? handlers[vector] : NULL;
}

void trap_set_handler(unsigned vector, trap_handler_t h)
{
	if (vector < 256)
		handlers[vector] = h;
}

void trap_dispatch(struct trap_frame *f);

/*
 * The one entry for every vector. It keeps the per-CPU nesting depths that
 * tracing uses to tell which context a writer runs in (task, IRQ, NMI),
 * and is the place to instrument interrupt entry and exit.
 */
void trap_dispatch(struct trap_frame *f)
{
	trap_handler_t h = f->vector < 256 ? handlers[f->vector] : 0;
	struct percpu *pc = this_cpu();

	if (h) {
		struct trace_ctx saved = pc->trace;

		if (f->vector == VEC_NMI) {
			pc->nmi_depth++;
			pc->nmi_count++;
			pc->trace = trace_ctx_of(TRACE_LEVEL_NMI);
			h(f);
			pc->trace = saved;
			pc->nmi_depth--;
		} else if (f->vector >= VEC_FIRST_IRQ) {
			pc->irq_depth++;
			pc->irq_count++;
			pc->trace = trace_ctx_of(TRACE_LEVEL_IRQ);
			h(f);
			pc->trace = saved;
			pc->irq_depth--;
		} else {
			h(f);
		}
		return;
	}
	if (f->vector < VEC_FIRST_IRQ)
		trap_fatal(f, "unhandled exception");
	trap_fatal(f, "unexpected interrupt");
}
