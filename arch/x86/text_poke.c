/*
 * Changing kernel code: read-only .text, writes through an alias, and the
 * cross-CPU synchronisation that makes a change visible to instruction
 * fetch everywhere.
 *
 * Read-only code. text_poke_init() clears RW on every 4 KiB page of
 * [__text_start, __text_end) (paging_protect()); CR0.WP is set at boot, so
 * a stray store into code faults even in ring 0. It runs on the boot CPU
 * before any AP starts, so no other TLB holds the old writable 2 MiB
 * translation, and the APs start on the read-only map.
 *
 * How code is written anyway: a temporary writable alias, not CR0.WP.
 * Clearing CR0.WP would make every page writable on this CPU for the
 * window, and an NMI (which interrupts with interrupts off) could then
 * write anywhere unchecked. The alias maps only the page(s) being changed,
 * at POKE_VA, which nothing else uses:
 *
 *   POKE_VA  (PML4 slot 256, the upper half: no physical address maps there)
 *   +0       PTE 0 -> the code page holding addr        P | RW | NX
 *   +4 KiB   PTE 1 -> the next page (a write may cross)  P | RW | NX
 *
 * text_poke(): under poke_lock with interrupts off, fill both PTEs,
 * invlpg, store the bytes at POKE_VA + (addr & 0xFFF), clear the PTEs,
 * invlpg. Only the calling CPU ever touches POKE_VA, so only its TLB can
 * hold the alias, and the invlpg after clearing removes it. Each byte is
 * its own store: a caller that needs a change to appear at once (one
 * byte: int3) writes one byte per call.
 *
 * Instruction fetch sees the store: the alias and the code map the same
 * physical page, and the processor's self-modifying-code check is by
 * physical address (Intel SDM vol. 3A 11.6). Other CPUs may still hold
 * what they fetched before; text_sync() ends that:
 *
 *   patcher                         every other online CPU
 *   stores (text_poke)
 *   gen = ++sync_gen  (release)
 *   IPI VEC_TEXT_SYNC ----------->  (A) g = sync_gen   (acquire)
 *   cpuid                           (B) cpuid          (serialising)
 *   wait seen[c] >= gen  <--------  (C) seen[c] = g    (release)
 *
 * Invariant S1: when text_sync() returns true, every online CPU has
 * executed a serialising instruction after observing every store made
 * before the call. Proof: c acknowledges g >= gen only after loading g at
 * (A), which observed the release of gen, so every earlier store of the
 * patcher is visible to c before its cpuid at (B); the cpuid discards
 * whatever c fetched before (SDM vol. 3A 8.1.3, cross-modifying code).
 * The load at (A) comes first so that an IPI coalesced with another
 * patcher's still acknowledges only what it has seen.
 *
 * A CPU that spins with interrupts off on something a patcher may hold
 * (the static-key lock, the function tracer's lock) answers from its loop
 * instead: text_sync_answer() is the same A, B, C without the IPI. Its IPI
 * stays pending and, taken later, acknowledges again what is already
 * acknowledged. So does a CPU waiting in text_sync() itself: two patchers
 * (a static-key change and a tracer switch, on two CPUs, interrupts off on
 * both) each wait for the other's acknowledgement, and each gives it from
 * its own wait loop, so neither waits on a CPU that is waiting on it.
 *
 * Invariant S2: sync_seen[c] never decreases. An answer from c's task
 * loop can be interrupted between A and C by c's sync IPI, which stores a
 * later gen; the task's C would then store the older one back, and a
 * patcher waiting for the later gen would wait for an answer already
 * given. text_sync_answer() keeps interrupts off from A to C.
 *
 * A CPU that keeps interrupts off for TEXT_SYNC_TIMEOUT_MS is reported and
 * not waited for further: going on is the lesser risk (the next stage
 * stays safe for every CPU that did answer), and such a CPU is a bug of
 * its own. The wait is a watchdog pause (the others are watched); one
 * that expired counts against the waiter (R5 in
 * <arch/watchdog_rule.h>): the silent CPU was not watched.
 */
#include <arch/cpu.h>
#include <arch/lapic.h>
#include <arch/paging.h>
#include <arch/percpu.h>
#include <arch/text_poke.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/spinlock.h"

#define POKE_VA			0xffff800000000000ull	/* PML4 slot 256 */
#define PAGE_4K			4096ull
#define PTE_P			(1ull << 0)
#define PTE_RW			(1ull << 1)
#define PTE_NX			(1ull << 63)
#define TEXT_SYNC_TIMEOUT_MS	10000

_Static_assert(VEC_TEXT_SYNC != VEC_CALL && VEC_TEXT_SYNC != VEC_TEST &&
	       VEC_TEXT_SYNC != VEC_TIMER && VEC_TEXT_SYNC != VEC_ERROR &&
	       VEC_TEXT_SYNC != VEC_SPURIOUS, "VEC_TEXT_SYNC must be a vector of its own");

extern char __text_start[], __text_end[];

static struct spinlock poke_lock;	/* one user of POKE_VA at a time */
static uint64_t *poke_pte;		/* PTEs 0 and 1 of the window; NULL = write directly */
static uint64_t poke_nx;		/* PTE_NX if EFER.NXE is on (else the bit is reserved) */
static bool protected;			/* .text is read-only */

static uint64_t sync_gen;		/* syncs asked for */
static uint64_t sync_seen[MAX_CPUS];	/* per CPU: the last gen acknowledged */
static uint64_t sync_expired;		/* CPUs not waited for further (timeouts), all syncs */

static inline void invlpg(uint64_t va)
{
	__asm__ __volatile__("invlpg (%0)" : : "r"(va) : "memory");
}

static inline void serialize(void)
{
	cpuid(0, 0);
}

bool text_contains(const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, end = (uintptr_t)__text_end;

	/* a <= end first: end - a would wrap for an address above .text. */
	return a >= (uintptr_t)__text_start && a <= end && len <= end - a;
}

bool text_protected(void)
{
	return protected;
}

bool text_poke(void *addr, const void *src, size_t len)
{
	uint64_t pa = (uint64_t)(uintptr_t)addr, flags;
	const uint8_t *s = src;
	volatile uint8_t *d;

	if (len > TEXT_POKE_MAX || !text_contains(addr, len))
		return false;
	flags = spin_lock_irqsave(&poke_lock);
	if (!poke_pte) {
		d = addr;	/* before text_poke_init(): .text is still writable */
	} else {
		poke_pte[0] = (pa & ~(PAGE_4K - 1)) | PTE_P | PTE_RW | poke_nx;
		poke_pte[1] = ((pa & ~(PAGE_4K - 1)) + PAGE_4K) | PTE_P | PTE_RW | poke_nx;
		invlpg(POKE_VA);
		invlpg(POKE_VA + PAGE_4K);
		d = (volatile uint8_t *)(uintptr_t)(POKE_VA + (pa & (PAGE_4K - 1)));
	}
	for (size_t i = 0; i < len; i++)
		d[i] = s[i];
	if (poke_pte) {
		poke_pte[0] = 0;
		poke_pte[1] = 0;
		invlpg(POKE_VA);
		invlpg(POKE_VA + PAGE_4K);
	}
	spin_unlock_irqrestore(&poke_lock, flags);
	return true;
}

/* The other side of text_sync(): A, B, C in the diagram above. */
static void answer(unsigned cpu)
{
	uint64_t g = __atomic_load_n(&sync_gen, __ATOMIC_ACQUIRE);	/* A; pairs with the release in text_sync() */

	serialize();							/* B */
	__atomic_store_n(&sync_seen[cpu], g, __ATOMIC_RELEASE);		/* C */
}

static void on_sync_ipi(struct trap_frame *f)
{
	(void)f;
	answer(this_cpu()->cpu);
	lapic_eoi();
}

void text_sync_answer(void)
{
	unsigned cpu;
	uint64_t flags = read_rflags();

	irq_disable();	/* S2: no IPI between A and C */
	cpu = this_cpu()->cpu;
	if (__atomic_load_n(&sync_seen[cpu], __ATOMIC_RELAXED) <
	    __atomic_load_n(&sync_gen, __ATOMIC_RELAXED))
		answer(cpu);
	if (flags & RFLAGS_IF)
		irq_enable();
}

uint64_t text_sync_asked(void)
{
	return __atomic_load_n(&sync_gen, __ATOMIC_ACQUIRE);
}

uint64_t text_sync_expired(void)
{
	return __atomic_load_n(&sync_expired, __ATOMIC_RELAXED);
}

bool text_sync(void)
{
	unsigned self = this_cpu()->cpu;
	uint64_t gen = __atomic_add_fetch(&sync_gen, 1, __ATOMIC_RELEASE);
	bool ok = true, paused;

	for (unsigned c = 0; c < cpu_count; c++)
		if (c != self && cpus[c] && cpus[c]->online)
			lapic_send_ipi(cpus[c]->apic_id, VEC_TEXT_SYNC);
	serialize();
	paused = watchdog_pause();	/* a bounded wait for the others, who are watched */
	for (unsigned c = 0; c < cpu_count; c++) {
		uint64_t t0 = rdtsc(), lim = tsc_ms_to_cycles(TEXT_SYNC_TIMEOUT_MS);
		if (c == self || !cpus[c] || !cpus[c]->online)
			continue;
		/*
		 * Pairs with the release at C; pause also yields the emulator
		 * under icount. Answer whoever waits for us meanwhile (S1 for
		 * their sync: we serialise after their stores like any CPU).
		 */
		while (__atomic_load_n(&sync_seen[c], __ATOMIC_ACQUIRE) < gen) {
			text_sync_answer();
			if (rdtsc() - t0 > lim) {
				printk("text: cpu=%u did not answer a code-change sync within %u ms "
				       "(interrupts off?); going on without it\n", c,
				       TEXT_SYNC_TIMEOUT_MS);
				__atomic_fetch_add(&sync_expired, 1, __ATOMIC_RELAXED);
				ok = false;
				break;
			}
			cpu_relax();
		}
	}
	if (ok)
		watchdog_resume(paused);
	else
		watchdog_resume_expired(paused);	/* nobody watched the silent CPU: we count */
	return ok;
}

void text_poke_init(void)
{
	uint64_t *pt;

	trap_set_handler(VEC_TEXT_SYNC, on_sync_ipi);
	pt = paging_map_window(POKE_VA);
	if (!pt) {
		printk("text: no page tables for the patch window; kernel code stays writable\n");
		return;
	}
	poke_nx = (rdmsr(MSR_EFER) & EFER_NXE) ? PTE_NX : 0;
	poke_pte = pt;
	if (!paging_protect((uintptr_t)__text_start, (uintptr_t)__text_end)) {
		printk("text: could not split the kernel's 2 MiB pages; code stays writable\n");
		return;
	}
	protected = true;
	printk("text: kernel code 0x%llx..0x%llx read-only; changed only through text_poke()\n",
	       (unsigned long long)(uintptr_t)__text_start,
	       (unsigned long long)(uintptr_t)__text_end);
}
