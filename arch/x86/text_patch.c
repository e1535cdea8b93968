/*
 * The live-patching engine: rewriting 5-byte instructions that other CPUs
 * may be executing, with the int3 sequence (method (b); Intel SDM vol. 3A
 * 8.1.3 allows a cross-modifying write of one byte and asks for a
 * serialising instruction on every CPU before the changed code runs). Its
 * users queue sites into it: static keys (arch/x86/jump_label.c: NOP and
 * jmp) and the function tracer (arch/x86/ftrace.c: NOP and call), as
 * Linux's users queue into text_poke_queue()/text_poke_finish().
 *
 * Contract: a queue is filled and finished by one CPU at a time (its
 * owner's lock: the static-key lock, the tracer's lock) in task context,
 * interrupts on or off. Two owners may finish at once on two CPUs: their
 * batches hold different sites, each sync answers both (text_sync() only
 * waits for CPUs to serialise, and a CPU waiting in text_sync() or on an
 * owner's lock answers syncs from its loop), and the breakpoint handler
 * looks in every live batch. Any CPU may run any site at any moment, from
 * task, IRQ or NMI context, the patching CPU included (its own NMIs, or a
 * site in code it calls).
 *
 * Glossary:
 *   site    5 bytes holding one instruction: the old form or the new form
 *   old     the form the site holds when queued (checked, J5)
 *   new     the form it holds when the batch is finished
 *   resume  where a CPU meeting the site's int3 goes on: the jmp's target
 *           if new is a jmp, else site + 5 (new's effect for a NOP; a call,
 *           old's or new's, is skipped: a call that starts tracing is just
 *           not traced yet, one that stops it is already not)
 *   live    a batch being patched: published in live[] for the handler
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
 * resume is never inside the site, and RIP is never at site + 1..4 (no
 * instruction boundary there in either form), so no CPU can execute a mix
 * of old and new bytes.
 *
 * Invariants:
 *   J1: while a site holds int3, its batch is live (published with release
 *       before the first int3 is written, withdrawn only after the sync
 *       that follows the last byte-0 write).
 *   J2: bytes 1..4 change only while byte 0 is int3 on every CPU (after
 *       the sync of step 1, S1): no CPU decodes them as part of old.
 *   J3: byte 0 becomes new only after every CPU has serialised after
 *       bytes 1..4 changed (sync of step 2): a CPU that sees n0 sees n1..n4.
 *   J4: when the batch is withdrawn no CPU needs it: a CPU that met one of
 *       its int3s was in on_int3() with interrupts off (an interrupt gate,
 *       or inside an NMI), so it answers the last sync only after leaving,
 *       and after that sync no CPU sees int3 (J3, and J6 under emulation).
 *   J5: only sites whose bytes are exactly old are written; any other site
 *       is refused (counted, named on the console) and left untouched.
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
 *   J7: a queue is refilled only when no handler reads it: the handler
 *       holds a reference (q->refs, taken only while non-zero) while it
 *       searches a batch, and the finish withdraws the batch, drops its own
 *       reference and waits for zero. (A CPU meeting another batch's int3
 *       may be searching ours after it answered our last sync: J4 does not
 *       cover it.)
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
 *
 * Never traced (Makefile): the engine's own calls must not be sites.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/text_poke.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include "kernel/console.h"
#include "kernel/ksyms.h"
#include "kernel/kstring.h"

#define VEC_BP			3
#define OP_INT3			0xcc
#define TEXT_POKE_LIVE		4	/* batches live at once (one per owner: two today) */
#define REFS_TIMEOUT_MS		10000	/* a handler's search is short: this is a bug's bound */

/* The batches being patched (J1); a slot is claimed with a CAS from NULL. */
static struct text_poke_queue *live[TEXT_POKE_LIVE];

bool text_insn_rel32(uint8_t op, uint64_t site, uint64_t target,
		     uint8_t out[TEXT_POKE_SITE_LEN])
{
	int64_t rel = (int64_t)(target - (site + TEXT_POKE_SITE_LEN));
	int32_t rel32 = (int32_t)rel;

	if (rel != rel32)
		return false;
	out[0] = op;
	memcpy(out + 1, &rel32, 4);
	return true;
}

/* Where a CPU meeting the int3 of a site going to insn goes on (glossary: resume). */
static uint64_t resume_of(uint64_t addr, const uint8_t insn[TEXT_POKE_SITE_LEN])
{
	int32_t rel32;

	if (insn[0] != TEXT_OP_JMP32)
		return addr + TEXT_POKE_SITE_LEN;
	memcpy(&rel32, insn + 1, 4);
	return addr + TEXT_POKE_SITE_LEN + (uint64_t)(int64_t)rel32;
}

/* J7: a reference to q if q is live; pairs with the release in text_poke_finish(). */
static bool get_live(struct text_poke_queue *q)
{
	uint32_t r = __atomic_load_n(&q->refs, __ATOMIC_RELAXED);

	while (r)
		if (__atomic_compare_exchange_n(&q->refs, &r, r + 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
	return false;
}

static void put_live(struct text_poke_queue *q)
{
	__atomic_fetch_sub(&q->refs, 1, __ATOMIC_RELEASE);	/* pairs with the wait in text_poke_finish() */
}

/* The live site of q at addr, or NULL (q->site is ascending while live). */
static const struct text_poke_site *find(const struct text_poke_queue *q, uint64_t addr)
{
	uint32_t lo = 0, hi = q->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (q->site[mid].addr == addr)
			return &q->site[mid];
		if (q->site[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The breakpoint vector while a batch is live: a live site's int3, or a bug. */
static void on_int3(struct trap_frame *f)
{
	uint64_t at = f->rip - 1;	/* int3 is a trap: rip is past it */

	for (unsigned i = 0; i < TEXT_POKE_LIVE; i++) {
		/* Pairs with the release in text_poke_finish() (J1). */
		struct text_poke_queue *q = __atomic_load_n(&live[i], __ATOMIC_ACQUIRE);
		const struct text_poke_site *s;

		if (!q || !get_live(q))
			continue;
		s = find(q, at);
		if (s) {
			f->rip = s->resume;
			__atomic_fetch_add(&q->int3_hits, 1, __ATOMIC_RELAXED);
		}
		put_live(q);
		if (s)
			return;
	}
	trap_fatal(f, "breakpoint that is no code site being patched");
}

static void report_refused(const struct text_poke_queue *q, uint64_t addr,
			   const uint8_t *want)
{
	uint8_t have[TEXT_POKE_SITE_LEN] = { 0 };
	uint64_t off = 0;
	const char *fn = ksym_lookup(addr, &off);

	if (text_contains((const void *)(uintptr_t)addr, TEXT_POKE_SITE_LEN))
		memcpy(have, (const void *)(uintptr_t)addr, TEXT_POKE_SITE_LEN);
	printk("%s: site 0x%llx (%s+0x%llx) holds %02x %02x %02x %02x %02x, not "
	       "%02x %02x %02x %02x %02x; refused, left as it is\n", q->who,
	       (unsigned long long)addr, fn ? fn : "?", (unsigned long long)off,
	       have[0], have[1], have[2], have[3], have[4],
	       want[0], want[1], want[2], want[3], want[4]);
}

void text_poke_refuse(struct text_poke_queue *q, uint64_t addr,
		      const uint8_t old[TEXT_POKE_SITE_LEN])
{
	if (q->refused++ < q->report_max)	/* J5 */
		report_refused(q, addr, old);
}

bool text_poke_queue(struct text_poke_queue *q, uint64_t addr,
		     const uint8_t old[TEXT_POKE_SITE_LEN], const uint8_t new[TEXT_POKE_SITE_LEN])
{
	const void *code = (const void *)(uintptr_t)addr;
	struct text_poke_site *s;

	if (!text_contains(code, TEXT_POKE_SITE_LEN) || memcmp(code, old, TEXT_POKE_SITE_LEN)) {
		text_poke_refuse(q, addr, old);
		return false;
	}
	if (q->n == TEXT_POKE_BATCH)
		text_poke_finish(q);
	s = &q->site[q->n++];
	s->addr = addr;
	s->resume = resume_of(addr, new);
	memcpy(s->insn, new, TEXT_POKE_SITE_LEN);
	return true;
}

/* Ascending by address for find(); callers queue in order or nearly (insertion sort). */
static void sort_sites(struct text_poke_queue *q)
{
	for (uint32_t i = 1; i < q->n; i++) {
		struct text_poke_site s = q->site[i];
		uint32_t j = i;

		for (; j > 0 && q->site[j - 1].addr > s.addr; j--)
			q->site[j] = q->site[j - 1];
		q->site[j] = s;
	}
}

/* A free slot of live[] for q, published with release (J1). */
static unsigned go_live(struct text_poke_queue *q)
{
	/* Bounded by the other owners' batches: at most TEXT_POKE_LIVE owners exist. */
	for (;;) {
		for (unsigned i = 0; i < TEXT_POKE_LIVE; i++) {
			struct text_poke_queue *none = NULL;

			if (__atomic_compare_exchange_n(&live[i], &none, q, false,
							__ATOMIC_RELEASE, __ATOMIC_RELAXED))
				return i;
		}
		text_sync_answer();	/* the holders may wait for us */
		cpu_relax();
	}
}

void text_poke_finish(struct text_poke_queue *q)
{
	uint8_t int3 = OP_INT3;
	uint32_t m = q->n;
	uint64_t t0, lim;
	unsigned slot;

	if (!m)
		return;
	sort_sites(q);
	trap_set_handler(VEC_BP, on_int3);
	__atomic_store_n(&q->refs, 1, __ATOMIC_RELEASE);	/* J7: the sites, before a handler's ref */
	slot = go_live(q);					/* J1: before any int3 */
	for (uint32_t i = 0; i < m; i++)			/* (1) */
		text_poke((void *)(uintptr_t)q->site[i].addr, &int3, 1);
	text_sync();
	for (uint32_t i = 0; i < m; i++)			/* (2), J2 */
		text_poke((void *)(uintptr_t)(q->site[i].addr + 1), q->site[i].insn + 1,
			  TEXT_POKE_SITE_LEN - 1);
	text_sync();
	for (uint32_t i = 0; i < m; i++)			/* (3), J3 */
		text_poke((void *)(uintptr_t)q->site[i].addr, q->site[i].insn, 1);
	text_sync();
	for (uint32_t i = 0; i < m; i++)			/* (4), J6 */
		text_poke((void *)(uintptr_t)q->site[i].addr, q->site[i].insn, 1);
	text_sync();
	__atomic_store_n(&live[slot], NULL, __ATOMIC_RELEASE);	/* J4 */
	put_live(q);
	t0 = rdtsc();
	lim = (tsc.hz ? tsc.hz : 3000000000ull) / 1000 * REFS_TIMEOUT_MS;
	/* J7; pairs with the release in put_live(). */
	while (__atomic_load_n(&q->refs, __ATOMIC_ACQUIRE)) {
		if (rdtsc() - t0 > lim) {
			printk("text: a breakpoint handler held a patch batch for %u ms; "
			       "refilling it anyway\n", REFS_TIMEOUT_MS);
			break;
		}
		cpu_relax();
	}
	q->n = 0;
}
