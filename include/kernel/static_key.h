/*
 * Static keys (jump labels): a branch whose disabled form is one NOP in the
 * instruction stream, for code that must cost nothing while it is off
 * (trace events). Enabling the key rewrites every use site into a jump to
 * the code the branch guards; disabling it rewrites them back.
 *
 *	static DEFINE_STATIC_KEY_FALSE(ev_key);
 *	...
 *	if (static_branch_unlikely(&ev_key))
 *		write_the_event();		(out of line; reached by the jump)
 *	...
 *	static_key_enable(&ev_key);		(every CPU takes the branch after this returns)
 *
 * Each use site is recorded in the __jump_table section (struct
 * jump_entry): where the site is, where its jump goes, which key it
 * belongs to. The instruction forms and the way they are changed while
 * other CPUs run belong to the architecture (<arch/jump_label.h>;
 * docs/static-keys.md has the design and the invariants).
 *
 * Contract:
 *   - a key is a zero-initialised struct static_key: disabled, every site
 *     in its disabled form (the build emits them so);
 *   - static_key_enable/disable/set run in task context (interrupts on
 *     or off), never in an interrupt or NMI handler; they return once
 *     every online CPU executes the new form; changes of all keys are
 *     serialised;
 *   - a site whose bytes are not the form the key's state says is refused,
 *     reported with one console line naming it, and left as it is;
 *   - static_branch_unlikely() may run anywhere, NMI handlers included,
 *     also while its key changes: a CPU then takes either path.
 */
#ifndef KERNEL_STATIC_KEY_H
#define KERNEL_STATIC_KEY_H

#include <stdbool.h>
#include <stdint.h>
#include "baretrace/compiler.h"

struct static_key {
	uint32_t enabled;	/* 0 or 1: the state last asked for; written under the key lock */
};

/* One use site. Absolute addresses: the kernel runs where it is linked. */
struct jump_entry {
	uint64_t code;		/* first byte of the site's instruction */
	uint64_t target;	/* where the site jumps while the key is enabled */
	uint64_t key;		/* the struct static_key the site belongs to */
};

#define STATIC_KEY_INIT_FALSE		{ .enabled = 0 }
#define DEFINE_STATIC_KEY_FALSE(name)	struct static_key name = STATIC_KEY_INIT_FALSE

/* Sites changed per round of cross-CPU synchronisation (the arch's batch). */
#define STATIC_KEY_BATCH	16

#include <arch/jump_label.h>

/* True while k is enabled; the disabled path costs one NOP. */
#define static_branch_unlikely(k)	arch_static_branch(k)

/*
 * Set k's state and patch every site of k; returns how many sites were
 * refused (their bytes were not the expected form), 0 when all were
 * patched or the state did not change.
 */
unsigned static_key_set(struct static_key *k, bool enabled);
void static_key_enable(struct static_key *k);
void static_key_disable(struct static_key *k);
bool static_key_is_enabled(const struct static_key *k);

/* Call fn(e, arg) for every site of k, in table order; returns how many. */
unsigned static_key_sites(const struct static_key *k,
			  void (*fn)(const struct jump_entry *e, void *arg), void *arg);

/* The whole table, for tests and tools. */
extern const struct jump_entry __start_jump_table[], __stop_jump_table[];

#endif
