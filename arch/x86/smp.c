/*
 * SMP bring-up and cross-CPU TSC measurement.
 *
 * Start-up (Intel SDM vol. 3A 8.4.4, MultiProcessor Specification B.4):
 * for each enabled MADT processor in turn, INIT, 10 ms, SIPI, 200 us, and
 * a second SIPI if the AP has not shown life. The AP runs the trampoline
 * (boot/trampoline.asm) at TRAMP_BASE into ap_entry() on its own stack.
 * APs start one at a time, so one parameter block serves them all. An AP
 * that is not online within AP_TIMEOUT_MS is reported, sent INIT again
 * (back to wait-for-SIPI, so it cannot wake later on another AP's
 * parameters) and skipped.
 *
 * MADT entries marked online-capable but not enabled describe sockets that
 * may be hot-added; nothing is there to start, so they are listed, not
 * started.
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
#include <arch/acpi.h>
#include <arch/clockwd.h>
#include <arch/cpu.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include <arch/tsc_inject.h>
#include <arch/watchdog.h>
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/panic.h"
#include "kernel/spinlock.h"
#include "kernel/tracing.h"

#define TRAMP_BASE		0x8000
#define TRAMP_PARAMS		(TRAMP_BASE + 0xF00)
#define AP_TIMEOUT_MS		2000
#define PINGPONG_SAMPLES	2000
#define PROBE_SAMPLES		8	/* alternating spin modes first */
#define PINGPONG_MAX_MS		2000	/* loaded hosts need time to co-schedule vCPUs */
#define PINGPONG_GOOD_NS	2000	/* a round trip this short ends the search */
#define WARP_ITERS		20000
#define WARP_MAX_MS		50
#define SYNC_WAIT_MS		5000
#define SKEW_UNCERT_MAX_NS	20000	/* a bound worse than 20 us is not a bound */
#define MSR_TSC_ADJUST		0x3B

struct tramp_params {
	uint64_t cr3;			/* page-table root */
	uint64_t stack;			/* AP's stack top */
	uint64_t entry;			/* ap_entry */
	uint64_t arg;			/* its struct percpu */
	volatile uint8_t started;	/* set by the trampoline's first instructions */
} __packed;

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

extern const uint8_t trampoline_start[], trampoline_end[];

static uint64_t maxcpus = MAX_CPUS;
CMDLINE_OPTION(maxcpus, .name = "maxcpus", .type = OPT_UINT, .var = &maxcpus,
	       .min = 1, .max = MAX_CPUS, .help = "start at most this many CPUs (boot CPU included)");

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

static uint64_t ms_to_cycles(uint64_t ms)
{
	return (tsc.hz ? tsc.hz : 3000000000ull) / 1000 * ms;
}

static void smp_delay_us(uint64_t us)
{
	uint64_t t0 = rdtsc(), d = (tsc.hz ? tsc.hz : 3000000000ull) / 1000000 * us;

	while (rdtsc() - t0 < d)
		cpu_relax();
}

/* Wait until *p == v, at most ms milliseconds of TSC time. */
static bool smp_wait_eq32(volatile uint32_t *p, uint32_t v, uint64_t ms)
{
	uint64_t t0 = rdtsc(), lim = ms_to_cycles(ms);

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
	uint64_t t0 = rdtsc(), lim = ms_to_cycles(WARP_MAX_MS);
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

static void ap_sync_loop(void)
{
	bool traced = false;

	for (;;) {
		uint32_t ph = __atomic_load_n(&sync.phase, __ATOMIC_ACQUIRE);
		/*
		 * The warp test or the end: no IA32_TSC_ADJUST write comes after
		 * either, so this CPU's clock is final and its ring buffer may
		 * start (boot tracing: its side of the warp test is in it).
		 */
		if (!traced && (ph == SYNC_WARP || ph == SYNC_DONE)) {
			tracing_ap_start(this_cpu());
			traced = true;
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

static void on_call_ipi(struct trap_frame *f)
{
	struct percpu *pc = this_cpu();

	(void)f;
	pc->ipi_count++;
	trace_ipi_recv(pc->call_from, VEC_CALL);
	lapic_eoi();	/* the work itself runs from the idle loop */
}

/* NMIs are expected (tests, benchmarks): count and record them. Never traced (NMI). */
static notrace void on_nmi(struct trap_frame *f)
{
	panic_nmi(f);	/* another CPU panics: stop here for good */
	trace_nmi((uint32_t)this_cpu()->nmi_count);
}

static void __attribute__((noreturn)) ap_idle(struct percpu *pc)
{
	for (;;) {
		irq_disable();
		void (*fn)(void *) = __atomic_load_n(&pc->call_fn, __ATOMIC_ACQUIRE);
		if (!fn) {
			cpu_sleep_until_irq();
			continue;
		}
		irq_enable();
		watchdog_work_begin();	/* a call is watched work; idle is not */
		fn(pc->call_arg);
		watchdog_work_end();
		__atomic_store_n(&pc->call_done, pc->call_done + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&pc->call_fn, NULL, __ATOMIC_RELEASE);
	}
}

void ap_entry(struct percpu *pc);

/*
 * The boot CPU's EFER.NXE, which every AP takes before anything else: the
 * page tables are shared, and the firmware may leave NXE set on the boot
 * CPU (OVMF does; entry.asm keeps EFER's other bits), so a page-table entry
 * with the NX bit (text_poke()'s window) is valid there and a reserved-bit
 * page fault on an AP whose NXE is clear (seen: a tracer switch on an AP
 * under OVMF, #PF error 0xa in text_poke()).
 */
static uint64_t bsp_efer_nxe;

/* Not traced: its entry runs before percpu_load() gives this CPU its %gs. */
notrace void ap_entry(struct percpu *pc)
{
	if (bsp_efer_nxe)
		wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_NXE);
	percpu_load(pc);
	idt_load();
	lapic_init_cpu();
	__atomic_store_n(&pc->online, 1, __ATOMIC_RELEASE);
	ap_sync_loop();
	ap_idle(pc);
}

/* ---- BSP side ----------------------------------------------------------- */

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
	uint64_t best = UINT64_MAX, t_start = rdtsc(), lim = ms_to_cycles(pl->max_ms);
	uint64_t hard = pl->hard_ms ? ms_to_cycles(pl->hard_ms) : UINT64_MAX;
	uint64_t best_mode[2] = { UINT64_MAX, UINT64_MAX };
	struct skew_sample m = { 0 };
	unsigned n = 0;

	__atomic_store_n(&sync.seq, pl->seq_base, __ATOMIC_RELEASE);
	__atomic_store_n(&sync.phase, SYNC_PINGPONG, __ATOMIC_RELEASE);
	uint64_t good = tsc.hz / 1000000 * PINGPONG_GOOD_NS / 1000;

	for (uint64_t i = 0; i < PINGPONG_SAMPLES && (n < PROBE_SAMPLES || rdtsc() - t_start < lim); i++) {
		if (n >= PINGPONG_SAMPLES / 4 && best < good)
			break;	/* enough samples and a tight one among them */
		/* Probe both spin modes, then keep the faster one. */
		sync.use_pause = i < PROBE_SAMPLES ? (i & 1) : best_mode[1] < best_mode[0];
		uint64_t t0 = rdtsc_ordered();
		__atomic_store_n(&sync.seq, pl->seq_base + 2 * i + 1, __ATOMIC_RELEASE);
		uint64_t w0 = rdtsc(), wl = ms_to_cycles(pl->wait_ms);
		bool late = false;
		while (__atomic_load_n(&sync.seq, __ATOMIC_ACQUIRE) != pl->seq_base + 2 * i + 2) {
			uint64_t now = rdtsc();
			if (now - w0 > wl || now - t_start > hard) {
				late = true;
				break;
			}
			/* No answer within 1 ms without pause: icount; pause now. */
			if (!sync.use_pause && now - w0 > ms_to_cycles(1))
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
	const struct percpu *to = cpu < MAX_CPUS ? cpus[cpu] : NULL, *from = this_cpu();
	__int128 d;

	if (!to || to == from)
		return 0;
	d = (__int128)to->tsc_skew - to->tsc_skew_uncert - from->tsc_skew - from->tsc_skew_uncert;
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

static void measure_tsc(struct percpu *pc)
{
	struct skew_sample m = { 0 };
	uint64_t warps = 0, max_warp = 0;
	const char *failed = NULL;
	bool ok, clock;

	ok = smp_pingpong(&m, &bringup_limits);
	if (!ok)
		failed = "ping-pong";
	if (ok && m.beyond) {
		printk("smp: cpu=%u WARNING: TSC skew of about %s%llu cycles with bound %lld is beyond "
		       "what a signed 64-bit skew holds; not corrected, its stamps are marked "
		       "untrusted\n", pc->cpu, m.skew < 0 ? "-" : "",
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
			m = (struct skew_sample){ .uncert = before.uncert, .samples = before.samples };
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

	pc->tsc_skew = m.skew;
	pc->tsc_skew_uncert = m.uncert;
	pc->tsc_warps = warps;
	pc->tsc_trusted = ok && clock && warps == 0 && smp_skew_bound_ok((uint64_t)m.uncert, tsc.hz);
	printk("smp: cpu=%u apic_id=%u tsc_skew_cycles=%lld uncertainty_cycles=%lld warps=%llu\n",
	       pc->cpu, pc->apic_id, (long long)m.skew, (long long)m.uncert,
	       (unsigned long long)warps);
	/* Every reason that applies: a wide bound explains warps after correction. */
	if (!ok && failed)
		printk("smp: cpu=%u WARNING: TSC measurement did not complete (%s timed out); "
		       "its stamps are marked untrusted\n", pc->cpu, failed);
	if (ok && !smp_skew_bound_ok((uint64_t)m.uncert, tsc.hz))
		printk("smp: cpu=%u WARNING: skew bound %lld cycles is too wide (%u samples); "
		       "its stamps are marked untrusted\n", pc->cpu, (long long)m.uncert, m.samples);
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

static bool tramp_page_free(void)
{
	for (unsigned i = 0; i < boot_info.mmap_count; i++) {
		const struct mem_region *r = &boot_info.mmap[i];
		if (r->type == MEM_AVAILABLE && r->base <= TRAMP_BASE &&
		    r->base + r->len >= TRAMP_BASE + 0x1000)
			return !(boot_info.mbi.start < TRAMP_BASE + 0x1000 &&
				 boot_info.mbi.end > TRAMP_BASE);
	}
	return false;
}

/*
 * Test facility: the AP with this APIC id is sent neither INIT nor SIPI,
 * so it never answers, as a dead or missing CPU the MADT lists would not:
 * its start times out and it is skipped, under QEMU too.
 */
static int64_t inject_ap_silent = -1;
CMDLINE_OPTION(inject_ap_silent, .name = "inject.ap_silent", .type = OPT_INT,
	       .var = &inject_ap_silent, .min = (uint64_t)-1, .max = 0xFFFFFFFEull,
	       .help = "test facility: never start the AP with this APIC id, as if it "
		       "did not answer (its start times out, it is skipped); -1 = none");

static bool start_ap(struct percpu *pc)
{
	struct tramp_params *p = (struct tramp_params *)(uintptr_t)TRAMP_PARAMS;
	uint64_t t0, lim = ms_to_cycles(AP_TIMEOUT_MS);
	bool silent = inject_ap_silent == (int64_t)pc->apic_id;

	p->cr3 = read_cr3();
	p->stack = pc->kstack_top;
	p->entry = (uint64_t)ap_entry;
	p->arg = (uint64_t)pc;
	p->started = 0;
	__atomic_store_n(&sync.phase, SYNC_IDLE, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);

	if (!silent)
		lapic_send_init(pc->apic_id);
	smp_delay_us(10000);
	if (!silent)
		lapic_send_sipi(pc->apic_id, TRAMP_BASE >> 12);
	smp_delay_us(200);
	if (!p->started) {
		if (!silent)
			lapic_send_sipi(pc->apic_id, TRAMP_BASE >> 12);
		smp_delay_us(200);
	}
	t0 = rdtsc();
	while (!__atomic_load_n(&pc->online, __ATOMIC_ACQUIRE)) {
		if (rdtsc() - t0 > lim) {
			if (!silent)
				lapic_send_init(pc->apic_id);	/* park it again */
			return false;
		}
		cpu_relax();
	}
	return true;
}

/*
 * How many CPUs smp_init() will try to start: the MADT's enabled entries
 * (1 without a MADT), at most maxcpus=. What tracing_init_boot() budgets
 * its pages for, before the APs exist.
 */
unsigned smp_cpus_planned(void)
{
	unsigned present = 0;

	for (unsigned i = 0; i < acpi.cpu_count; i++)
		present += acpi.cpus[i].enabled;
	if (!acpi.has_madt || present == 0)
		present = 1;
	return present > maxcpus ? (unsigned)maxcpus : present;
}

void smp_init(void)
{
	uint64_t t0 = rdtsc();
	unsigned present = 0, next = 1;
	struct percpu *bsp = cpus[0];

	bsp_efer_nxe = rdmsr(MSR_EFER) & EFER_NXE;
	trap_set_handler(VEC_CALL, on_call_ipi);
	trap_set_handler(VEC_NMI, on_nmi);
	for (unsigned i = 0; i < acpi.cpu_count; i++)
		present += acpi.cpus[i].enabled;
	if (!acpi.has_madt)
		present = 1;
	printk("smp: cpu=0 apic_id=%u tsc_skew_cycles=0 uncertainty_cycles=0 warps=0\n",
	       bsp->apic_id);

	/* Before any AP runs kernel code; with one CPU too (inject.tsc_drift_ppm=). */
	tsc_inject_init();
	if (present > 1 && !tramp_page_free()) {
		printk("smp: the trampoline page 0x%x is not free RAM; APs not started\n",
		       TRAMP_BASE);
	} else if (present > 1) {
		memcpy((void *)(uintptr_t)TRAMP_BASE, trampoline_start,
		       trampoline_end - trampoline_start);
		for (unsigned i = 0; i < acpi.cpu_count; i++) {
			const struct acpi_cpu *c = &acpi.cpus[i];
			if (c->apic_id == bsp->apic_id)
				continue;
			if (!c->enabled) {
				if (c->online_capable)
					printk("smp: apic_id=%u is online-capable but not enabled; "
					       "not started\n", c->apic_id);
				continue;
			}
			if (next >= maxcpus) {
				printk("smp: apic_id=%u not started (maxcpus=%llu)\n", c->apic_id,
				       (unsigned long long)maxcpus);
				continue;
			}
			if (!lapic_x2apic && c->apic_id > 0xFE) {
				printk("smp: apic_id=%u needs x2APIC mode; not started\n", c->apic_id);
				continue;
			}
			struct percpu *pc = percpu_alloc(next, c->apic_id, c->uid);
			if (!pc) {
				printk("smp: no memory for cpu %u; not started\n", next);
				break;
			}
			pc->tsc_inject = tsc_inject_skew(next);
			tracing_prepare_ap(next);	/* its buffer's memory, built by the AP */
			if (!start_ap(pc)) {
				printk("smp: apic_id=%u did not answer within %u ms; skipped\n",
				       c->apic_id, AP_TIMEOUT_MS);
				percpu_free(pc);	/* parked: it cannot run them */
				cpu_count = next;	/* the next AP takes this id, and its */
				continue;		/* buffer's memory (tracing_prepare_ap) */
			}
			cpus_online++;
			measure_tsc(pc);
			next++;
		}
	}
	printk("smp: online=%u present=%u bringup_ms=%llu\n", cpus_online, present,
	       (unsigned long long)(tsc.hz ? (rdtsc() - t0) / (tsc.hz / 1000) : 0));
	clock_watchdog_init();	/* after bring-up: re-measures what was just measured */
}

bool smp_call_async(unsigned cpu, void (*fn)(void *), void *arg)
{
	struct percpu *pc = cpu < cpu_count ? cpus[cpu] : NULL;

	if (!pc || !pc->online)
		return false;
	if (cpu == this_cpu()->cpu) {
		fn(arg);
		return true;
	}
	if (__atomic_load_n(&pc->call_fn, __ATOMIC_ACQUIRE))
		return false;
	pc->call_arg = arg;
	pc->call_from = this_cpu()->cpu;
	__atomic_store_n(&pc->call_fn, fn, __ATOMIC_RELEASE);
	trace_ipi_send(cpu, VEC_CALL);
	lapic_send_ipi(pc->apic_id, VEC_CALL);
	return true;
}

bool smp_call_wait(unsigned cpu, uint64_t timeout_ms)
{
	struct percpu *pc = cpu < cpu_count ? cpus[cpu] : NULL;
	uint64_t t0 = rdtsc(), lim = ms_to_cycles(timeout_ms);
	bool paused, done = true;

	if (!pc)
		return false;
	paused = watchdog_pause();	/* bounded, and that CPU is watched (arch/watchdog.h) */
	while (__atomic_load_n(&pc->call_fn, __ATOMIC_ACQUIRE)) {
		if (rdtsc() - t0 > lim) {
			done = false;
			break;
		}
		cpu_relax();
	}
	watchdog_resume(paused);
	return done;
}


/* ---- re-measuring a running AP's skew (the clock watchdog) --------------- */

/*
 * After bring-up an AP no longer sits in ap_sync_loop(): it idles, or runs
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
	uint64_t t0 = rdtsc(), lim = ms_to_cycles(resync.ap_ms);

	(void)f;
	if (gen && __atomic_load_n(&resync.cpu, __ATOMIC_RELAXED) == me) {
		while (rdtsc() - t0 < lim && __atomic_load_n(&resync.gen, __ATOMIC_ACQUIRE) == gen) {
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
