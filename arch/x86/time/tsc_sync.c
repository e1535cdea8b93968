/*
 * Cross-CPU TSC synchronisation: each AP's skew against the boot CPU,
 * measured at bring-up (tsc_sync_measure(), with the AP in tsc_sync_ap())
 * and again on a running AP for the clock watchdog (smp_tsc_remeasure()).
 *
 * TSC measurement, per AP, against the boot CPU (BSP), through one cache
 * line both CPUs spin on (all waits bounded, all spins with pause, which
 * also lets TCG's round-robin mode under icount switch CPUs):
 *
 *   ping-pong     BSP: t0 = rdtsc; seq = 2i+1    AP: sees odd seq;
 *                 ...                                a = rdtsc; seq = 2i+2
 *                 BSP: sees 2i+2; t1 = rdtsc
 *     a was read between t0 and t1 on the BSP's clock, so
 *       skew = a - m,  m = t0 + (t1 - t0) / 2,  |error| <= (t1 - t0) / 2.
 *     The sample with the smallest round trip wins.
 *
 *   clock         the AP's conversion is the BSP's, moved so that the AP's
 *                 reading a converts to exactly what the BSP's reading m
 *                 does: the BSP's conversion rebased (exactly) to m, then
 *                 re-anchored at cycle_base = a, offset_ns 0. For every AP
 *                 reading x, ns_AP(x) = ns_BSP(x - skew) bit for bit: the
 *                 skew, of any size, is never converted to ns, so no
 *                 rounding of mult scales with it.
 *
 *   warp test     then both CPUs, for WARP_ITERS rounds: take a shared
 *                 lock, read the TSC and convert it with their own clock,
 *                 compare with the last ns stored under the lock, store
 *                 theirs. A value below the last is a warp: corrected time
 *                 went backwards across CPUs.
 *
 * A CPU is trusted when the measurement completed, the warp test found no
 * warp on corrected time, and the skew's bound is at most 20 us
 * (smp_skew_bound_ok()). A constant skew, measured and corrected, leaves a
 * CPU trusted; a wrong correction or a drifting TSC shows up as warps.
 *
 * rdtsc is preceded by lfence on both sides so that it is not executed
 * before the load that observed the other CPU's store.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include "kernel/console.h"
#include "kernel/cpu_hooks.h"
#include "kernel/spinlock.h"
#include "../smp_internal.h"

#define PINGPONG_SAMPLES	2000
#define PROBE_SAMPLES		8	/* alternating spin modes first */
#define PINGPONG_MAX_MS		2000	/* loaded hosts need time to co-schedule vCPUs */
#define PINGPONG_GOOD_NS	2000	/* a round trip this short ends the search */
#define WARP_ITERS		20000
#define WARP_MAX_MS		50
#define SYNC_WAIT_MS		5000
#define SKEW_UNCERT_MAX_NS	20000	/* a bound worse than 20 us is not a bound */
#define MSR_TSC_ADJUST		0x3B

DEFINE_PER_CPU(struct tsc_skew, tsc_skew);	/* <arch/tsc.h> */

enum sync_phase { SYNC_IDLE, SYNC_PINGPONG, SYNC_WARP, SYNC_ADJUST, SYNC_DONE };

/* Shared between the BSP and the AP being measured; one line each. */
static struct {
	volatile uint64_t seq;		/* ping-pong: odd = BSP's request */
	volatile uint64_t ap_tsc;	/* AP's reading for the current request */
	volatile uint32_t phase;	/* enum sync_phase, set by the BSP */
	volatile uint32_t ap_done;	/* AP finished the current phase */
	volatile int64_t adjust;	/* value to add to IA32_TSC_ADJUST */
	volatile uint32_t ap_left;	/* AP saw SYNC_DONE and left the loop */
	volatile uint32_t use_pause;	/* spin with pause (see sync_relax) */
} sync __aligned(CACHELINE_SIZE);

static struct {
	struct spinlock lock;		/* warp test lock */
	int64_t last;			/* last corrected time stored under it (ns) */
	uint64_t warps;			/* backwards steps seen */
	uint64_t max_warp;		/* largest, ns */
} warp __aligned(CACHELINE_SIZE);

/* One ping-pong's verdict: the best sample. */
struct skew_sample {
	int64_t skew;			/* AP's TSC minus the BSP's, cycles */
	int64_t uncert;			/* bound on its error, cycles */
	uint64_t ap_tsc;		/* the AP's reading a of the best sample */
	uint64_t bsp_tsc;		/* the BSP's reading m it is matched with */
	unsigned samples;		/* round trips made */
	bool beyond;			/* |a - m| + uncert > INT64_MAX: skew saturated */
};

/*
 * a - m exactly (both real 64-bit readings, so their difference is one of
 * [-2^64 + 1, 2^64 - 1]), as the skew to store: a skew whose interval
 * [d - u, d + u] does not fit a signed 64-bit figure cannot be corrected
 * (the conversion subtracts it modulo 2^64, so one wrong by 2^64 would
 * look right) and is saturated, with *beyond set: the CPU is untrusted.
 */
static int64_t skew_of(uint64_t a, uint64_t m, uint64_t u, bool *beyond)
{
	__int128 d = (__int128)a - (__int128)m;

	*beyond = d + (__int128)u > INT64_MAX || d - (__int128)u < -(__int128)INT64_MAX;
	if (d > INT64_MAX)
		return INT64_MAX;
	return d < -(__int128)INT64_MAX ? -INT64_MAX : (int64_t)d;
}

/*
 * Spinning in the ping-pong, with or without pause. Real CPUs want pause.
 * Under multi-threaded TCG a pause leaves translated code and the host may
 * schedule the vCPU thread away: round trips of milliseconds. Under icount
 * (one thread, CPUs round-robin) only a pause hands the emulator to the
 * other CPU: without it a round trip costs a 100 ms slice. So the first
 * samples try both and the rest use whichever gave the shorter round trip.
 */
static inline void sync_relax(void)
{
	if (sync.use_pause)
		cpu_relax();
	else
		barrier();
}

static inline uint64_t rdtsc_ordered(void)
{
	__asm__ __volatile__("lfence" ::: "memory");
	return rdtsc();
}

/* Wait until *p == v, at most ms milliseconds of TSC time. */
static bool smp_wait_eq32(volatile uint32_t *p, uint32_t v, uint64_t ms)
{
	uint64_t t0 = rdtsc(), lim = tsc_ms_to_cycles(ms);

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v) {
		if (rdtsc() - t0 > lim)
			return false;
		cpu_relax();
	}
	return true;
}

/*
 * Corrected time on this CPU: its TSC through its own conversion, the one
 * every reader of its stamps uses. Uncalibrated (no conversion), the raw
 * TSC: such a CPU is untrusted whatever the test finds.
 */
static int64_t warp_now(const struct clock_conv *c)
{
	uint64_t x = rdtsc_ordered();

	return c ? clock_cycles_to_ns(c, x) : (int64_t)(x >> 1);	/* halved: fits int64_t */
}

/*
 * One side of the warp test (both CPUs run it at once): take the lock,
 * read corrected time, compare with the last value stored under the lock
 * by either CPU; a smaller value is a warp.
 */
static void smp_warp_rounds(void)
{
	uint64_t t0 = rdtsc(), lim = tsc_ms_to_cycles(WARP_MAX_MS);
	struct clock_conv conv, *c = NULL;

	if (tsc.hz && !clock_latch_read(this_cpu_ptr(tsc_clock), &conv) && conv.hz)
		c = &conv;
	for (int i = 0; i < WARP_ITERS && rdtsc() - t0 < lim; i++) {
		spin_lock_waiting(&warp.lock, sync_relax);
		int64_t now = warp_now(c);
		if (now < warp.last) {
			warp.warps++;
			if ((uint64_t)(warp.last - now) > warp.max_warp)
				warp.max_warp = (uint64_t)(warp.last - now);
		}
		warp.last = now;
		spin_unlock(&warp.lock);
		/*
		 * Give the other CPU its turn: under icount only a pause
		 * switches CPUs, and without one each CPU would run all its
		 * rounds in its own time slice, never interleaved.
		 */
		sync_relax();
	}
}

/* ---- AP side ------------------------------------------------------------ */

void tsc_sync_ap(void)
{
	bool started = false;

	for (;;) {
		uint32_t ph = __atomic_load_n(&sync.phase, __ATOMIC_ACQUIRE);
		/*
		 * The warp test or the end: no IA32_TSC_ADJUST write comes after
		 * either, so this CPU's clock is final and its start hooks run
		 * (boot tracing: its side of the warp test is in its buffer).
		 */
		if (!started && (ph == SYNC_WARP || ph == SYNC_DONE)) {
			cpu_hooks_start(this_cpu()->cpu);
			started = true;
		}
		if (ph == SYNC_DONE) {
			__atomic_store_n(&sync.ap_left, 1, __ATOMIC_RELEASE);
			return;
		}
		if (ph == SYNC_PINGPONG) {
			uint64_t s = __atomic_load_n(&sync.seq, __ATOMIC_ACQUIRE);
			if (s & 1) {
				sync.ap_tsc = rdtsc_ordered();
				__atomic_store_n(&sync.seq, s + 1, __ATOMIC_RELEASE);
			}
		} else if (ph == SYNC_WARP && !sync.ap_done) {
			smp_warp_rounds();
			__atomic_store_n(&sync.ap_done, 1, __ATOMIC_RELEASE);
		} else if (ph == SYNC_ADJUST && !sync.ap_done) {
			wrmsr(MSR_TSC_ADJUST, rdmsr(MSR_TSC_ADJUST) + sync.adjust);
			__atomic_store_n(&sync.ap_done, 1, __ATOMIC_RELEASE);
		}
		sync_relax();
	}
}

/* ---- BSP side ----------------------------------------------------------- */

void tsc_sync_idle(void)
{
	__atomic_store_n(&sync.phase, SYNC_IDLE, __ATOMIC_RELEASE);
}

/*
 * How long a ping-pong may take and where its answers are.  Bring-up waits
 * long (the AP has nothing else to do); the clock watchdog's re-measure is
 * bounded as a whole by hard_ms and keeps the samples it has if that runs out.
 */
struct pingpong_limits {
	uint64_t max_ms;		/* searching, once the probe samples are in */
	uint64_t wait_ms;		/* one round trip */
	uint64_t hard_ms;		/* everything, 0 = no such bound */
	uint64_t seq_base;		/* requests are seq_base + 2i + 1 (a generation) */
	volatile uint64_t *ap_tsc;	/* where the AP leaves its reading */
};

static const struct pingpong_limits bringup_limits = {
	PINGPONG_MAX_MS, SYNC_WAIT_MS, 0, 0, &sync.ap_tsc
};

/*
 * Measure the AP's skew; *out is written only when at least one round trip
 * completed, so a failed re-measurement leaves the caller's last verdict.
 */
static bool smp_pingpong(struct skew_sample *out, const struct pingpong_limits *pl)
{
	uint64_t best = UINT64_MAX, t_start = rdtsc(), lim = tsc_ms_to_cycles(pl->max_ms);
	uint64_t hard = pl->hard_ms ? tsc_ms_to_cycles(pl->hard_ms) : UINT64_MAX;
	uint64_t best_mode[2] = { UINT64_MAX, UINT64_MAX };
	struct skew_sample m = { 0 };
	unsigned n = 0;

	__atomic_store_n(&sync.seq, pl->seq_base, __ATOMIC_RELEASE);
	__atomic_store_n(&sync.phase, SYNC_PINGPONG, __ATOMIC_RELEASE);
	uint64_t good = tsc.hz / 1000000 * PINGPONG_GOOD_NS / 1000;

	for (uint64_t i = 0; i < PINGPONG_SAMPLES &&
			     (n < PROBE_SAMPLES || rdtsc() - t_start < lim); i++) {
		if (n >= PINGPONG_SAMPLES / 4 && best < good)
			break;	/* enough samples and a tight one among them */
		/* Probe both spin modes, then keep the faster one. */
		sync.use_pause = i < PROBE_SAMPLES ? (i & 1) : best_mode[1] < best_mode[0];
		uint64_t t0 = rdtsc_ordered();
		__atomic_store_n(&sync.seq, pl->seq_base + 2 * i + 1, __ATOMIC_RELEASE);
		uint64_t w0 = rdtsc(), wl = tsc_ms_to_cycles(pl->wait_ms);
		bool late = false;
		while (__atomic_load_n(&sync.seq, __ATOMIC_ACQUIRE) != pl->seq_base + 2 * i + 2) {
			uint64_t now = rdtsc();
			if (now - w0 > wl || now - t_start > hard) {
				late = true;
				break;
			}
			/* No answer within 1 ms without pause: icount; pause now. */
			if (!sync.use_pause && now - w0 > tsc_ms_to_cycles(1))
				sync.use_pause = 1;
			sync_relax();
		}
		if (late && (!pl->hard_ms || n == 0)) {
			__atomic_store_n(&sync.phase, SYNC_IDLE, __ATOMIC_RELEASE);
			return false;
		}
		if (late)
			break;	/* out of time: the samples so far stand */
		uint64_t t1 = rdtsc_ordered();
		uint64_t a = *pl->ap_tsc;
		n++;
		if (t1 - t0 < best_mode[sync.use_pause])
			best_mode[sync.use_pause] = t1 - t0;
		if (t1 - t0 < best) {
			best = t1 - t0;
			m.ap_tsc = a;
			m.bsp_tsc = t0 + (t1 - t0) / 2;
			m.uncert = (int64_t)((t1 - t0 + 1) / 2);
			m.skew = skew_of(a, m.bsp_tsc, (uint64_t)m.uncert, &m.beyond);
		}
	}
	__atomic_store_n(&sync.phase, SYNC_IDLE, __ATOMIC_RELEASE);
	if (n == 0)
		return false;
	m.samples = n;
	*out = m;
	return true;
}

static bool warp_test(uint64_t *warps, uint64_t *max_warp)
{
	warp.lock = (struct spinlock){ 0 };
	warp.last = INT64_MIN;
	warp.warps = 0;
	warp.max_warp = 0;
	__atomic_store_n(&sync.ap_done, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&sync.phase, SYNC_WARP, __ATOMIC_RELEASE);
	smp_warp_rounds();
	bool ok = smp_wait_eq32(&sync.ap_done, 1, SYNC_WAIT_MS);
	__atomic_store_n(&sync.phase, SYNC_IDLE, __ATOMIC_RELEASE);
	*warps = warp.warps;
	*max_warp = warp.max_warp;
	return ok;
}

static bool ap_adjust(int64_t delta)
{
	sync.adjust = delta;
	__atomic_store_n(&sync.ap_done, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&sync.phase, SYNC_ADJUST, __ATOMIC_RELEASE);
	bool ok = smp_wait_eq32(&sync.ap_done, 1, SYNC_WAIT_MS);
	__atomic_store_n(&sync.phase, SYNC_IDLE, __ATOMIC_RELEASE);
	return ok;
}

/*
 * Is a skew bound of uncert cycles at hz within SKEW_UNCERT_MAX_NS? Exactly:
 * uncert / hz s <= 20 us  <=>  uncert * 10^9 <= 20000 * hz, both sides
 * integers, evaluated in 128 bits (uncert up to 2^63, hz up to 2^64).
 */
bool smp_skew_bound_ok(uint64_t uncert_cycles, uint64_t hz)
{
	return hz && (unsigned __int128)uncert_cycles * CLOCK_NSEC_PER_SEC <=
		     (unsigned __int128)SKEW_UNCERT_MAX_NS * hz;
}

/*
 * A lower bound of CPU cpu's TSC minus the calling CPU's, in cycles: each
 * measured skew (to the BSP's) minus its bound, the caller's plus its own;
 * saturated to the int64 range.  What another CPU needs to start cpu's
 * ring buffer at a base that cpu's clock has already passed.
 */
int64_t smp_tsc_ahead_min(unsigned cpu)
{
	const struct percpu *pc = cpu < MAX_CPUS ? cpus[cpu] : NULL;
	const struct tsc_skew *to, *from = this_cpu_ptr(tsc_skew);
	__int128 d;

	if (!pc || pc == this_cpu())
		return 0;
	to = percpu_area_ptr(pc, tsc_skew);
	d = (__int128)to->skew - to->uncert - from->skew - from->uncert;
	if (d > INT64_MAX)
		return INT64_MAX;
	return d < INT64_MIN ? INT64_MIN : (int64_t)d;
}

/*
 * Build the AP's conversion from the BSP's and the best sample, and
 * publish it. The BSP's conversion is rebased to m (exact: the same ns for
 * every reading) and its base renamed to the AP's reading a = m + skew, so
 * ns_AP(x) = ns_BSP(x - skew) for every x, the skew never converted to ns.
 * A skew within its own uncertainty cannot be told from none; applying it
 * would shift this CPU by up to the uncertainty for nothing (and, where
 * the TSCs are in fact synchronised, make events a fast handshake apart
 * look reordered), so then the AP uses the BSP's conversion unchanged.
 * Returns whether a conversion was published.
 */
static bool set_cpu_clock(struct percpu *pc, const struct skew_sample *m, bool anchor)
{
	struct clock_conv c;

	if (!tsc.hz || clock_latch_read(&tsc_clock_boot, &c))
		return false;
	if (anchor && (m->skew > m->uncert || -m->skew > m->uncert)) {
		if (clock_conv_rebase(&c, m->bsp_tsc))
			return false;
		c.cycle_base = m->ap_tsc;
	}
	clock_latch_write(per_cpu_ptr(tsc_clock, pc->cpu), &c);
	return true;
}

void tsc_sync_measure(struct percpu *pc)
{
	struct tsc_skew *sk = percpu_area_ptr(pc, tsc_skew);
	struct skew_sample m = { 0 };
	uint64_t warps = 0, max_warp = 0;
	const char *failed = NULL;
	bool ok, clock;

	ok = smp_pingpong(&m, &bringup_limits);
	if (!ok)
		failed = "ping-pong";
	if (ok && m.beyond) {
		printk("smp: cpu=%u WARNING: TSC skew of about %s%llu cycles with bound %lld "
		       "is beyond what a signed 64-bit skew holds; not corrected, its stamps "
		       "are marked untrusted\n", pc->cpu, m.skew < 0 ? "-" : "",
		       (unsigned long long)(m.skew < 0 ? -m.skew : m.skew), (long long)m.uncert);
		ok = false;
		failed = NULL;	/* said here */
	}
	if (ok && tsc.tsc_adjust && m.skew && (m.skew > 2 * m.uncert || -m.skew > 2 * m.uncert)) {
		printk("smp: cpu=%u tsc_skew_cycles=%lld: correcting with IA32_TSC_ADJUST\n",
		       pc->cpu, (long long)m.skew);
		/*
		 * After the write the AP's TSC is what it was minus m.skew, so
		 * the clock must not subtract m.skew again: without a fresh
		 * measurement the residual is 0 give or take the first bound
		 * (or, if the AP never confirmed the write, either that or the
		 * old skew), and the CPU is untrusted.
		 */
		bool adjusted = ap_adjust(-m.skew);
		struct skew_sample before = m;
		if (!adjusted || !smp_pingpong(&m, &bringup_limits)) {
			ok = false;
			failed = adjusted ? "ping-pong after TSC_ADJUST" : "TSC_ADJUST";
			m = (struct skew_sample){ .uncert = before.uncert,
						  .samples = before.samples };
			if (!adjusted)
				m.uncert += before.skew < 0 ? -before.skew : before.skew;
		}
	}
	/* The AP's clock first: the warp test runs on corrected time. */
	clock = set_cpu_clock(pc, &m, ok);
	if (ok && !warp_test(&warps, &max_warp)) {
		ok = false;
		failed = "warp test";
	}
	sync.ap_left = 0;
	__atomic_store_n(&sync.phase, SYNC_DONE, __ATOMIC_RELEASE);
	/* The next AP reuses this line: this one must have left first. */
	if (!smp_wait_eq32(&sync.ap_left, 1, SYNC_WAIT_MS)) {
		ok = false;
		failed = "leaving";
	}

	sk->skew = m.skew;
	sk->uncert = m.uncert;
	sk->warps = warps;
	sk->trusted = ok && clock && warps == 0 && smp_skew_bound_ok((uint64_t)m.uncert, tsc.hz);
	printk("smp: cpu=%u apic_id=%u tsc_skew_cycles=%lld uncertainty_cycles=%lld warps=%llu\n",
	       pc->cpu, pc->apic_id, (long long)m.skew, (long long)m.uncert,
	       (unsigned long long)warps);
	/* Every reason that applies: a wide bound explains warps after correction. */
	if (!ok && failed)
		printk("smp: cpu=%u WARNING: TSC measurement did not complete (%s timed out); "
		       "its stamps are marked untrusted\n", pc->cpu, failed);
	if (ok && !smp_skew_bound_ok((uint64_t)m.uncert, tsc.hz))
		printk("smp: cpu=%u WARNING: skew bound %lld cycles is too wide (%u samples); "
		       "its stamps are marked untrusted\n", pc->cpu, (long long)m.uncert,
		       m.samples);
	if (ok && warps)
		printk("smp: cpu=%u WARNING: corrected time warped %llu times (max %llu ns); its "
		       "stamps are marked untrusted\n", pc->cpu, (unsigned long long)warps,
		       (unsigned long long)max_warp);
	if (ok && !clock)
		printk("smp: cpu=%u WARNING: no conversion could be built; its stamps are marked "
		       "untrusted\n", pc->cpu);
	if (clock) {
		struct clock_conv c;
		if (!clock_latch_read(per_cpu_ptr(tsc_clock, pc->cpu), &c))
			printk("clock: cpu=%u " CLOCK_CONV_FMT "\n", pc->cpu, CLOCK_CONV_ARGS(c));
	}
}

/* ---- re-measuring a running AP's skew (the clock watchdog) --------------- */

/*
 * After bring-up an AP no longer sits in tsc_sync_ap(): it idles, or runs
 * a job.  The boot CPU sends it VEC_TSC_RESYNC and plays the same
 * ping-pong; the AP answers from the interrupt handler, so it answers from
 * anything it runs with interrupts on (its idle hlt, the demo), and not
 * while they are off (then the boot CPU gives up at its bound and says
 * so).  Each re-measure is a generation: the requests carry it in seq's
 * high 32 bits, the AP answers only its own generation's requests and
 * with a compare-and-swap, and leaves when the generation ends or its own
 * time bound passes.  A handler that runs late (its IPI taken after the
 * boot CPU gave up) finds another generation, or another CPU named, and
 * returns without touching anything.  Each AP writes its reading in a
 * slot of its own, so a late one cannot overwrite another's.
 */
static struct {
	volatile uint64_t gen;		/* generation being measured, 0 = none */
	volatile uint32_t cpu;		/* the AP asked to answer */
	volatile uint64_t ap_ms;	/* how long the AP may stay in its handler */
} resync __aligned(CACHELINE_SIZE);
static volatile uint64_t resync_tsc[MAX_CPUS];	/* each AP's last reading */
static uint64_t resync_gen;			/* last generation (boot CPU only) */

static void on_resync_ipi(struct trap_frame *f)
{
	uint32_t me = this_cpu()->cpu;
	uint64_t gen = __atomic_load_n(&resync.gen, __ATOMIC_ACQUIRE);
	uint64_t t0 = rdtsc(), lim = tsc_ms_to_cycles(resync.ap_ms);

	(void)f;
	if (gen && __atomic_load_n(&resync.cpu, __ATOMIC_RELAXED) == me) {
		while (rdtsc() - t0 < lim &&
		       __atomic_load_n(&resync.gen, __ATOMIC_ACQUIRE) == gen) {
			uint64_t s = __atomic_load_n(&sync.seq, __ATOMIC_ACQUIRE);
			if (s >> 32 != gen)
				break;
			if (s & 1) {
				resync_tsc[me] = rdtsc_ordered();
				/* Release: the reading before the answer; pairs with the acquire
				 * load of seq in smp_pingpong(). */
				__atomic_compare_exchange_n(&sync.seq, &s, s + 1, false,
							    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
			}
			sync_relax();
		}
	}
	lapic_eoi();
}

int smp_tsc_remeasure(unsigned cpu, uint64_t max_ms, int64_t *skew, int64_t *uncert)
{
	struct percpu *pc = cpu < cpu_count ? cpus[cpu] : NULL;
	struct skew_sample m;
	trap_handler_t h = trap_get_handler(VEC_TSC_RESYNC);
	bool ok;

	if (!pc || !pc->online || cpu == 0 || this_cpu()->cpu != 0 || !tsc.hz)
		return SMP_RESYNC_NONE;
	if (h && h != on_resync_ipi)
		return SMP_RESYNC_VECTOR;
	if (!h)
		trap_set_handler(VEC_TSC_RESYNC, on_resync_ipi);
	uint64_t gen = ++resync_gen & 0xFFFFFFFFull;
	if (!gen)
		gen = ++resync_gen & 0xFFFFFFFFull;
	struct pingpong_limits pl = { max_ms, max_ms, max_ms, gen << 32, &resync_tsc[cpu] };
	resync.ap_ms = 2 * max_ms + 1;
	resync.cpu = cpu;
	__atomic_store_n(&sync.seq, gen << 32, __ATOMIC_RELEASE);
	/* Release: cpu, ap_ms and seq before the generation; pairs with the handler's acquire. */
	__atomic_store_n(&resync.gen, gen, __ATOMIC_RELEASE);
	lapic_send_ipi(pc->apic_id, VEC_TSC_RESYNC);
	ok = smp_pingpong(&m, &pl);
	__atomic_store_n(&resync.gen, 0, __ATOMIC_RELEASE);	/* the AP leaves */
	if (!ok)
		return SMP_RESYNC_TIMEOUT;
	*skew = m.skew;
	*uncert = m.uncert;
	return SMP_RESYNC_OK;
}
