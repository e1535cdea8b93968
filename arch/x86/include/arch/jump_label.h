/*
 * x86-64 static-key sites. Include <kernel/static_key.h>, not this.
 *
 * A site is one 5-byte instruction on the fall-through path:
 *
 *   disabled   0f 1f 44 00 00    nopl 0x0(%rax,%rax,1)   (one instruction)
 *   enabled    e9 r0 r1 r2 r3    jmp rel32, rel32 = target - (site + 5)
 *
 * and one __jump_table record { site, target, key } (struct jump_entry,
 * three absolute quadwords: the kernel is linked at its load address and
 * never moves, so absolute entries need no arithmetic to read, here or in
 * the host-side check of build/kernel.elf; 24 bytes a site).
 *
 * arch_static_branch() must be inlined with a constant key (the address of
 * a static struct static_key): the "i" constraint puts it in the table at
 * link time. The kernel builds with -O2; at -O0 this does not compile.
 */
#ifndef ARCH_JUMP_LABEL_H
#define ARCH_JUMP_LABEL_H

#ifndef KERNEL_STATIC_KEY_H
#error "include <kernel/static_key.h>"
#endif

#include <arch/text_poke.h>

#define JUMP_LABEL_LEN		5
#define JUMP_LABEL_NOP		0x0f, 0x1f, 0x44, 0x00, 0x00
#define JUMP_LABEL_OP_JMP32	0xe9

static __always_inline bool arch_static_branch(struct static_key *key)
{
	__asm__ goto("1: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"
		     ".pushsection __jump_table, \"a\"\n\t"
		     ".balign 8\n\t"
		     ".quad 1b, %l[l_yes], %c0\n\t"
		     ".popsection\n\t"
		     : : "i"(key) : : l_yes);
	return false;
l_yes:
	return true;
}

/*
 * Patch the n sites e[0..n-1] (all of one key) to their enabled or
 * disabled form while every CPU may run them; returns how many were
 * refused. Called by kernel/static_key.c under its lock, n <=
 * STATIC_KEY_BATCH.
 */
unsigned arch_jump_label_apply(const struct jump_entry *const *e, unsigned n, bool enabled);

/* May this CPU patch now? Says why not on the console if not. */
bool arch_jump_label_context_ok(void);

/*
 * One step of waiting for the key lock: the holder may be waiting for this
 * CPU to answer a code-change sync, and interrupts may be off here.
 */
static inline void arch_jump_label_wait(void)
{
	text_sync_answer();
	__asm__ __volatile__("pause" ::: "memory");
}

/* Breakpoints met at a static-key site being patched and emulated, since boot. */
uint64_t arch_jump_label_int3_hits(void);

#endif
