/*
 * Read-modify-write instructions on words that only one CPU writes (its
 * own contexts, interrupts included): no LOCK prefix, since one instruction
 * cannot be split by an interrupt and no other CPU writes the word.  Most
 * are the ring buffer's arch hooks by name; xadd is wrapped by each user
 * (the host test shim injects an "interrupt" after it).  The host shim
 * includes this file too, so the tests run the kernel's own instructions.
 *
 * Freestanding and free of kernel state, unlike the rest of arch/x86.
 */
#ifndef ARCH_LOCAL_OPS_H
#define ARCH_LOCAL_OPS_H

#include <stdbool.h>
#include <stdint.h>

static inline uint64_t x86_local_xadd(uint64_t *p, uint64_t v)
{
	__asm__ __volatile__("xaddq %0, %1" : "+r"(v), "+m"(*p) : : "memory");
	return v;
}

static inline uint64_t arch_local_cmpxchg(uint64_t *p, uint64_t old, uint64_t new)
{
	__asm__ __volatile__("cmpxchgq %2, %1" : "+a"(old), "+m"(*p) : "r"(new) : "memory", "cc");
	return old;
}

static inline void arch_local_add32(uint32_t *p, uint32_t v)
{
	__asm__ __volatile__("addl %1, %0" : "+m"(*p) : "ir"(v) : "memory", "cc");
}

/*
 * or32 and sub32_zero take v as 64 bits, of which the instruction uses the
 * low 32 (%k): the ring buffer's level bit lives in a 64-bit register for
 * its guard compare, and a 32-bit operand would make the compiler keep a
 * second copy of it.
 */
static inline void arch_local_or32(uint32_t *p, uint64_t v)
{
	__asm__ __volatile__("orl %k1, %0" : "+m"(*p) : "ir"(v) : "memory", "cc");
}

static inline void arch_local_and32(uint32_t *p, uint32_t v)
{
	__asm__ __volatile__("andl %1, %0" : "+m"(*p) : "ir"(v) : "memory", "cc");
}

/* *p -= v; true iff *p is now zero (the subl's own zero flag). */
static inline bool arch_local_sub32_zero(uint32_t *p, uint64_t v)
{
	bool zero;

	__asm__ __volatile__("subl %k2, %0" : "+m"(*p), "=@ccz"(zero) : "ir"(v) : "memory");
	return zero;
}

/*
 * A stamp's halves (lo, hi from rdtsc) minus *base in memory: subtract and
 * subtract-with-borrow, whose high result is zero exactly when the 64-bit
 * difference fits 32 bits.  True with the difference in *delta then.
 * *base is read as two halves: a caller must reject a result taken while
 * *base changed (the ring buffer's write-word check does).
 */
static inline bool x86_tsc_since(uint64_t lo, uint32_t hi, const uint64_t *base,
				 uint32_t *delta)
{
	typedef uint32_t __attribute__((may_alias)) u32_alias;
	const u32_alias *b = (const u32_alias *)base;
	uint64_t d = (uint32_t)lo;	/* a 64-bit register: subl leaves its top half 0 */
	bool fits;

	__asm__("subl %3, %k0\n\tsbbl %4, %1"
		: "+r"(d), "+r"(hi), "=@ccz"(fits)
		: "m"(b[0]), "m"(b[1]));
	/* Said to the compiler, so that widening *delta costs nothing. */
	if (d > UINT32_MAX)
		__builtin_unreachable();
	*delta = (uint32_t)d;
	return fits;
}

#endif
