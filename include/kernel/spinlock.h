/*
 * A test-and-test-and-set spinlock with interrupts disabled while held.
 * Used only off the tracing fast path (console, allocator).
 */
#ifndef KERNEL_SPINLOCK_H
#define KERNEL_SPINLOCK_H

#include <stdint.h>
#include <arch/cpu.h>

struct spinlock {
	uint32_t locked;	/* 0 free, 1 held */
};

static inline uint64_t spin_lock_irqsave(struct spinlock *l)
{
	uint64_t flags = read_rflags();

	irq_disable();
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			cpu_relax();
	}
	return flags;
}

static inline void spin_unlock_irqrestore(struct spinlock *l, uint64_t flags)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
	if (flags & RFLAGS_IF)
		irq_enable();
}

#endif
