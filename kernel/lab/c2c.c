/*
 * run=c2c: core-to-core latency of a cache line (docs/lab.md#c2c).
 *
 * For every ordered pair (i, j) of online CPUs, one pair after the
 * other, i sends and j receives c2c.samples times, both with interrupts
 * off:
 *
 *   one way   j: ready = r+1 ----------------> i: sees ready == r+1
 *             j: spins on slot                  i: t = rdtsc; slot = t
 *             j: sees slot == t; a = rdtsc      one_way[r] = ns_j(a) - ns_i(t)
 *
 *   round trip  i: t0 = rdtsc; CAS(pp, 2r, 2r+1) -> j: sees 2r+1; CAS(pp, 2r+1, 2r+2)
 *               i: sees 2r+2; rtt[r] = rdtsc - t0 (i's own TSC: no skew in it)
 *
 * ns_i() is CPU i's own conversion (tsc_cycles_to_ns() on i: its skew
 * taken out), so a one-way figure is on the corrected timeline and is
 * off by at most the two CPUs' skew bounds: bound_ns. Each CPU converts
 * its own stamps after the exchange.
 *
 * Lines (each its own cache line, so that a sample moves exactly one):
 *   slot   written by the sender only, read by the receiver
 *   ready  written by the receiver only, read by the sender
 *   pp     CAS'd by both in turn (odd: the sender's move, even: the receiver's)
 *
 * Invariants:
 *   I1: the sender stores sample r's stamp only after it saw ready == r+1,
 *       so the receiver is already spinning on slot: its arrival is not
 *       late for want of being there (a sample is one cache-line transfer
 *       plus the spin's turn).
 *   I2: stamps on one CPU strictly increase, so "slot != the last stamp
 *       seen" is sample r's arrival and no stale value is taken for it.
 *   I3: pp moves 2r -> 2r+1 (sender) -> 2r+2 (receiver) and by nobody
 *       else; each side's CAS succeeds the first time (the other only
 *       reads until its turn), so a failed CAS is a defect and stops the
 *       pair.
 * Every wait is bounded (WAIT_S of TSC, or the other side's failure); the
 * boot CPU waits for a pair as long as the exchange moves (c2c_wait_pair()).
 * Memory order: each store is a release and each spin an acquire; the
 * stamp arrays are read by the boot CPU after smp_call_wait() saw the call
 * end (its acquire pairs with the AP's release of call_fn).
 */
#include <stdbool.h>
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/lab.h"
#include "kernel/pmm.h"
#include "kernel/tracing.h"
#include "trace/lab.h"

#define WAIT_S		10	/* one side's wait for one step of the other */
#define STEP_MS		15000	/* the boot CPU gives a pair up after this without a step */
#define SAMPLES_MAX	100000

static uint64_t samples = 1000;
CMDLINE_OPTION(c2c_samples, .name = "c2c.samples", .type = OPT_UINT, .var = &samples,
	       .min = 1, .max = SAMPLES_MAX,
	       .help = "run=c2c: one-way and round-trip samples per ordered pair of CPUs");

/* The shared lines (I1..I3) and the pair's state. */
static struct {
	uint64_t slot __aligned(CACHELINE_SIZE);	/* sender's stamp of the last sample */
	uint64_t ready __aligned(CACHELINE_SIZE);	/* the receiver waits for sample ready-1 */
	uint64_t pp __aligned(CACHELINE_SIZE);		/* the ping-pong word (I3) */
	uint32_t failed __aligned(CACHELINE_SIZE);	/* a side gave up: the other stops */
	uint32_t from, to;				/* the pair, set before the calls */
} x;

static int64_t *send_ns, *recv_ns;	/* per sample, each side's own conversion */
static uint64_t *rtt;			/* per sample, sender's cycles */
static uint64_t buf_pages;

/* Spin until *p == v (eq) or *p != v (!eq): false after WAIT_S or the other side's failure. */
static bool c2c_spin(uint64_t *p, uint64_t v, bool eq)
{
	uint64_t t0 = rdtsc(), lim = tsc.hz * WAIT_S;

	while ((__atomic_load_n(p, __ATOMIC_ACQUIRE) == v) != eq) {
		if (rdtsc() - t0 > lim || __atomic_load_n(&x.failed, __ATOMIC_RELAXED)) {
			__atomic_store_n(&x.failed, 1, __ATOMIC_RELAXED);
			return false;
		}
		cpu_relax();
	}
	return true;
}

static void c2c_sender(void *arg)
{
	uint64_t flags = read_rflags(), n = samples;
	bool paused = watchdog_pause(), ok = true;	/* both sides bounded: WAIT_S a step */

	(void)arg;
	irq_disable();
	for (uint64_t r = 0; r < n && ok; r++) {
		uint64_t t;

		if (!(ok = c2c_spin(&x.ready, r + 1, true)))
			break;
		t = rdtsc();
		__atomic_store_n(&x.slot, t, __ATOMIC_RELEASE);	/* pairs: the receiver's spin */
		send_ns[r] = (int64_t)t;
	}
	for (uint64_t r = 0; r < n && ok; r++) {
		uint64_t t0 = rdtsc(), want = 2 * r;

		if (!__atomic_compare_exchange_n(&x.pp, &want, 2 * r + 1, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&x.failed, 1, __ATOMIC_RELAXED);	/* I3 broken */
			ok = false;
			break;
		}
		if (!(ok = c2c_spin(&x.pp, 2 * r + 2, true)))
			break;
		rtt[r] = rdtsc() - t0;
	}
	if (flags & RFLAGS_IF)
		irq_enable();
	watchdog_resume(paused);
	for (uint64_t r = 0; r < n && ok; r++)
		send_ns[r] = tsc_cycles_to_ns((uint64_t)send_ns[r]);	/* this CPU's clock */
}

static void c2c_receiver(void *arg)
{
	uint64_t flags = read_rflags(), n = samples, last = 0;
	bool paused = watchdog_pause(), ok = true;

	(void)arg;
	irq_disable();
	for (uint64_t r = 0; r < n && ok; r++) {
		__atomic_store_n(&x.ready, r + 1, __ATOMIC_RELEASE);	/* I1; pairs: sender */
		if (!(ok = c2c_spin(&x.slot, last, false)))
			break;
		recv_ns[r] = (int64_t)rdtsc();
		last = __atomic_load_n(&x.slot, __ATOMIC_RELAXED);	/* I2 */
	}
	for (uint64_t r = 0; r < n && ok; r++) {
		uint64_t want = 2 * r + 1;

		if (!(ok = c2c_spin(&x.pp, want, true)))
			break;
		if (!__atomic_compare_exchange_n(&x.pp, &want, 2 * r + 2, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&x.failed, 1, __ATOMIC_RELAXED);	/* I3 broken */
			ok = false;
		}
	}
	if (flags & RFLAGS_IF)
		irq_enable();
	watchdog_resume(paused);
	for (uint64_t r = 0; r < n && ok; r++)
		recv_ns[r] = tsc_cycles_to_ns((uint64_t)recv_ns[r]);
}

/* The boot CPU's wait for an AP's side: as long as the exchange moves (STEP_MS a step). */
static bool c2c_wait_side(unsigned cpu)
{
	uint64_t seen;

	do {
		seen = __atomic_load_n(&x.ready, __ATOMIC_RELAXED) +
		       __atomic_load_n(&x.pp, __ATOMIC_RELAXED);
		if (smp_call_wait(cpu, STEP_MS))
			return true;
	} while (__atomic_load_n(&x.ready, __ATOMIC_RELAXED) +
		 __atomic_load_n(&x.pp, __ATOMIC_RELAXED) != seen);
	printk("c2c: cpu=%u made no step in %u ms (from=%u to=%u sample %llu)\n", cpu, STEP_MS,
	       x.from, x.to, (unsigned long long)x.ready);
	return false;
}

/* A CPU's skew bound in ns, rounded up: its uncertainty, plus |skew| if none was applied. */
static uint64_t c2c_cpu_bound(const struct percpu *pc)
{
	const struct tsc_skew *sk = percpu_area_ptr(pc, tsc_skew);
	int64_t c = sk->uncert;

	if (!sk->trusted && pc->cpu != 0)
		c += sk->skew < 0 ? -sk->skew : sk->skew;
	return (uint64_t)(((unsigned __int128)(uint64_t)c * 1000000000u + tsc.hz - 1) / tsc.hz);
}

/* The pair's figures, from the stamps both sides converted. */
static void c2c_report(unsigned i, unsigned j)
{
	uint64_t n = samples, bound = c2c_cpu_bound(cpus[i]) + c2c_cpu_bound(cpus[j]);
	int64_t one, lo, hi;
	uint64_t half;

	for (uint64_t r = 0; r < n; r++)
		send_ns[r] = recv_ns[r] - send_ns[r];	/* one-way, corrected timeline */
	one = lab_percentile_s64(send_ns, n, 50);
	lo = lab_percentile_s64(send_ns, n, 10);
	hi = lab_percentile_s64(send_ns, n, 90);
	half = (uint64_t)((unsigned __int128)lab_percentile(rtt, n, 50) * 1000000000u / tsc.hz /
			  2);
	printk("c2c: from=%u to=%u one_way_ns=%lld bound_ns=%llu rtt_half_ns=%llu samples=%llu "
	       "spread_ns=%lld min_ns=%lld rtt_min_half_ns=%llu meaningful=%s\n", i, j,
	       (long long)one, (unsigned long long)bound, (unsigned long long)half,
	       (unsigned long long)n, (long long)(hi - lo), (long long)send_ns[0],
	       (unsigned long long)((unsigned __int128)rtt[0] * 1000000000u / tsc.hz / 2),
	       lab_c2c_meaningful(one, bound) ? "yes" : "no");
	trace_c2c(i, j, one, bound, half, (uint32_t)n);
}

enum { PAIR_OK, PAIR_FAILED, PAIR_STUCK };

/*
 * One ordered pair: i sends, j receives; the boot CPU's side (if any)
 * inline. PAIR_FAILED: a side gave up and both ended; PAIR_STUCK: a side
 * may still be running.
 */
static int c2c_pair(unsigned i, unsigned j)
{
	bool ok = true;

	x.slot = x.ready = x.pp = 0;
	x.failed = 0;
	x.from = i;
	x.to = j;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* before the calls post them */
	if (i != 0 && !smp_call_async(i, c2c_sender, NULL))
		return PAIR_STUCK;
	if (j != 0 && !smp_call_async(j, c2c_receiver, NULL)) {
		__atomic_store_n(&x.failed, 1, __ATOMIC_RELAXED);	/* i gives up at once */
		ok = false;
	}
	if (i == 0)
		c2c_sender(NULL);
	if (j == 0 && ok)
		c2c_receiver(NULL);
	if (i != 0 && !c2c_wait_side(i))
		return PAIR_STUCK;
	if (j != 0 && ok && !c2c_wait_side(j))
		return PAIR_STUCK;
	if (!ok || x.failed) {
		printk("c2c: from=%u to=%u failed: a side waited %u s for the other, or did not "
		       "take the call\n", i, j, WAIT_S);
		return PAIR_FAILED;
	}
	c2c_report(i, j);
	return PAIR_OK;
}

bool c2c_job(void)
{
	unsigned online = 0, pairs = 0, failed = 0;

	if (!tsc.hz || tsc_now_ns() < 0) {
		printk("c2c: the TSC is not calibrated; nothing to measure with\n");
		return false;
	}
	for (unsigned c = 0; c < cpu_count; c++)
		online += cpus[c] && cpus[c]->online;
	printk("c2c: cpus=%u pairs=%u samples=%llu\n", online, online * (online - 1),
	       (unsigned long long)samples);
	if (online < 2) {
		printk("c2c: no pairs: one CPU online\n");
		return true;
	}
	buf_pages = (3 * samples * sizeof(uint64_t) + PAGE_SIZE - 1) / PAGE_SIZE;
	send_ns = (int64_t *)(uintptr_t)pmm_alloc(buf_pages, 1);
	if (!send_ns) {
		printk("c2c: no memory for %llu pages of samples\n",
		       (unsigned long long)buf_pages);
		return false;
	}
	recv_ns = send_ns + samples;
	rtt = (uint64_t *)(recv_ns + samples);
	for (unsigned i = 0; i < cpu_count; i++)
		for (unsigned j = 0; j < cpu_count; j++) {
			if (i == j || !cpus[i] || !cpus[j] || !cpus[i]->online || !cpus[j]->online)
				continue;
			int st;

			watchdog_touch();
			st = c2c_pair(i, j);
			if (st == PAIR_STUCK)	/* a side may still run: samples stay allocated */
				return false;
			pairs += st == PAIR_OK;
			failed += st == PAIR_FAILED;
		}
	printk("c2c: done pairs=%u failed=%u\n", pairs, failed);
	pmm_free((uintptr_t)send_ns, buf_pages);
	return !failed;
}
