/*
 * Static-key sites on x86-64: rewriting a 5-byte instruction that other
 * CPUs may be executing, with the int3 sequence (method (b); Intel SDM
 * vol. 3A 8.1.3 allows a cross-modifying write of one byte and asks for a
 * serialising instruction on every CPU before the changed code runs).
 *
 * Contract: arch_jump_label_apply() is called by one CPU at a time (the
 * key lock, kernel/static_key.c) in task context, interrupts on or off
 * (a CPU waiting for the key lock answers our syncs from its loop,
 * arch_jump_label_wait(); the patcher answers other patchers' syncs from
 * its own text_sync() wait).
 * Any CPU may run any site at any moment, from task, IRQ or NMI context,
 * the patching CPU included (its own NMIs, or a site in code it calls).
 *
 * Glossary:
 *   site    the 5 bytes a struct jump_entry names (arch/jump_label.h)
 *   old     the form the site holds now: NOP (0f 1f 44 00 00) or JMP
 *           (e9 rel32 to the entry's target)
 *   new     the other form
 *   live    the batch being patched: each site's address, new form, and
 *           where a CPU that meets its int3 goes on (resume)
 *   sync    text_sync(): every CPU serialises after our stores (S1)
 *
 * One site through the sequence (a batch does each step for all its sites,
 * then one sync):
 *
 *          byte 0   bytes 1..4    a CPU fetching the site executes
 *   start  o0       o1 o2 o3 o4   old
 *   (1)    cc       o1 o2 o3 o4   int3 -> on_int3() -> resume     sync
 *   (2)    cc       n1 n2 n3 n4   int3 -> on_int3() -> resume     sync
 *   (3)    n0       n1 n2 n3 n4   new                             sync
 *   (4)    n0       n1 n2 n3 n4   new (byte 0 stored again, J6)   sync
 *
 * A CPU meeting the int3 continues where new would take it: the target
 * when enabling, site + 5 when disabling; old or new is what every CPU
 * executes otherwise. resume is never inside the site, and RIP is never
 * at site + 1..4 (no instruction boundary there in either form), so no
 * CPU can execute a mix of old and new bytes.
 *
 * Invariants:
 *   J1: while a site holds int3, it is in live (live.n is published with
 *       release before the first int3 is written, and cleared only after
 *       the sync that follows the last byte-0 write).
 *   J2: bytes 1..4 change only while byte 0 is int3 on every CPU (after
 *       the sync of step 1, S1): no CPU decodes them as part of old.
 *   J3: byte 0 becomes new only after every CPU has serialised after
 *       bytes 1..4 changed (sync of step 2): a CPU that sees n0 sees n1..n4.
 *   J4: when live.n goes back to 0 no CPU is in on_int3() for this batch,
 *       and none can enter it: the handler runs with interrupts off (an
 *       interrupt gate, or inside an NMI), so a CPU in it answers the last
 *       sync only after leaving it, and after that sync no CPU sees int3
 *       (J3, and J6 under emulation).
 *   J5: only sites whose bytes are exactly old are written; any other site
 *       is refused with one console line and left untouched.
 *   J6: no CPU goes on executing a translation of the site made from bytes
 *       read before a store of the sequence. Hardware needs nothing for
 *       this beyond the syncs. QEMU's multi-threaded TCG does: a vCPU that
 *       translates a block while another stores into it can link the
 *       translation after the store's invalidation ran, and keep it
 *       (seen here: a block holding the int3 of step 1 still run after
 *       step 3, forever). Such a translation is linked by the time its
 *       vCPU answers the next sync (TCG finishes a translation before it
 *       takes an interrupt). So a stale block from step 1 is invalidated by
 *       the stores of step 2 (it overlaps bytes 1..4), one from step 2
 *       cannot exist (byte 0 is int3, which ends a block), and one from
 *       step 3 by the store of step 4, which rewrites byte 0 with the value
 *       it already holds; a translation racing with that store reads the
 *       final bytes, so nothing is left stale. On hardware step 4 costs one
 *       store and one sync per batch.
 *
 * NMIs. Nothing is held: no CPU waits for the patcher except through
 * interrupts it takes when it can, so an NMI on any CPU, the patching one
 * included, at any point of the sequence, just runs: a site it meets is
 * old, int3 or new, all handled above. A CPU inside an NMI answers the
 * sync IPI after the NMI ends (bounded by the NMI handler). The int3 taken
 * inside an NMI handler returns without iretq (isr.asm's no-iret path),
 * which would end the CPU's NMI blocking early and let the next NMI nest
 * on the same IST stack.
 *
 * The breakpoint vector is taken over again at every batch: a test may
 * install its own int3 handler for a moment (kernel/ktests_boot.c).
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/ftrace.h>
#include <arch/percpu.h>
#include <arch/text_poke.h>
#include <arch/trap.h>
#include "kernel/console.h"
#include "kernel/ksyms.h"
#include "kernel/kstring.h"
#include "kernel/static_key.h"

#define VEC_BP		3
#define OP_INT3		0xcc

_Static_assert(sizeof(struct jump_entry) == 24, "arch_static_branch() emits three quadwords");

static const uint8_t insn_nop[JUMP_LABEL_LEN] = { JUMP_LABEL_NOP };

struct poke {
	uint64_t addr;			/* the site */
	uint64_t resume;		/* where a CPU meeting its int3 goes on */
	uint8_t insn[JUMP_LABEL_LEN];	/* the new form */
};

/* The batch being patched (J1); written only while n == 0. */
static struct {
	struct poke site[STATIC_KEY_BATCH];	/* live sites */
	uint32_t n;				/* how many; 0 = no patch in progress */
} live;

static uint64_t int3_hits;	/* emulated breakpoints, all CPUs */

uint64_t arch_jump_label_int3_hits(void)
{
	return __atomic_load_n(&int3_hits, __ATOMIC_RELAXED);
}

/* The form of e's site when its key is enabled (jmp) or not (NOP). */
static bool insn_of(const struct jump_entry *e, bool enabled, uint8_t out[JUMP_LABEL_LEN])
{
	int64_t rel = (int64_t)(e->target - (e->code + JUMP_LABEL_LEN));
	int32_t rel32 = (int32_t)rel;

	if (!enabled) {
		memcpy(out, insn_nop, JUMP_LABEL_LEN);
		return true;
	}
	if (rel != rel32)
		return false;
	out[0] = JUMP_LABEL_OP_JMP32;
	memcpy(out + 1, &rel32, 4);
	return true;
}

/* A CPU met the int3 of a live site: go on where the new form leads. */
bool arch_jump_label_int3(struct trap_frame *f)
{
	uint64_t at = f->rip - 1;	/* int3 is a trap: rip is past it */
	uint32_t n = __atomic_load_n(&live.n, __ATOMIC_ACQUIRE);	/* pairs with the release in apply */

	for (uint32_t i = 0; i < n; i++) {
		if (live.site[i].addr == at) {
			f->rip = live.site[i].resume;
			__atomic_fetch_add(&int3_hits, 1, __ATOMIC_RELAXED);
			return true;
		}
	}
	return false;
}

/* The vector while we patch: our sites, the function tracer's (patched meanwhile), or a bug. */
static void on_int3(struct trap_frame *f)
{
	if (arch_jump_label_int3(f) || arch_ftrace_int3(f))
		return;
	trap_fatal(f, "breakpoint that is no static-key site being patched");
}

static void report_refused(const struct jump_entry *e, const uint8_t *have, const uint8_t *want)
{
	uint64_t off = 0;
	const char *fn = ksym_lookup(e->code, &off);

	printk("static_key: site 0x%llx (%s+0x%llx) holds %02x %02x %02x %02x %02x, not "
	       "%02x %02x %02x %02x %02x; refused, left as it is\n",
	       (unsigned long long)e->code, fn ? fn : "?", (unsigned long long)off,
	       have[0], have[1], have[2], have[3], have[4],
	       want[0], want[1], want[2], want[3], want[4]);
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
	uint8_t int3 = OP_INT3;
	unsigned refused = 0, m = 0;

	for (unsigned i = 0; i < n && i < STATIC_KEY_BATCH; i++) {
		uint8_t have[JUMP_LABEL_LEN] = { 0 }, want[JUMP_LABEL_LEN] = { 0 };
		const void *code = (const void *)(uintptr_t)e[i]->code;
		struct poke *p = &live.site[m];
		bool inside = text_contains(code, JUMP_LABEL_LEN);

		if (inside)
			memcpy(have, code, JUMP_LABEL_LEN);
		if (!inside || !insn_of(e[i], !enabled, want) || !insn_of(e[i], enabled, p->insn) ||
		    memcmp(have, want, JUMP_LABEL_LEN)) {
			report_refused(e[i], have, want);	/* J5 */
			refused++;
			continue;
		}
		p->addr = e[i]->code;
		p->resume = enabled ? e[i]->target : e[i]->code + JUMP_LABEL_LEN;
		m++;
	}
	if (!m)
		return refused;

	trap_set_handler(VEC_BP, on_int3);
	__atomic_store_n(&live.n, m, __ATOMIC_RELEASE);	/* J1: before any int3 */
	for (unsigned i = 0; i < m; i++)			/* (1) */
		text_poke((void *)(uintptr_t)live.site[i].addr, &int3, 1);
	text_sync();
	for (unsigned i = 0; i < m; i++)			/* (2), J2 */
		text_poke((void *)(uintptr_t)(live.site[i].addr + 1), live.site[i].insn + 1,
			  JUMP_LABEL_LEN - 1);
	text_sync();
	for (unsigned i = 0; i < m; i++)			/* (3), J3 */
		text_poke((void *)(uintptr_t)live.site[i].addr, live.site[i].insn, 1);
	text_sync();
	for (unsigned i = 0; i < m; i++)			/* (4), J6 */
		text_poke((void *)(uintptr_t)live.site[i].addr, live.site[i].insn, 1);
	text_sync();
	__atomic_store_n(&live.n, 0, __ATOMIC_RELEASE);	/* J4 */
	return refused;
}
