/*
 * The kernel's one spinlock: test-and-test-and-set, off the tracing fast
 * path (console, allocator, static keys, the tracers' setters, the warp
 * test). Every lock in the kernel is this type; they differ only in what a
 * waiter does between looks and in what happens to interrupts:
 *
 *   spin_lock()           waits with pause; interrupts as they were
 *   spin_lock_waiting()   waits calling wait() between looks: a lock whose
 *                         holder waits for every CPU to answer a cross-CPU
 *                         sync (text_sync()) must be waited for answering
 *                         them, or holder and waiter wait for each other
 *   spin_trylock()        one attempt, for a caller that must not wait
 *   spin_lock_irqsave()   interrupts off while held (the console: printk
 *                         from an interrupt must not meet its own CPU's lock)
 *
 * A waiter is bounded by the holder: each lock's owner keeps its critical
 * section bounded (see the lock's definition).
 */
#ifndef KERNEL_SPINLOCK_H
#define KERNEL_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <arch/cpu.h>

struct spinlock {
	uint32_t locked;	/* 0 free, 1 held */
};

/* One attempt: true if the lock is now ours (acquire). */
static inline bool spin_trylock(struct spinlock *l)
{
	return !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}

/*
 * Take l, calling wait() between looks while another CPU holds it (only
 * reads while waiting, so the line stays shared until it is released).
 */
static inline void spin_lock_waiting(struct spinlock *l, void (*wait)(void))
{
	while (!spin_trylock(l))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			wait();
}

static inline void spin_lock(struct spinlock *l)
{
	spin_lock_waiting(l, cpu_relax);
}

/* Release; pairs with the acquire of the next spin_trylock(). */
static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

static inline uint64_t spin_lock_irqsave(struct spinlock *l)
{
	uint64_t flags = read_rflags();

	irq_disable();
	spin_lock(l);
	return flags;
}

static inline void spin_unlock_irqrestore(struct spinlock *l, uint64_t flags)
{
	spin_unlock(l);
	if (flags & RFLAGS_IF)
		irq_enable();
}

#endif
