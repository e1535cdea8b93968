/*
 * Static keys, the generic half: each key's state, the lock that
 * serialises every change, and the walk over __jump_table that hands the
 * architecture the sites of one key in batches. How a site is rewritten
 * while other CPUs run it is the architecture's (arch_jump_label_apply()).
 *
 * The table is read-only and unsorted: a change walks all of it (a few
 * hundred entries at most), and nothing needs it in another order.
 *
 * Invariants (kept under key_lock):
 *   K1: between changes, every site of k that was not refused holds the
 *       form k->enabled says.
 *   K2: at most one change of any key is in progress, so the architecture
 *       has one batch at a time.
 */
#include <stddef.h>
#include "kernel/spinlock.h"
#include "kernel/static_key.h"

/*
 * The holder waits for every other CPU to answer a
 * cross-CPU sync, so a CPU waiting here (perhaps with interrupts off)
 * answers from its loop (arch_jump_label_wait()). The wait is bounded by
 * the holder's, whose every cross-CPU wait is bounded.
 */
static struct spinlock key_lock;

static void key_lock_take(void)
{
	spin_lock_waiting(&key_lock, arch_jump_label_wait);
}

static void key_lock_give(void)
{
	spin_unlock(&key_lock);
}

static bool entry_of(const struct jump_entry *e, const struct static_key *k)
{
	return e->key == (uint64_t)(uintptr_t)k;
}

unsigned static_key_set(struct static_key *k, bool enabled)
{
	const struct jump_entry *batch[STATIC_KEY_BATCH];
	unsigned n = 0, refused = 0;

	if (!arch_jump_label_context_ok())
		return static_key_sites(k, NULL, NULL);
	key_lock_take();
	if (k->enabled == (uint32_t)enabled) {
		key_lock_give();
		return 0;
	}
	for (const struct jump_entry *e = __start_jump_table; e < __stop_jump_table; e++) {
		if (!entry_of(e, k))
			continue;
		batch[n++] = e;
		if (n == STATIC_KEY_BATCH) {
			refused += arch_jump_label_apply(batch, n, enabled);
			n = 0;
		}
	}
	if (n)
		refused += arch_jump_label_apply(batch, n, enabled);
	/* K1 holds again: publish the state (pairs with static_key_is_enabled()). */
	__atomic_store_n(&k->enabled, enabled, __ATOMIC_RELEASE);
	key_lock_give();
	return refused;
}

void static_key_enable(struct static_key *k)
{
	static_key_set(k, true);
}

void static_key_disable(struct static_key *k)
{
	static_key_set(k, false);
}

bool static_key_is_enabled(const struct static_key *k)
{
	return __atomic_load_n(&k->enabled, __ATOMIC_ACQUIRE);
}

unsigned static_key_sites(const struct static_key *k,
			  void (*fn)(const struct jump_entry *e, void *arg), void *arg)
{
	unsigned n = 0;

	for (const struct jump_entry *e = __start_jump_table; e < __stop_jump_table; e++) {
		if (!entry_of(e, k))
			continue;
		if (fn)
			fn(e, arg);
		n++;
	}
	return n;
}
