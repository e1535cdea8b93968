/*
 * In-kernel tests of static keys and read-only code: a test key with three
 * sites, one in each of kt_site_a/b/c. Each site function returns its own
 * constant (0xA, 0xB, 0xC) when it takes the branch and 0 when it falls
 * through, so what a call returns says which path ran, independently of
 * the bytes the tests also read. Every test leaves the key disabled and
 * the sites as built.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/lapic.h>
#include <arch/paging.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/text_poke.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include "kernel/console.h"
#include "kernel/ksyms.h"
#include "kernel/kstring.h"
#include "kernel/ktest.h"
#include "kernel/static_key.h"

#define NSITES		3
#define PAGE_4K		4096ull
#define CALL_TIMEOUT_MS	30000

extern char __text_start[], __text_end[];

static DEFINE_STATIC_KEY_FALSE(kt_key);

/* Distinct bodies, or -fipa-icf may fold the three into one function. */
static __noinline int kt_site_a(void)
{
	if (static_branch_unlikely(&kt_key))
		return 0xA;
	return 0;
}

static __noinline int kt_site_b(void)
{
	if (static_branch_unlikely(&kt_key))
		return 0xB;
	return 0;
}

static __noinline int kt_site_c(void)
{
	if (static_branch_unlikely(&kt_key))
		return 0xC;
	return 0;
}

static const char *const site_fn[NSITES] = { "kt_site_a", "kt_site_b", "kt_site_c" };
static const int site_taken[NSITES] = { 0xA, 0xB, 0xC };
static const uint8_t nop5[JUMP_LABEL_LEN] = { JUMP_LABEL_NOP };

static void call_sites(int r[NSITES])
{
	r[0] = kt_site_a();
	r[1] = kt_site_b();
	r[2] = kt_site_c();
}

/* Did every site take the branch (on) or fall through (!on)? */
static bool paths_are(bool on)
{
	int r[NSITES];

	call_sites(r);
	for (unsigned i = 0; i < NSITES; i++)
		if (r[i] != (on ? site_taken[i] : 0))
			return false;
	return true;
}

struct site_list {
	const struct jump_entry *e[NSITES];	/* by function: a, b, c */
	unsigned seen;				/* entries of kt_key met */
	unsigned unknown;			/* of them, in no kt_site_* function */
};

static void collect(const struct jump_entry *e, void *arg)
{
	struct site_list *l = arg;
	uint64_t off;
	const char *name = ksym_lookup(e->code, &off);

	l->seen++;
	for (unsigned i = 0; i < NSITES; i++) {
		if (name && !strcmp(name, site_fn[i]) && !l->e[i]) {
			l->e[i] = e;
			return;
		}
	}
	l->unknown++;
}

/* The table's sites of kt_key, one in each kt_site_* function; NULL if not. */
static const char *find_sites(struct site_list *l)
{
	memset(l, 0, sizeof(*l));
	static_key_sites(&kt_key, collect, l);
	if (l->seen != NSITES || l->unknown)
		return "kt_key has not exactly one site in each of kt_site_a/b/c";
	return NULL;
}

static bool site_is_nop(const struct jump_entry *e)
{
	return !memcmp((const void *)(uintptr_t)e->code, nop5, JUMP_LABEL_LEN);
}

/* e9 rel32 whose destination is the table's target, inside the site's own function. */
static bool site_is_jmp(const struct jump_entry *e)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)e->code;
	int32_t rel;
	uint64_t off1, off2;

	memcpy(&rel, p + 1, 4);
	if (p[0] != JUMP_LABEL_OP_JMP32 || e->code + JUMP_LABEL_LEN + (int64_t)rel != e->target)
		return false;
	const char *a = ksym_lookup(e->code, &off1), *b = ksym_lookup(e->target, &off2);
	return a && b && !strcmp(a, b) && off2 > off1;
}

/*
 * Disabled: every site falls through and holds the 5-byte NOP; enabled:
 * every site branches and holds e9 rel32 to its target; disabled again.
 * Mutation tried: rel32 computed from the site instead of the site's end
 * (target - code): the jmp test fails (and the calls land 5 bytes late).
 */
KTEST(static_key_patch_sites)
{
	struct site_list l;
	const char *why = find_sites(&l);

	if (why)
		return why;
	KT_ASSERT(!static_key_is_enabled(&kt_key));
	for (unsigned i = 0; i < NSITES; i++)
		KT_ASSERT(site_is_nop(l.e[i]));
	KT_ASSERT(paths_are(false));

	KT_ASSERT(static_key_set(&kt_key, true) == 0);
	KT_ASSERT(static_key_is_enabled(&kt_key));
	for (unsigned i = 0; i < NSITES; i++)
		KT_ASSERT(site_is_jmp(l.e[i]));
	KT_ASSERT(paths_are(true));
	KT_ASSERT(static_key_set(&kt_key, true) == 0);	/* no change: nothing touched */
	for (unsigned i = 0; i < NSITES; i++)
		KT_ASSERT(site_is_jmp(l.e[i]));

	static_key_disable(&kt_key);
	KT_ASSERT(!static_key_is_enabled(&kt_key));
	for (unsigned i = 0; i < NSITES; i++)
		KT_ASSERT(site_is_nop(l.e[i]));
	KT_ASSERT(paths_are(false));
	return NULL;
}

/*
 * A site whose bytes are not what the key's state says is refused (one
 * console line naming it; test_static_keys.py reads it) and left as it is,
 * while the key's other sites are patched. Site b is made five one-byte
 * NOPs: still falls through, but not the NOP the table promises.
 * Mutation tried: the byte check removed: site b becomes a jmp and the
 * refused count is 0.
 */
KTEST(static_key_refuses_changed_site)
{
	static const uint8_t nops[JUMP_LABEL_LEN] = { 0x90, 0x90, 0x90, 0x90, 0x90 };
	struct site_list l;
	const char *why = find_sites(&l);
	int r[NSITES];

	if (why)
		return why;
	KT_ASSERT(text_poke((void *)(uintptr_t)l.e[1]->code, nops, JUMP_LABEL_LEN));
	text_sync();	/* b is idle elsewhere, but no CPU may keep its old bytes */
	printk("ktest: static_key_refuses_changed_site corrupted=0x%llx\n",
	       (unsigned long long)l.e[1]->code);

	KT_ASSERT(static_key_set(&kt_key, true) == 1);
	KT_ASSERT(site_is_jmp(l.e[0]) && site_is_jmp(l.e[2]));
	KT_ASSERT(!memcmp((const void *)(uintptr_t)l.e[1]->code, nops, JUMP_LABEL_LEN));
	call_sites(r);
	KT_ASSERT(r[0] == 0xA && r[1] == 0 && r[2] == 0xC);

	KT_ASSERT(static_key_set(&kt_key, false) == 1);	/* b is not the jmp either */
	KT_ASSERT(site_is_nop(l.e[0]) && site_is_nop(l.e[2]));
	KT_ASSERT(!memcmp((const void *)(uintptr_t)l.e[1]->code, nops, JUMP_LABEL_LEN));

	KT_ASSERT(text_poke((void *)(uintptr_t)l.e[1]->code, nop5, JUMP_LABEL_LEN));
	text_sync();
	for (unsigned i = 0; i < NSITES; i++)
		KT_ASSERT(site_is_nop(l.e[i]));
	KT_ASSERT(paths_are(false));
	return NULL;
}

/* ---- flipping while every CPU runs the sites ------------------------------ */

#define STRESS_FLIPS		2000
#define STRESS_NMI_EVERY	8	/* flips between NMIs sent */
#define STRESS_BURST		64	/* rounds a CPU runs for each interrupt */
#define STRESS_LIMIT_MS		240000	/* TSC time for all the flips */

/* One CPU's counts; written by that CPU only (task loop or its NMI handler). */
struct stress_cpu {
	uint64_t iters;		/* loop rounds, each calling the three sites */
	uint64_t taken;		/* calls that returned their site's constant */
	uint64_t fall;		/* calls that returned 0 */
	uint64_t wrong;		/* calls in a stable window on the path the state does not say */
	uint64_t nmi_iters;	/* the same, from the NMI handler */
	uint64_t nmi_taken;
	uint64_t nmi_fall;
	uint64_t nmi_wrong;
} __aligned(CACHELINE_SIZE);

static struct stress_cpu stress[MAX_CPUS];
/*
 * The patcher's phase: odd while kt_key changes; even once it is done,
 * with the state (seq / 2) & 1. A round that reads the same even value
 * before and after its calls ran wholly after static_key_set() returned
 * and before the next began, so every call must be on that path.
 */
static uint64_t stress_seq;
static bool stress_stop;
static trap_handler_t stress_old_nmi;

static void stress_round(uint64_t *iters, uint64_t *taken, uint64_t *fall, uint64_t *wrong)
{
	uint64_t s1 = __atomic_load_n(&stress_seq, __ATOMIC_ACQUIRE);	/* pairs with the patcher's release */
	int r[NSITES];

	call_sites(r);	/* out of line: not moved across the loads */
	uint64_t s2 = __atomic_load_n(&stress_seq, __ATOMIC_ACQUIRE);
	(*iters)++;
	for (unsigned i = 0; i < NSITES; i++) {
		if (r[i] == site_taken[i])
			(*taken)++;
		else if (r[i] == 0)
			(*fall)++;
		if (s1 == s2 && !(s1 & 1) && (r[i] != 0) != (bool)((s1 / 2) & 1))
			(*wrong)++;
	}
}

static void stress_nmi(struct trap_frame *f)
{
	struct stress_cpu *s = &stress[this_cpu()->cpu];

	stress_round(&s->nmi_iters, &s->nmi_taken, &s->nmi_fall, &s->nmi_wrong);
	if (stress_old_nmi)
		stress_old_nmi(f);
}

/*
 * Bursts of STRESS_BURST rounds, each burst started by an interrupt: the
 * patcher's sync IPIs (four a flip) wake this CPU, which acknowledges the
 * sync and then runs its rounds while the patcher goes on to its next
 * stores. Sleeping between bursts gives the host thread back: with more
 * vCPUs than host cores, CPUs that never sleep make each sync wait for
 * host time slices (a 4-CPU run took minutes).
 */
static void stress_loop(void *arg)
{
	struct stress_cpu *s = &stress[this_cpu()->cpu];
	uint64_t t0 = rdtsc(), lim = tsc.hz / 1000 * STRESS_LIMIT_MS;

	(void)arg;
	while (!__atomic_load_n(&stress_stop, __ATOMIC_ACQUIRE) && rdtsc() - t0 < lim) {
		for (unsigned i = 0; i < STRESS_BURST; i++) {
			stress_round(&s->iters, &s->taken, &s->fall, &s->wrong);
			cpu_relax();	/* under icount, hands the emulator on */
		}
		irq_disable();	/* a wake-up between the check and hlt is not lost */
		if (!__atomic_load_n(&stress_stop, __ATOMIC_ACQUIRE))
			cpu_sleep_until_irq();
		irq_enable();
	}
}

static bool others_idle_of_nmis(uint64_t ms)
{
	uint64_t t0 = rdtsc(), lim = tsc.hz / 1000 * ms;

	for (unsigned c = 1; c < cpu_count; c++)
		while (cpus[c] && __atomic_load_n(&cpus[c]->nmi_depth, __ATOMIC_ACQUIRE))
			if (rdtsc() - t0 > lim)
				return false;
	return true;
}

/*
 * kt_key flipped STRESS_FLIPS times while every other CPU calls the three
 * sites in a loop (and, every few flips, from an NMI): nothing crashes,
 * every call returns one of its two values (taken + fall == 3 * rounds on
 * every CPU), and no call in a window where the key was stable took the
 * other path. The patching CPU checks its own calls after each flip.
 * Mutations tried, each caught at -smp 2: step (1) of the int3 sequence
 * skipped (bytes 1..4 written while byte 0 is still the old opcode): a CPU
 * executes 0f <rel32...> and dies of #UD; step (4) dropped (J6): under
 * multi-threaded TCG a CPU keeps running a stale translation of the int3
 * after the batch and dies of an unexpected #BP.
 */
KTEST(static_key_flip_stress)
{
	unsigned ncpu = cpu_count, refused = 0, flips = 0;
	uint64_t t0, lim = tsc.hz / 1000 * STRESS_LIMIT_MS, bsp_wrong = 0, nmis = 0;
	uint64_t hits0 = arch_jump_label_int3_hits();
	const char *why = NULL;
	unsigned next = 1;
	bool running[MAX_CPUS] = { false };

	if (static_key_is_enabled(&kt_key))
		return "kt_key is enabled before the test";
	for (unsigned c = 0; c < ncpu; c++)
		stress[c] = (struct stress_cpu){ 0 };
	__atomic_store_n(&stress_seq, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&stress_stop, false, __ATOMIC_RELEASE);
	stress_old_nmi = trap_get_handler(VEC_NMI);
	trap_set_handler(VEC_NMI, stress_nmi);
	for (unsigned c = 1; c < ncpu; c++) {
		if (!cpus[c] || !cpus[c]->online)
			continue;
		running[c] = smp_call_async(c, stress_loop, NULL);
		if (!running[c])
			why = "a CPU is busy";
	}

	t0 = rdtsc();
	for (unsigned f = 0; f < STRESS_FLIPS && !why; f++) {
		bool on = !(f & 1);
		int r[NSITES];

		__atomic_store_n(&stress_seq, 2 * f + 1, __ATOMIC_RELEASE);
		refused += static_key_set(&kt_key, on);
		__atomic_store_n(&stress_seq, 2 * f + 2, __ATOMIC_RELEASE);
		flips++;
		call_sites(r);
		for (unsigned i = 0; i < NSITES; i++)
			bsp_wrong += r[i] != (on ? site_taken[i] : 0);
		if (ncpu > 1 && f % STRESS_NMI_EVERY == 0) {
			if (running[next]) {
				lapic_send_nmi(cpus[next]->apic_id);
				nmis++;
			}
			next = next + 1 < ncpu ? next + 1 : 1;
		}
		if (rdtsc() - t0 > lim)
			why = "the flips did not finish in time";
	}
	__atomic_store_n(&stress_stop, true, __ATOMIC_RELEASE);
	text_sync();	/* wakes every CPU from its sleep between bursts */
	for (unsigned c = 1; c < ncpu; c++)
		if (running[c] && !smp_call_wait(c, CALL_TIMEOUT_MS) && !why)
			why = "a CPU did not stop";
	if (!others_idle_of_nmis(CALL_TIMEOUT_MS) && !why)
		why = "an NMI handler did not end";
	trap_set_handler(VEC_NMI, stress_old_nmi);
	if (static_key_is_enabled(&kt_key))
		static_key_disable(&kt_key);

	uint64_t iters = 0, taken = 0, fall = 0, wrong = 0, nmi_iters = 0, unmatched = 0;
	for (unsigned c = 1; c < ncpu; c++) {
		const struct stress_cpu *s = &stress[c];
		if (!running[c])
			continue;
		iters += s->iters;
		taken += s->taken + s->nmi_taken;
		fall += s->fall + s->nmi_fall;
		wrong += s->wrong + s->nmi_wrong;
		nmi_iters += s->nmi_iters;
		if (s->taken + s->fall != NSITES * s->iters ||
		    s->nmi_taken + s->nmi_fall != NSITES * s->nmi_iters || !s->iters)
			unmatched++;
	}
	printk("ktest: static_key_flip_stress cpus=%u flips=%u refused=%u rounds=%llu taken=%llu "
	       "fall=%llu wrong=%llu unmatched_cpus=%llu nmis_sent=%llu nmi_rounds=%llu "
	       "bsp_wrong=%llu int3_emulated=%llu\n", ncpu, flips, refused,
	       (unsigned long long)iters, (unsigned long long)taken, (unsigned long long)fall,
	       (unsigned long long)wrong, (unsigned long long)unmatched, (unsigned long long)nmis,
	       (unsigned long long)nmi_iters, (unsigned long long)bsp_wrong,
	       (unsigned long long)(arch_jump_label_int3_hits() - hits0));
	if (why)
		return why;
	KT_ASSERT(flips == STRESS_FLIPS);
	KT_ASSERT(refused == 0);
	KT_ASSERT(bsp_wrong == 0);
	KT_ASSERT(unmatched == 0);
	KT_ASSERT(wrong == 0);
	KT_ASSERT(ncpu == 1 || nmi_iters > 0);
	KT_ASSERT(paths_are(false));
	return NULL;
}

/* ---- what a disabled site costs ------------------------------------------ */

static DEFINE_STATIC_KEY_FALSE(kt_cost_key);
static volatile uint64_t kt_cost_hits;

static __noinline void kt_cost_hit(void)
{
	kt_cost_hits++;
}

/* A trace event's shape: the enabled path calls out of line. */
#define COST_SITE	if (static_branch_unlikely(&kt_cost_key)) kt_cost_hit();
#define COST_SITE10	COST_SITE COST_SITE COST_SITE COST_SITE COST_SITE \
			COST_SITE COST_SITE COST_SITE COST_SITE COST_SITE
#define COST_SITES_LO	20
#define COST_SITES_HI	120

static __noinline void kt_cost_lo(void)
{
	COST_SITE10 COST_SITE10
}

static __noinline void kt_cost_hi(void)
{
	COST_SITE10 COST_SITE10 COST_SITE10 COST_SITE10 COST_SITE10 COST_SITE10
	COST_SITE10 COST_SITE10 COST_SITE10 COST_SITE10 COST_SITE10 COST_SITE10
}

#define COST_REPEAT	200

/* The fewest TSC cycles one call of fn took, rdtsc pair included. */
static uint64_t cost_min(void (*fn)(void))
{
	uint64_t best = UINT64_MAX;

	for (unsigned i = 0; i < COST_REPEAT; i++) {
		uint64_t t0 = rdtsc();
		fn();
		uint64_t d = rdtsc() - t0;
		if (d < best)
			best = d;
	}
	return best;
}

/*
 * The off-cost of a site: two functions of 20 and 120 disabled sites, the
 * fewest cycles a call of each took; the difference over 100 sites is
 * what one costs (function entry, exit and the clock reads cancel). Under
 * -icount shift=0 a cycle is an instruction: test_static_keys.py asserts
 * exactly 100 there. Here: every site is in the table, and enabling the
 * key makes each one take its branch once a call (hits counted out of
 * line), disabling it makes none. Mutation tried: a two-instruction
 * disabled form (.byte 0x66, 0x90 before a 3-byte NOP): the icount
 * difference reads 200 and test_static_keys.py fails.
 */
KTEST(static_key_off_cost)
{
	uint64_t lo, hi, hits;

	KT_ASSERT(static_key_sites(&kt_cost_key, NULL, NULL) == COST_SITES_LO + COST_SITES_HI);
	lo = cost_min(kt_cost_lo);
	hi = cost_min(kt_cost_hi);
	printk("ktest: static_key_off_cost sites_lo=%u sites_hi=%u cycles_lo=%llu cycles_hi=%llu "
	       "cycles_per_100_sites=%lld\n", COST_SITES_LO, COST_SITES_HI,
	       (unsigned long long)lo, (unsigned long long)hi, (long long)(hi - lo));

	hits = kt_cost_hits;
	kt_cost_lo();
	kt_cost_hi();
	KT_ASSERT(kt_cost_hits == hits);
	KT_ASSERT(static_key_set(&kt_cost_key, true) == 0);
	kt_cost_lo();
	kt_cost_hi();
	KT_ASSERT(kt_cost_hits == hits + COST_SITES_LO + COST_SITES_HI);
	KT_ASSERT(static_key_set(&kt_cost_key, false) == 0);
	kt_cost_lo();
	kt_cost_hi();
	KT_ASSERT(kt_cost_hits == hits + COST_SITES_LO + COST_SITES_HI);
	return NULL;
}

/* ---- read-only code --------------------------------------------------- */

static volatile uint64_t pf_rip, pf_resume, pf_cr2, pf_err, pf_hits;

static void on_test_pf(struct trap_frame *f)
{
	if (f->rip != pf_rip)
		trap_fatal(f, "page fault outside the text_read_only test's store");
	pf_hits++;
	pf_cr2 = read_cr2();
	pf_err = f->error_code;
	f->rip = pf_resume;
}

#define PF_PRESENT	(1u << 0)	/* a protection fault, not a missing page */
#define PF_WRITE	(1u << 1)

/*
 * Every 4 KiB page of .text is mapped read-only (and the page after it,
 * .rodata's first, writable: the range is exact), and a store into code
 * faults as a write to a present page. The store writes back the byte
 * already there, so a kernel whose code is writable fails the test
 * unharmed. Mutation tried: paging_protect() not clearing RW: both the
 * page-table check and the store fail.
 */
KTEST(text_read_only)
{
	trap_handler_t old_pf = trap_get_handler(VEC_PF);
	volatile uint8_t *target = (volatile uint8_t *)(uintptr_t)kt_site_a;
	uint64_t size;
	bool writable;
	uint8_t byte = *target;

	KT_ASSERT(text_protected());
	for (uintptr_t va = (uintptr_t)__text_start; va < (uintptr_t)__text_end; va += PAGE_4K) {
		KT_ASSERT(paging_lookup(va, &size, &writable));
		KT_ASSERT(size == PAGE_4K && !writable);
	}
	KT_ASSERT(paging_lookup((uintptr_t)__text_end, &size, &writable));
	KT_ASSERT(writable);
	KT_ASSERT(paging_lookup((uintptr_t)&stress[0], &size, &writable) && writable);

	pf_hits = 0;
	trap_set_handler(VEC_PF, on_test_pf);
	__asm__ __volatile__("leaq 1f(%%rip), %%rax\n\t"
			     "movq %%rax, %[rip]\n\t"
			     "leaq 2f(%%rip), %%rax\n\t"
			     "movq %%rax, %[resume]\n\t"
			     "1: movb %[v], (%[p])\n\t"
			     "2:\n\t"
			     : [rip] "=m"(pf_rip), [resume] "=m"(pf_resume)
			     : [p] "r"(target), [v] "q"(byte)
			     : "rax", "memory");
	trap_set_handler(VEC_PF, old_pf);
	KT_ASSERT(pf_hits == 1);
	KT_ASSERT(pf_cr2 == (uintptr_t)target);
	KT_ASSERT((pf_err & (PF_PRESENT | PF_WRITE)) == (PF_PRESENT | PF_WRITE));
	KT_ASSERT(*target == byte);
	return NULL;
}

/* ---- the bounds text_poke() keeps ---------------------------------------- */

static volatile uint8_t kt_data_byte = 0x5A;	/* in .data, above .text */

/*
 * text_contains() accepts exactly the ranges inside [__text_start,
 * __text_end), and text_poke() writes nothing outside them: not at an
 * address above .text (.data here, which the alias would write just as
 * well), not across __text_end, not with a length that wraps. The ranges
 * at the very ends are accepted, so the test cannot pass by refusing all.
 * Mutation caught: the old comparison (len <= __text_end - a, with no
 * a <= __text_end) accepts every address above .text, and text_poke()
 * rewrites kt_data_byte.
 */
KTEST(text_poke_bounds)
{
	uintptr_t s = (uintptr_t)__text_start, e = (uintptr_t)__text_end;
	uint8_t v = 0xA5;

	KT_ASSERT(text_contains((void *)s, e - s));		/* all of .text */
	KT_ASSERT(text_contains((void *)(e - 5), 5));		/* its last 5 bytes */
	KT_ASSERT(!text_contains((void *)(e - 5), 6));		/* one past the end */
	KT_ASSERT(!text_contains((void *)(e - 2), 5));		/* straddles the end */
	KT_ASSERT(!text_contains((void *)(s - 1), 5));		/* starts below */
	KT_ASSERT(!text_contains((void *)e, 1));		/* the first byte after */
	KT_ASSERT(!text_contains((void *)(e + 1), 1));
	KT_ASSERT(!text_contains((void *)&kt_data_byte, 1));	/* .data */
	KT_ASSERT(!text_contains((void *)(uintptr_t)UINT64_MAX, 1));
	KT_ASSERT(!text_contains((void *)s, SIZE_MAX));		/* a + len wraps */
	KT_ASSERT(!text_contains((void *)(e - 1), SIZE_MAX));

	KT_ASSERT(!text_poke((void *)&kt_data_byte, &v, 1));
	KT_ASSERT(!text_poke((void *)(e - 2), nop5, JUMP_LABEL_LEN));
	KT_ASSERT(kt_data_byte == 0x5A);
	return NULL;
}
