/*
 * Function tracer sites on x86-64: rewriting the 5-byte NOP at a traced
 * function's entry into `call ftrace_caller` and back while other CPUs run
 * it. The sequence is the static keys' (arch/x86/jump_label.c, whose
 * invariants J1..J6 it keeps, reasoned there): int3 on byte 0, sync, bytes
 * 1..4, sync, byte 0, sync, byte 0 again (QEMU's translation race), sync.
 *
 * Contract: arch_ftrace_apply() runs in task context with interrupts on,
 * one caller at a time (the tracer's lock, kernel/tracer/ftrace.c); the
 * static-key patcher may run at the same time on another CPU: the two
 * batches are disjoint (different sites), each sync answers both (text_sync()
 * only waits for CPUs to serialise, and each patcher answers the other's
 * from its own wait, interrupts off or not: arch/x86/text_poke.c), and the
 * breakpoint handler asks both.
 * Any CPU may run any site meanwhile, from any context, the patching CPU
 * included.
 *
 * What a CPU meeting the int3 does: it goes on at site + 5, as if the site
 * were the NOP. That is the old form when enabling and the new one when
 * disabling, so it is always one of the two forms the site is between: a
 * call that starts tracing is just not traced yet, one that stops it is
 * already not. (Linux emulates the call instead; skipping it needs no room
 * on the interrupted stack and loses only calls made during the patch.)
 *
 * Glossary:
 *   live     the batch being patched: its sites, ascending; n = 0 when
 *            no patch is in progress (J1: published before the first int3,
 *            cleared after the last sync)
 *   refused  a site whose bytes are not the old form (J5): left untouched
 *
 * Never traced (Makefile): the patcher's own calls must not be sites.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/ftrace.h>
#include "kernel/static_key.h"	/* arch_jump_label_int3() */
#include <arch/text_poke.h>
#include <arch/trap.h>
#include "kernel/console.h"
#include "kernel/ksyms.h"
#include "kernel/kstring.h"

#define VEC_BP		3
#define OP_INT3		0xcc
#define BATCH		256	/* sites per round of syncs */
#define REPORT_MAX	8	/* refused sites named per call; the rest counted */

static const uint8_t insn_nop[FTRACE_SITE_LEN] = { FTRACE_SITE_NOP };
static const uint8_t insn_build[FTRACE_SITE_LEN] = { FTRACE_SITE_BUILD };

static struct {
	uint64_t addr[BATCH];			/* live sites, ascending */
	uint8_t insn[BATCH][FTRACE_SITE_LEN];	/* their new forms */
	uint32_t n;				/* 0 = no patch in progress */
} live;

static uint64_t int3_hits;

uint64_t arch_ftrace_int3_hits(void)
{
	return __atomic_load_n(&int3_hits, __ATOMIC_RELAXED);
}

bool arch_ftrace_insn(uint64_t site, uint64_t target, uint8_t out[FTRACE_SITE_LEN])
{
	int64_t rel = (int64_t)(target - (site + FTRACE_SITE_LEN));
	int32_t rel32 = (int32_t)rel;

	if (!target) {
		memcpy(out, insn_nop, FTRACE_SITE_LEN);
		return true;
	}
	if (rel != rel32)
		return false;
	out[0] = FTRACE_OP_CALL32;
	memcpy(out + 1, &rel32, 4);
	return true;
}

bool arch_ftrace_site_is_nop(uint64_t site)
{
	const void *p = (const void *)(uintptr_t)site;

	return text_contains(p, FTRACE_SITE_LEN) && !memcmp(p, insn_nop, FTRACE_SITE_LEN);
}

bool arch_ftrace_int3(struct trap_frame *f)
{
	uint64_t at = f->rip - 1;	/* int3 is a trap: rip is past it */
	uint32_t n = __atomic_load_n(&live.n, __ATOMIC_ACQUIRE);	/* pairs with the release in apply */
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (live.addr[mid] == at) {
			f->rip = at + FTRACE_SITE_LEN;	/* the NOP's effect */
			__atomic_fetch_add(&int3_hits, 1, __ATOMIC_RELAXED);
			return true;
		}
		if (live.addr[mid] < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* The breakpoint vector while we patch: our sites, the static keys', or a bug. */
static void on_int3(struct trap_frame *f)
{
	if (arch_ftrace_int3(f) || arch_jump_label_int3(f))
		return;
	trap_fatal(f, "breakpoint that is no code site being patched");
}

static void report_refused(uint64_t site, const uint8_t *have, const uint8_t *want)
{
	uint64_t off = 0;
	const char *fn = ksym_lookup(site, &off);

	printk("ftrace: site 0x%llx (%s+0x%llx) holds %02x %02x %02x %02x %02x, not "
	       "%02x %02x %02x %02x %02x; refused, left as it is\n",
	       (unsigned long long)site, fn ? fn : "?", (unsigned long long)off,
	       have[0], have[1], have[2], have[3], have[4],
	       want[0], want[1], want[2], want[3], want[4]);
}

/* One batch of live.n sites through steps (1)..(4) (jump_label.c's table). */
static void patch_live(uint32_t m)
{
	uint8_t int3 = OP_INT3;

	trap_set_handler(VEC_BP, on_int3);
	__atomic_store_n(&live.n, m, __ATOMIC_RELEASE);	/* J1: before any int3 */
	for (uint32_t i = 0; i < m; i++)			/* (1) */
		text_poke((void *)(uintptr_t)live.addr[i], &int3, 1);
	text_sync();
	for (uint32_t i = 0; i < m; i++)			/* (2), J2 */
		text_poke((void *)(uintptr_t)(live.addr[i] + 1), live.insn[i] + 1,
			  FTRACE_SITE_LEN - 1);
	text_sync();
	for (uint32_t i = 0; i < m; i++)			/* (3), J3 */
		text_poke((void *)(uintptr_t)live.addr[i], live.insn[i], 1);
	text_sync();
	for (uint32_t i = 0; i < m; i++)			/* (4), J6 */
		text_poke((void *)(uintptr_t)live.addr[i], live.insn[i], 1);
	text_sync();
	__atomic_store_n(&live.n, 0, __ATOMIC_RELEASE);	/* J4 */
}

unsigned arch_ftrace_apply(const uint64_t *sites, unsigned n, uint64_t old_target,
			   uint64_t new_target)
{
	unsigned refused = 0;
	uint32_t m = 0;

	for (unsigned i = 0; i < n; i++) {
		uint8_t have[FTRACE_SITE_LEN] = { 0 }, want[FTRACE_SITE_LEN] = { 0 };
		const void *code = (const void *)(uintptr_t)sites[i];
		bool inside = text_contains(code, FTRACE_SITE_LEN);

		if (inside)
			memcpy(have, code, FTRACE_SITE_LEN);
		if (!inside || !arch_ftrace_insn(sites[i], old_target, want) ||
		    !arch_ftrace_insn(sites[i], new_target, live.insn[m]) ||
		    memcmp(have, want, FTRACE_SITE_LEN)) {
			if (refused++ < REPORT_MAX)	/* J5 */
				report_refused(sites[i], have, want);
			continue;
		}
		live.addr[m++] = sites[i];
		if (m == BATCH) {
			patch_live(m);
			m = 0;
		}
	}
	if (m)
		patch_live(m);
	if (refused > REPORT_MAX)
		printk("ftrace: %u more sites refused\n", refused - REPORT_MAX);
	return refused;
}

void arch_ftrace_convert(const uint64_t *sites, unsigned n)
{
	uint32_t m = 0;

	for (unsigned i = 0; i < n; i++) {
		const void *code = (const void *)(uintptr_t)sites[i];

		if (!text_contains(code, FTRACE_SITE_LEN) ||
		    memcmp(code, insn_build, FTRACE_SITE_LEN))
			continue;
		live.addr[m] = sites[i];
		memcpy(live.insn[m++], insn_nop, FTRACE_SITE_LEN);
		if (m == BATCH) {
			patch_live(m);
			m = 0;
		}
	}
	if (m)
		patch_live(m);
}
