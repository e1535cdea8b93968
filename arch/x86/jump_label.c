/*
 * Static-key sites on x86-64: each key change hands its sites to the
 * live-patching engine (arch/x86/text_patch.c, whose invariants J1..J7
 * hold for them) as (site, old form, new form): NOP (0f 1f 44 00 00) and
 * jmp (e9 rel32 to the entry's target). A CPU meeting a site's int3 while
 * it changes goes on where the new form leads: the target when enabling,
 * site + 5 when disabling.
 *
 * Contract: arch_jump_label_apply() is called by one CPU at a time (the
 * key lock, kernel/static_key.c) in task context, interrupts on or off
 * (a CPU waiting for the key lock answers our syncs from its loop,
 * arch_jump_label_wait(); the patcher answers other patchers' syncs from
 * its own text_sync() wait).
 */
#include <stddef.h>
#include <arch/percpu.h>
#include <arch/text_poke.h>
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/static_key.h"

_Static_assert(sizeof(struct jump_entry) == 24, "arch_static_branch() emits three quadwords");
_Static_assert(JUMP_LABEL_LEN == TEXT_POKE_SITE_LEN, "a site is one engine site");
_Static_assert(JUMP_LABEL_OP_JMP32 == TEXT_OP_JMP32, "the engine resumes at a jmp's target");
_Static_assert(STATIC_KEY_BATCH <= TEXT_POKE_BATCH, "one key batch, one round of syncs");

static const uint8_t insn_nop[JUMP_LABEL_LEN] = { JUMP_LABEL_NOP };

/* The sites of the key being changed (the key lock serialises it). */
static struct text_poke_queue queue = { .who = "static_key", .report_max = ~0u };

uint64_t arch_jump_label_int3_hits(void)
{
	return __atomic_load_n(&queue.int3_hits, __ATOMIC_RELAXED);
}

/* The form of e's site when its key is enabled (jmp) or not (NOP). */
static bool insn_of(const struct jump_entry *e, bool enabled, uint8_t out[JUMP_LABEL_LEN])
{
	if (!enabled) {
		memcpy(out, insn_nop, JUMP_LABEL_LEN);
		return true;
	}
	return text_insn_rel32(JUMP_LABEL_OP_JMP32, e->code, e->target, out);
}

bool arch_jump_label_context_ok(void)
{
	struct percpu *pc = this_cpu();
	const char *why = NULL;

	/* The handler may have interrupted the key lock's holder on this very CPU. */
	if (pc->irq_depth || pc->nmi_depth)
		why = "in an interrupt or NMI handler";
	if (why)
		printk("static_key: cpu=%u asked to change a key %s; not changed\n", pc->cpu, why);
	return !why;
}

unsigned arch_jump_label_apply(const struct jump_entry *const *e, unsigned n, bool enabled)
{
	queue.refused = 0;
	for (unsigned i = 0; i < n && i < STATIC_KEY_BATCH; i++) {
		uint8_t old[JUMP_LABEL_LEN] = { 0 }, new[JUMP_LABEL_LEN] = { 0 };

		if (!insn_of(e[i], !enabled, old) || !insn_of(e[i], enabled, new))
			text_poke_refuse(&queue, e[i]->code, old);
		else
			text_poke_queue(&queue, e[i]->code, old, new);
	}
	text_poke_finish(&queue);
	return queue.refused;
}
