/*
 * Changing kernel code. From text_poke_init() on, the kernel's .text is
 * read-only in the page tables; text_poke() writes through a temporary
 * writable alias, text_sync() makes every CPU drop what it may have
 * fetched before. See arch/x86/text_poke.c.
 */
#ifndef ARCH_TEXT_POKE_H
#define ARCH_TEXT_POKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TEXT_POKE_MAX	16		/* bytes per text_poke() */
#define VEC_TEXT_SYNC	0xF2		/* next to VEC_CALL, VEC_TEST (arch/lapic.h) */

/*
 * Boot CPU, after the page allocator and the local APIC, before any AP
 * starts: make .text read-only, set up the alias window and the sync IPI.
 * Until then (and if it fails) text_poke() writes .text directly.
 */
void text_poke_init(void);

/*
 * Copy len <= TEXT_POKE_MAX bytes from src into kernel code at addr, in
 * ascending order, one byte store each; returns false (nothing written) if
 * [addr, addr+len) is not inside .text. Other CPUs are not synchronised:
 * a caller changing code that may run elsewhere queues it for
 * text_poke_finish() instead.
 */
bool text_poke(void *addr, const void *src, size_t len);

/*
 * Every other online CPU takes an IPI, executes a serialising instruction
 * and says so; the caller serialises too. Returns when all have, or false
 * after TEXT_SYNC_TIMEOUT_MS on a CPU that did not (reported). Callers are
 * serialised by their own lock; task context, interrupts on or off.
 */
bool text_sync(void);

/*
 * For a CPU spinning with interrupts off on a lock a caller of text_sync()
 * may hold: answer a sync asked of this CPU, as the IPI would.
 */
void text_sync_answer(void);

/*
 * Syncs asked for since boot (every CPU's text_sync() calls), and CPUs a
 * sync stopped waiting for (each one printed): for tests.
 */
uint64_t text_sync_asked(void);
uint64_t text_sync_expired(void);

/* Is [addr, addr+len) inside the kernel's .text? Is .text read-only? */
bool text_contains(const void *addr, size_t len);
bool text_protected(void);

/*
 * Live patching (arch/x86/text_patch.c): one engine for every 5-byte site
 * that CPUs may run while it changes (static keys, function tracer sites).
 * A caller fills its own queue with (address, old form, new form), then
 * text_poke_finish() rewrites the whole batch with the int3 sequence; a
 * CPU meeting a site's int3 meanwhile goes on where the new form leads
 * (a call is skipped, as the NOP would).
 */
#define TEXT_POKE_SITE_LEN	5	/* every live-patched site is one 5-byte instruction */
#define TEXT_POKE_BATCH		256	/* sites per round of syncs */
#define TEXT_OP_JMP32		0xe9	/* jmp rel32 */
#define TEXT_OP_CALL32		0xe8	/* call rel32 */

struct text_poke_site {
	uint64_t addr;				/* the site's first byte */
	uint64_t resume;			/* where a CPU meeting its int3 goes on */
	uint8_t insn[TEXT_POKE_SITE_LEN];	/* the new form */
};

/*
 * One caller's batch. Static storage, owned by one caller at a time (its
 * own lock serialises it); the caller sets who and report_max, and zeroes
 * refused when it starts counting.
 */
struct text_poke_queue {
	const char *who;		/* prefix of the console line naming a refused site */
	unsigned report_max;		/* refused sites named while refused < this; the rest counted */
	unsigned refused;		/* sites refused since the caller zeroed it */
	uint32_t n;			/* sites queued, 0..TEXT_POKE_BATCH */
	uint32_t refs;			/* 0: not live; else 1 + handlers reading it (J7) */
	uint64_t int3_hits;		/* breakpoints met on its sites and emulated, since boot */
	struct text_poke_site site[TEXT_POKE_BATCH];	/* ascending once live */
};

/*
 * Queue the site at addr to go from old to new. It is queued only if its
 * bytes are exactly old (J5); otherwise it is refused: counted, named on the
 * console while under report_max, and never written. A full queue is
 * finished first. Returns whether the site was queued.
 */
bool text_poke_queue(struct text_poke_queue *q, uint64_t addr,
		     const uint8_t old[TEXT_POKE_SITE_LEN], const uint8_t new[TEXT_POKE_SITE_LEN]);

/* Refuse addr as text_poke_queue() does, wanting old: for a site whose forms cannot be made. */
void text_poke_refuse(struct text_poke_queue *q, uint64_t addr,
		      const uint8_t old[TEXT_POKE_SITE_LEN]);

/*
 * Rewrite every queued site to its new form while any CPU may run it, and
 * empty the queue. Task context, interrupts on or off; at most
 * TEXT_POKE_LIVE queues are finished at once, and two queues live at once
 * hold no common site (their owners' sites are disjoint).
 */
void text_poke_finish(struct text_poke_queue *q);

/* The form `op rel32` at site reaching target; false if target is out of reach. */
bool text_insn_rel32(uint8_t op, uint64_t site, uint64_t target,
		     uint8_t out[TEXT_POKE_SITE_LEN]);

#endif
