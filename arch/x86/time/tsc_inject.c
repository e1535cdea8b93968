/*
 * Test facility inject.tsc_skew=<cycles>: make every AP's TSC read that
 * many cycles ahead of the boot CPU's, so that tests reach the skew
 * correction that real machines without synchronised TSCs need. Under
 * QEMU every vCPU reads one host TSC, so nothing else gets there.
 *
 * Why not the TSC itself. The architectural ways to move one CPU's TSC are
 * a wrmsr to IA32_TSC (MSR 0x10) or to IA32_TSC_ADJUST (MSR 0x3B). QEMU 7.2
 * under TCG honours neither (measured on an AP, -cpu max, icount and not):
 * after wrmsr(0x10, tsc + 10^9) rdtsc goes on as before and rdmsr(0x10)
 * reads 0; CPUID does not list TSC_ADJUST, and after a write to 0x3B
 * rdmsr(0x3B) reads 0 and rdtsc is unchanged. So the skew is applied in
 * the kernel's own readers instead.
 *
 * How. Every instruction in the kernel that reads the TSC is listed in the
 * tsc_sites section (arch/tsc_site.h). Before the first AP starts, the
 * boot CPU rewrites each one to ud2 (0f 31 -> 0f 0b: rdtsc and ud2 have
 * the same length and first byte, so one byte store changes each site;
 * rdtscp's third byte stays and is skipped). The #UD handler finds the
 * site, reads the real counter with an unlisted instruction, adds this
 * CPU's tsc_inject_offset (0 on the boot CPU, the skew on every AP) and
 * resumes after the site with the result in edx:eax (and TSC_AUX in ecx
 * for rdtscp), as the instruction would have left them.
 *
 * Cost. Without the option nothing is rewritten: the code is byte for
 * byte what was built, and the trace write path runs the same
 * instructions (ktest tsc_sites_intact checks every site). With it, each
 * TSC read on every CPU is an exception: a few hundred instructions.
 *
 * Assumptions and limits:
 *   - every TSC read in the kernel goes through rdtsc() (arch/cpu.h) or
 *     arch_stamp() (arch/trace_arch.h), which list their sites; a read
 *     written elsewhere would see the real TSC;
 *   - the boot CPU patches while no AP runs kernel code, so no CPU can
 *     execute a site while it changes; it writes through text_poke(),
 *     the kernel's code being read-only by then;
 *   - the #UD is taken on the current stack, IST stacks included, and
 *     returns without iretq (isr_common_noiret in isr.asm: popfq, then a
 *     ret to the instruction after the site), because an iretq would end
 *     the CPU's NMI blocking: a TSC read inside an NMI handler would let
 *     the next NMI nest on the same NMI stack. NMIs stay blocked until
 *     the NMI handler's own iretq;
 *   - a negative skew must leave every AP's reading positive: it is
 *     refused if it is not smaller in magnitude than the boot CPU's TSC
 *     at the time of patching (the APs' real TSC only grows from there).
 *
 * The same trap serves the clock watchdog's two test facilities (the
 * watchdog is arch/x86/time/clockwd.c):
 *   - inject.tsc_drift_ppm=<ppm>: from the moment of patching (after
 *     calibration, before any AP starts), every CPU's TSC reads as if it
 *     ran that many ppm fast (negative: slow): real + (real - anchor) *
 *     ppm / 10^6, anchor the boot CPU's reading at patching.  All CPUs
 *     drift alike (their real TSCs are one), so no skew appears; only a
 *     comparison with another clock can see it.  |ppm| < 10^6 keeps every
 *     reading increasing.
 *   - inject.tsc_step=<cycles> (on inject.tsc_step_cpu=, default 1): once
 *     bring-up ends (clock_watchdog_init(), watchdog on or off), that
 *     CPU's TSC jumps by that many cycles (its tsc_inject grows by it, one
 *     aligned store the owner's next trap reads), as a TSC written by
 *     firmware or reset by a deep sleep state would.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/text_poke.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include <arch/tsc_inject.h>
#include <arch/tsc_site.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/cpu_hooks.h"

#define VEC_UD		6
#define OP_0F		0x0F
#define OP_RDTSC	0x31	/* 0f 31 */
#define OP_RDTSCP_1	0x01	/* 0f 01 f9 */
#define OP_RDTSCP_2	0xF9
#define OP_UD2		0x0B	/* 0f 0b */
#define SKEW_MAX	INT64_MAX	/* any skew a signed 64-bit figure holds */
#define DRIFT_MAX_PPM	500000	/* 50%: readings stay increasing, figures stay printable */

/* This CPU's injected offset, added to every TSC read: its own, written by it alone after start. */
static DEFINE_PER_CPU(int64_t, tsc_inject_offset);

static int64_t inject_tsc_skew;
CMDLINE_OPTION(inject_tsc_skew, .name = "inject.tsc_skew", .type = OPT_INT,
	       .var = &inject_tsc_skew, .min = (uint64_t)-SKEW_MAX, .max = (uint64_t)SKEW_MAX,
	       .help = "test facility: every AP's TSC, as the kernel reads it, runs this many "
		       "cycles ahead of the boot CPU's; 0 = off");

static int64_t inject_drift_ppm;
CMDLINE_OPTION(inject_tsc_drift, .name = "inject.tsc_drift_ppm", .type = OPT_INT,
	       .var = &inject_drift_ppm, .min = (uint64_t)-DRIFT_MAX_PPM, .max = DRIFT_MAX_PPM,
	       .help = "test facility: every CPU's TSC, as the kernel reads it, runs this many ppm "
		       "fast (negative: slow) from the end of calibration on; 0 = off");

static int64_t inject_step;
CMDLINE_OPTION(inject_tsc_step, .name = "inject.tsc_step", .type = OPT_INT,
	       .var = &inject_step, .min = (uint64_t)-SKEW_MAX, .max = (uint64_t)SKEW_MAX,
	       .help = "test facility: one CPU's TSC (inject.tsc_step_cpu=) jumps this many cycles "
		       "at the end of bring-up; 0 = off");

static uint64_t inject_step_cpu = 1;
CMDLINE_OPTION(inject_tsc_step_cpu, .name = "inject.tsc_step_cpu", .type = OPT_UINT,
	       .var = &inject_step_cpu, .min = 0, .max = MAX_CPUS - 1,
	       .help = "test facility: the CPU inject.tsc_step= steps (0: the boot CPU)");

static uint64_t inject_step_ms;
CMDLINE_OPTION(inject_tsc_step_ms, .name = "inject.tsc_step_ms", .type = OPT_UINT,
	       .var = &inject_step_ms, .min = 0, .max = 600000,
	       .help = "test facility: inject.tsc_step= happens this many ms after bring-up, "
		       "on that CPU's first TSC read from then on; 0 = at the end of bring-up");

static uint64_t inject_skew_cpu;	/* 0: every AP */
CMDLINE_OPTION(inject_tsc_skew_cpu, .name = "inject.tsc_skew_cpu", .type = OPT_UINT,
	       .var = &inject_skew_cpu, .min = 1, .max = MAX_CPUS - 1,
	       .help = "test facility: inject.tsc_skew= on this AP only, the other APs get "
		       "inject.tsc_skew_others=; unset: every AP");

static int64_t inject_skew_others;
CMDLINE_OPTION(inject_tsc_skew_others, .name = "inject.tsc_skew_others", .type = OPT_INT,
	       .var = &inject_skew_others, .min = (uint64_t)-SKEW_MAX, .max = (uint64_t)SKEW_MAX,
	       .help = "test facility: with inject.tsc_skew_cpu=, the skew of every other AP");

static uint64_t inject_drift_cpu = MAX_CPUS;	/* MAX_CPUS: every CPU */
CMDLINE_OPTION(inject_tsc_drift_cpu, .name = "inject.tsc_drift_cpu", .type = OPT_UINT,
	       .var = &inject_drift_cpu, .min = 0, .max = MAX_CPUS - 1,
	       .help = "test facility: inject.tsc_drift_ppm= on this CPU alone; unset: every CPU");

static bool active;
static uint64_t drift_anchor;	/* real TSC at patching: the drift starts there */
static int64_t drift_ppm;	/* inject.tsc_drift_ppm= once patched */
static uint32_t drift_cpu;	/* the CPU it applies to; MAX_CPUS: all */

/*
 * inject.tsc_step_ms=: the step waits in step_pending until the stepping
 * CPU's own trap reads a real TSC at or past step_at; that CPU alone then
 * adds it to its tsc_inject_offset (so no other CPU ever writes it) and records
 * the reading in step_done_at for tsc_inject_step_poll() to report.
 */
static int64_t step_pending;	/* the step still to happen; 0: none */
static uint64_t step_at;	/* real TSC from which it happens */
static uint64_t step_done_at;	/* real TSC at which it happened; 0: not yet */

static struct tsc_site *sites_begin(void) { return __start_tsc_sites; }
static struct tsc_site *sites_end(void) { return __stop_tsc_sites; }

unsigned tsc_sites_count(void)
{
	return (unsigned)(sites_end() - sites_begin());
}

/* Does the site hold the instruction it was built with? */
static bool site_original(const struct tsc_site *s)
{
	const volatile uint8_t *p = (const volatile uint8_t *)(uintptr_t)s->addr;

	if (s->len == TSC_SITE_RDTSC)
		return p[0] == OP_0F && p[1] == OP_RDTSC;
	if (s->len == TSC_SITE_RDTSCP)
		return p[0] == OP_0F && p[1] == OP_RDTSCP_1 && p[2] == OP_RDTSCP_2;
	return false;
}

unsigned tsc_sites_intact(void)
{
	unsigned n = 0;

	for (const struct tsc_site *s = sites_begin(); s < sites_end(); s++)
		n += site_original(s);
	return n;
}

bool tsc_inject_active(void)
{
	return active;
}

/* Binary search of the table sorted by tsc_inject_init(). */
static const struct tsc_site *site_at(uint64_t rip)
{
	const struct tsc_site *lo = sites_begin(), *hi = sites_end();

	while (lo < hi) {
		const struct tsc_site *mid = lo + (hi - lo) / 2;
		if (mid->addr == rip)
			return mid;
		if (mid->addr < rip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A rewritten site: do what the instruction would have done, skewed. */
static void on_ud(struct trap_frame *f)
{
	const struct tsc_site *s = active ? site_at(f->rip) : NULL;
	uint32_t lo, hi, aux = 0;
	uint64_t v;

	if (!s)
		trap_fatal(f, "unhandled exception");
	/* Not listed in tsc_sites, so never rewritten: the real counter. */
	if (s->len == TSC_SITE_RDTSCP)
		__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	else
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	v = ((uint64_t)hi << 32) | lo;
	if (__atomic_load_n(&step_pending, __ATOMIC_RELAXED) && this_cpu()->cpu == inject_step_cpu &&
	    v >= step_at) {
		/* The owner alone writes its offset; step_pending is cleared once. */
		*this_cpu_ptr(tsc_inject_offset) += __atomic_exchange_n(&step_pending, 0,
								__ATOMIC_RELAXED);
		__atomic_store_n(&step_done_at, v, __ATOMIC_RELEASE);
	}
	if (drift_ppm && v > drift_anchor && (drift_cpu >= MAX_CPUS || this_cpu()->cpu == drift_cpu))
		v += (uint64_t)(int64_t)((__int128)(v - drift_anchor) * drift_ppm / 1000000);
	v += (uint64_t)__atomic_load_n(this_cpu_ptr(tsc_inject_offset), __ATOMIC_RELAXED);
	f->rax = (uint32_t)v;
	f->rdx = (uint32_t)(v >> 32);
	if (s->len == TSC_SITE_RDTSCP)
		f->rcx = aux;
	f->rip += s->len;
}

/* Insertion sort by address: the linker's order is almost sorted already. */
static void sort_sites(void)
{
	struct tsc_site *b = sites_begin(), *e = sites_end();

	for (struct tsc_site *i = b + 1; i < e; i++) {
		struct tsc_site t = *i, *j = i;
		while (j > b && j[-1].addr > t.addr) {
			*j = j[-1];
			j--;
		}
		*j = t;
	}
}

/* A negative skew must leave every AP's reading positive (see above). */
static bool skew_fits(int64_t skew, uint64_t now, const char *name)
{
	if (skew >= 0 || (uint64_t)-skew < now)
		return true;
	printk("tsc: %s=%lld would make the APs' TSC negative (the boot CPU's reads %llu); not "
	       "injected\n", name, (long long)skew, (unsigned long long)now);
	return false;
}

bool tsc_inject_init(void)
{
	unsigned n = tsc_sites_count();
	uint64_t now;

	if (active)
		return true;
	if (inject_skew_others && !inject_skew_cpu) {
		printk("tsc: inject.tsc_skew_others= needs inject.tsc_skew_cpu=; ignored\n");
		inject_skew_others = 0;
	}
	if (!inject_tsc_skew && !inject_skew_others && !inject_drift_ppm && !inject_step)
		return false;
	now = rdtsc();
	if (!skew_fits(inject_tsc_skew, now, "inject.tsc_skew"))
		inject_tsc_skew = 0;
	if (!skew_fits(inject_skew_others, now, "inject.tsc_skew_others"))
		inject_skew_others = 0;
	if (!inject_tsc_skew && !inject_skew_others && !inject_drift_ppm && !inject_step)
		return false;
	for (const struct tsc_site *s = sites_begin(); s < sites_end(); s++) {
		if (!site_original(s)) {
			printk("tsc: inject.tsc_skew: the TSC read at %p is not the instruction "
			       "listed; not injected\n", (void *)(uintptr_t)s->addr);
			inject_tsc_skew = inject_skew_others = 0;
			return false;
		}
	}
	sort_sites();
	trap_set_handler(VEC_UD, on_ud);
	drift_anchor = now;
	drift_ppm = inject_drift_ppm;
	drift_cpu = (uint32_t)inject_drift_cpu;
	active = true;	/* before the first rewritten site can run */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (const struct tsc_site *s = sites_begin(); s < sites_end(); s++) {
		uint8_t ud2 = OP_UD2;
		text_poke((void *)(uintptr_t)(s->addr + 1), &ud2, 1);	/* .text is read-only */
	}
	cpuid(0, 0);	/* serialising: no stale prefetch of a rewritten site */
	if (inject_tsc_skew && !inject_skew_cpu)
		printk("tsc: inject.tsc_skew=%lld: %u TSC reads rewritten; every AP's TSC reads that "
		       "many cycles ahead of the boot CPU's\n", (long long)inject_tsc_skew, n);
	else if (inject_skew_cpu)
		printk("tsc: inject.tsc_skew=%lld: %u TSC reads rewritten; cpu=%llu's TSC reads that "
		       "many cycles ahead of the boot CPU's, every other AP's %lld "
		       "(inject.tsc_skew_others=)\n", (long long)inject_tsc_skew, n,
		       (unsigned long long)inject_skew_cpu, (long long)inject_skew_others);
	if (drift_ppm && drift_cpu >= MAX_CPUS)
		printk("tsc: inject.tsc_drift_ppm=%lld: %u TSC reads rewritten; every CPU's TSC "
		       "reads that many ppm fast from now on\n", (long long)drift_ppm, n);
	else if (drift_ppm)
		printk("tsc: inject.tsc_drift_ppm=%lld: %u TSC reads rewritten; cpu=%u's TSC "
		       "reads that many ppm fast from now on\n", (long long)drift_ppm, n, drift_cpu);
	if (inject_step)
		printk("tsc: inject.tsc_step=%lld: %u TSC reads rewritten; cpu=%llu's TSC will "
		       "jump %llu ms after the end of bring-up\n", (long long)inject_step, n,
		       (unsigned long long)inject_step_cpu, (unsigned long long)inject_step_ms);
	return true;
}

int64_t tsc_inject_skew(unsigned cpu)
{
	if (!active || cpu == 0)
		return 0;
	if (!inject_skew_cpu || cpu == inject_skew_cpu)
		return inject_tsc_skew;
	return inject_skew_others;
}

/* An AP's offset before it runs (CPU_HOOK, <kernel/cpu_hooks.h>). */
static void tsc_inject_prepare(unsigned cpu)
{
	*per_cpu_ptr(tsc_inject_offset, cpu) = tsc_inject_skew(cpu);
}
CPU_HOOK(tsc_inject, .name = "tsc_inject", .prepare = tsc_inject_prepare);

static void say_step(uint64_t at)
{
	uint64_t per_ms = tsc.hz / 1000;

	if (!at || !per_ms) {
		printk("tsc: inject.tsc_step=%lld: cpu=%llu's TSC jumped by that many cycles\n",
		       (long long)inject_step, (unsigned long long)inject_step_cpu);
		return;
	}
	printk("tsc: inject.tsc_step=%lld: cpu=%llu's TSC jumped by that many cycles, %llu ms "
	       "after bring-up\n", (long long)inject_step, (unsigned long long)inject_step_cpu,
	       (unsigned long long)((at - (step_at - inject_step_ms * per_ms)) / per_ms));
}

void tsc_inject_step(void)
{
	struct percpu *pc = inject_step_cpu < cpu_count ? cpus[inject_step_cpu] : NULL;

	if (!inject_step || !active)
		return;
	if (!pc || !pc->online) {
		printk("tsc: inject.tsc_step_cpu=%llu: no such CPU online; no step\n",
		       (unsigned long long)inject_step_cpu);
		inject_step = 0;
	} else if (inject_step_ms && tsc.hz) {
		/* Real TSC: the boot CPU's, unskewed (its offset is 0 until a step). */
		step_at = rdtsc() - (uint64_t)this_cpu_read(tsc_inject_offset) +
			  inject_step_ms * (tsc.hz / 1000);
		__atomic_store_n(&step_pending, inject_step, __ATOMIC_RELAXED);	/* on_ud applies it */
	} else {
		/* One aligned store; the owner's next trap reads it (relaxed load in on_ud). */
		int64_t *off = percpu_area_ptr(pc, tsc_inject_offset);

		__atomic_store_n(off, *off + inject_step, __ATOMIC_RELAXED);
		say_step(0);
		inject_step = 0;	/* once */
	}
}

void tsc_inject_step_poll(void)
{
	uint64_t at;

	if (!inject_step || !inject_step_ms)
		return;
	at = __atomic_load_n(&step_done_at, __ATOMIC_ACQUIRE);
	if (!at)
		return;
	say_step(at);
	inject_step = 0;	/* reported: once */
}
