/*
 * Function tracer sites on x86-64: the instruction forms and the live
 * patcher (arch/x86/ftrace.c, queueing into arch/x86/text_patch.c), and
 * the trampolines (arch/x86/ftrace_entry.asm).
 *
 * A site is the 5 bytes at a traced function's entry: as GCC emits it
 * (-fpatchable-function-entry=5: five 1-byte NOPs, 90 x 5), until the boot
 * makes it the one 5-byte NOP (0f 1f 44 00 00, the same NOP as a disabled
 * static key: one instruction, not five); then that NOP or `call rel32`
 * (e8) to a trampoline.
 */
#ifndef ARCH_FTRACE_H
#define ARCH_FTRACE_H

#include <stdbool.h>
#include <stdint.h>

#define FTRACE_SITE_LEN		5
#define FTRACE_SITE_NOP		0x0f, 0x1f, 0x44, 0x00, 0x00
#define FTRACE_SITE_BUILD	0x90, 0x90, 0x90, 0x90, 0x90	/* as GCC emits it */
#define FTRACE_OP_CALL32	0xe8

/*
 * The trampolines: a site's call target (function's, function_graph's; the
 * C path's end), and where a taken-over return lands.
 */
extern char ftrace_caller[], ftrace_graph_caller[], ftrace_caller_end[],
	ftrace_return_to_handler[];

/* The form of site: a call to target, or the NOP if target is 0; false if out of reach. */
bool arch_ftrace_insn(uint64_t site, uint64_t target, uint8_t out[FTRACE_SITE_LEN]);

/*
 * Rewrite sites[0..n) (ascending) from the form old_target gives to the
 * form new_target gives (0 = NOP), while other CPUs run them, through
 * the live-patching engine (arch/x86/text_patch.c). A site whose bytes are
 * not the old form is refused (one console line each, at most a few) and
 * left as it is. Task context, interrupts on (the syncs wait for every CPU);
 * callers are serialised by the tracer's lock. Returns the sites refused.
 */
unsigned arch_ftrace_apply(const uint64_t *sites, unsigned n, uint64_t old_target,
			   uint64_t new_target);

/* Does site hold exactly the NOP? (Boot check of every site.) */
bool arch_ftrace_site_is_nop(uint64_t site);

/*
 * Make sites[0..n) (ascending) that hold the build's form the NOP, with the
 * same sequence as arch_ftrace_apply() (a CPU meeting the int3 goes on past
 * the site: what either form does). Sites in another form are left as they
 * are, unreported: the boot check then names them. Same context rules.
 */
void arch_ftrace_convert(const uint64_t *sites, unsigned n);

/* Breakpoints met on sites being patched, all CPUs. */
uint64_t arch_ftrace_int3_hits(void);

#endif
