/*
 * run=record: a trace longer than the ring, streamed to the stick
 * (trace.record=usb, kernel/tracer/record.c).  Every online CPU records
 * record.count bench events with seq ((cpu + 1) << 24) + 1, 2, ..., paced
 * so that all CPUs together write record.rate events a second (0: as fast
 * as they can); the boot CPU writes its share and, between its events,
 * drains the full pages into TRACE.BIN.  Then, per CPU, what the writer
 * itself counted (its own return values, not the ring's counters):
 *
 *   record: cpu=<n> stored=<k> dropped=<d> first=<seq> last=<seq>
 *
 * run=record_bench: the sustained rate the stream keeps with nothing lost.
 * Trials of record.ms each at a total rate doubled from 10,000 events/s
 * until one loses events, then halved between the last rate that lost
 * none and the first that did, five times; a trial counts events lost by
 * the pages (overrun, dropped) and by the writers.  One line a trial and
 * the result:
 *
 *   bench: record rate=<r> cpus=<n> events=<n> lost=<n> pages=<n> ms=<ms>
 *   bench: record sustained_events_per_s=<r> cpus=<n> trace_pages=<n> lost=0 first_loss_at=<r>
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/tsc.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/record.h"
#include "kernel/tracing.h"

#define WAIT_SLACK_NS	60000000000ll	/* beyond the paced time, for the other CPUs */
#define BENCH_RATE0	10000		/* events/s, the first trial */
#define BENCH_RATE_MAX	200000000ull
#define BENCH_HALVINGS	5

static uint64_t record_count = 100000;
CMDLINE_OPTION(record_count, .name = "record.count", .type = OPT_UINT, .var = &record_count,
	       .min = 1, .max = 100000000, .help = "run=record: bench events each CPU records");
static uint64_t record_rate = 20000;
CMDLINE_OPTION(record_rate, .name = "record.rate", .type = OPT_UINT, .var = &record_rate,
	       .min = 0, .max = BENCH_RATE_MAX,
	       .help = "run=record: events a second, all CPUs together; 0 = as fast as they can");
static uint64_t record_ms = 500;
CMDLINE_OPTION(record_ms, .name = "record.ms", .type = OPT_UINT, .var = &record_ms,
	       .min = 10, .max = 60000, .help = "run=record_bench: the length of one trial");

static struct {
	uint32_t stored, dropped, first, last;	/* the writer's own count */
} result[MAX_CPUS];

static uint64_t per_cpu_count, per_cpu_rate;	/* this trial's */
static uint32_t finished;			/* other CPUs done */

/*
 * One CPU's events, the i-th not before t0 + i / rate.  The boot CPU
 * drains the stream while it waits for its next event, and every 64
 * events when it is behind (after a slow write it catches up in a burst).
 */
static void write_events(bool consumer)
{
	unsigned c = this_cpu()->cpu;
	uint32_t base = (c + 1) << 24;
	uint64_t t0 = rdtsc(), hz = tsc.hz;

	result[c] = (typeof(result[c])){ 0 };
	for (uint64_t i = 0; i < per_cpu_count; i++) {
		uint32_t seq = base + (uint32_t)i + 1;

		while (per_cpu_rate && rdtsc() - t0 < i * hz / per_cpu_rate) {
			if (consumer)
				record_poll();
			else
				cpu_relax();
		}
		if (trace_bench(seq) == 0) {
			if (!result[c].stored)
				result[c].first = seq;
			result[c].last = seq;
			result[c].stored++;
		} else {
			result[c].dropped++;
		}
		if (consumer && (i & 63) == 63)
			record_poll();
	}
}

static void write_here(void *arg)
{
	(void)arg;
	write_events(false);
	__atomic_fetch_add(&finished, 1, __ATOMIC_RELEASE);
}

/* One run at rate (all CPUs) of count events a CPU, streamed; *out what the stream held. */
static bool trial(uint64_t count, uint64_t rate, struct record_result *out)
{
	uint32_t posted = 0;
	long long limit;

	if (!tracing_reconfigure(trace_pages, trace_mode))
		return false;
	tracing_start();
	if (!record_begin() || !record_active())
		return false;
	per_cpu_count = count;
	per_cpu_rate = (rate + cpus_online - 1) / cpus_online;
	__atomic_store_n(&finished, 0, __ATOMIC_RELEASE);
	for (unsigned c = 1; c < cpu_count; c++)
		if (cpus[c] && cpus[c]->online)
			posted += smp_call_async(c, write_here, NULL);
	write_events(true);
	limit = tsc_now_ns() + WAIT_SLACK_NS +
		(per_cpu_rate ? (long long)(count * 1000000000ull / per_cpu_rate) : 0);
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < posted) {
		record_poll();
		if (tsc_now_ns() > limit) {
			printk("record: %u of %u CPUs did not finish their events in time\n",
			       posted - __atomic_load_n(&finished, __ATOMIC_ACQUIRE), posted);
			break;
		}
	}
	tracing_stop();
	return record_end(out) && __atomic_load_n(&finished, __ATOMIC_ACQUIRE) == posted;
}

bool record_job(void)
{
	struct record_result r;
	bool ok;

	if (!record_enabled()) {
		printk("record: run=record needs trace.record=usb or serial\n");
		return false;
	}
	ok = trial(record_count, record_rate, &r);
	for (unsigned c = 0; c < cpu_count; c++)
		if (cpus[c] && cpus[c]->online)
			printk("record: cpu=%u stored=%u dropped=%u first=%u last=%u\n", c,
			       result[c].stored, result[c].dropped, result[c].first,
			       result[c].last);
	return ok;
}

/* A trial at rate for record_ms; true if nothing was lost; false with *bad if it went wrong. */
static bool bench_trial(uint64_t rate, bool *bad)
{
	uint64_t count = rate * record_ms / 1000 / cpus_online + 1, dropped = 0;
	long long t0 = tsc_now_ns();
	struct record_result r;

	*bad = !trial(count, rate, &r);
	for (unsigned c = 0; c < cpu_count; c++)
		dropped += result[c].dropped;
	printk("bench: record rate=%llu cpus=%u events=%llu lost=%llu pages=%u ms=%lld\n",
	       (unsigned long long)rate, cpus_online, (unsigned long long)r.events,
	       (unsigned long long)(r.lost + dropped), r.pages, (tsc_now_ns() - t0) / 1000000);
	return !*bad && r.lost + dropped == 0;
}

bool record_bench_job(void)
{
	uint64_t lo = 0, hi = BENCH_RATE0;
	bool bad = false;

	if (!record_enabled()) {
		printk("bench: record needs trace.record=usb (and a stick) or serial\n");
		return false;
	}
	while (hi <= BENCH_RATE_MAX && bench_trial(hi, &bad)) {
		lo = hi;
		hi *= 2;
	}
	for (int i = 0; i < BENCH_HALVINGS && !bad && lo && hi <= BENCH_RATE_MAX; i++) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (bench_trial(mid, &bad))
			lo = mid;
		else if (!bad)
			hi = mid;
	}
	if (bad) {
		printk("bench: record stopped: a trial did not complete (the lines above say "
		       "why; a larger TRACE.BIN: make usb-image TRACE_MB=)\n");
		return false;
	}
	printk("bench: record sustained_events_per_s=%llu cpus=%u trace_pages=%u lost=0 "
	       "first_loss_at=%llu\n", (unsigned long long)lo, cpus_online, trace_pages,
	       (unsigned long long)hi);
	return lo != 0;
}
