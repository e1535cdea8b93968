/*
 * Function tracer sites on x86-64: rewriting the 5-byte NOP at a traced
 * function's entry into `call ftrace_caller` and back while other CPUs run
 * it, by queueing each site into the live-patching engine
 * (arch/x86/text_patch.c, whose invariants J1..J7 hold for them).
 *
 * Contract: arch_ftrace_apply() runs in task context, one caller at a time
 * (the tracer's lock, kernel/tracer/ftrace/ftrace.c); the static-key patcher may
 * finish its own batch at the same time on another CPU: the engine allows
 * it (disjoint sites, each sync answered by both).
 * Any CPU may run any site meanwhile, from any context, the patching CPU
 * included.
 *
 * What a CPU meeting the int3 does: it goes on at site + 5, as if the site
 * were the NOP (the engine skips a call). That is the old form when
 * enabling and the new one when disabling, so it is always one of the two
 * forms the site is between: a call that starts tracing is just not traced
 * yet, one that stops it is already not. (Linux emulates the call instead;
 * skipping it needs no room on the interrupted stack and loses only calls
 * made during the patch.)
 *
 * Never traced (Makefile): the patcher's own calls must not be sites.
 */
#include <stddef.h>
#include <arch/ftrace.h>
#include <arch/text_poke.h>
#include "kernel/console.h"
#include "kernel/kstring.h"

#define REPORT_MAX	8	/* refused sites named per call; the rest counted */

_Static_assert(FTRACE_SITE_LEN == TEXT_POKE_SITE_LEN, "a site is one engine site");
_Static_assert(FTRACE_OP_CALL32 == TEXT_OP_CALL32, "the engine skips a call");

static const uint8_t insn_nop[FTRACE_SITE_LEN] = { FTRACE_SITE_NOP };
static const uint8_t insn_build[FTRACE_SITE_LEN] = { FTRACE_SITE_BUILD };

/* The sites being changed (the tracer's lock serialises it). */
static struct text_poke_queue queue = { .who = "ftrace" };

uint64_t arch_ftrace_int3_hits(void)
{
	return __atomic_load_n(&queue.int3_hits, __ATOMIC_RELAXED);
}

bool arch_ftrace_insn(uint64_t site, uint64_t target, uint8_t out[FTRACE_SITE_LEN])
{
	if (!target) {
		memcpy(out, insn_nop, FTRACE_SITE_LEN);
		return true;
	}
	return text_insn_rel32(FTRACE_OP_CALL32, site, target, out);
}

bool arch_ftrace_site_is_nop(uint64_t site)
{
	const void *p = (const void *)(uintptr_t)site;

	return text_contains(p, FTRACE_SITE_LEN) && !memcmp(p, insn_nop, FTRACE_SITE_LEN);
}

unsigned arch_ftrace_apply(const uint64_t *sites, unsigned n, uint64_t old_target,
			   uint64_t new_target)
{
	queue.refused = 0;
	queue.report_max = REPORT_MAX;
	for (unsigned i = 0; i < n; i++) {
		uint8_t old[FTRACE_SITE_LEN] = { 0 }, new[FTRACE_SITE_LEN] = { 0 };

		if (!arch_ftrace_insn(sites[i], old_target, old) ||
		    !arch_ftrace_insn(sites[i], new_target, new))
			text_poke_refuse(&queue, sites[i], old);
		else
			text_poke_queue(&queue, sites[i], old, new);
	}
	text_poke_finish(&queue);
	if (queue.refused > REPORT_MAX)
		printk("ftrace: %u more sites refused\n", queue.refused - REPORT_MAX);
	return queue.refused;
}

void arch_ftrace_convert(const uint64_t *sites, unsigned n)
{
	queue.report_max = 0;	/* the build's form or left as it is, unreported */
	for (unsigned i = 0; i < n; i++)
		text_poke_queue(&queue, sites[i], insn_build, insn_nop);
	text_poke_finish(&queue);
}
