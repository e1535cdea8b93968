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
 * a caller changing code that may run elsewhere follows the cross-
 * modifying protocol (arch/x86/jump_label.c) with text_sync().
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

#endif
