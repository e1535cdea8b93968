/*
 * bench tracepoint: what a call site of a generated writer costs, whole,
 * as the kernel's own code pays it: trace_bench(i) in a loop against the
 * same loop with no tracepoint at all, with its event enabled (the jmp,
 * the ring buffer's reserve and commit, the header and the field) and
 * disabled (the site's NOP).  Both loops are the same instructions but
 * for the site, so the difference per iteration is the tracepoint's.
 * Under -icount shift=0 a cycle is an instruction: the figures are
 * instruction counts.  The buffer is big enough that page switches are
 * amortised as they are in real use (they are part of the figure).
 *
 *   bench: test=tracepoint event=bench:bench state=enabled|disabled events=<n>
 *          cycles_per_event=<x.xxx> loop_cycles=<x.xxx>
 */
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/tsc.h>
#include "kernel/bench.h"
#include "kernel/console.h"
#include "kernel/trace_ctl.h"
#include "kernel/tracing.h"
#include "trace/format.h"

#define TP_EVENTS	200000u

/* The loop alone: the asm keeps i live and the loop from being folded. */
static __noinline uint64_t tp_empty(uint64_t n)
{
	uint64_t t0 = rdtsc();

	for (uint64_t i = 0; i < n; i++)
		__asm__ __volatile__("" : : "r"(i) : "memory");
	return rdtsc() - t0;
}

static __noinline uint64_t tp_event(uint64_t n)
{
	uint64_t t0 = rdtsc();

	for (uint64_t i = 0; i < n; i++) {
		trace_bench((uint32_t)i);
		__asm__ __volatile__("" : : "r"(i) : "memory");
	}
	return rdtsc() - t0;
}

/* x / TP_EVENTS with three decimals. */
static void per_event(char *buf, size_t cap, uint64_t x)
{
	uint64_t milli = x * 1000 / TP_EVENTS;

	ksnprintf(buf, cap, "%llu.%03llu", (unsigned long long)(milli / 1000),
		  (unsigned long long)(milli % 1000));
}

/* The smallest of three runs: interrupts (if any) only ever add. */
static uint64_t min3(uint64_t (*fn)(uint64_t), uint64_t n)
{
	uint64_t best = UINT64_MAX;

	for (int r = 0; r < 3; r++) {
		uint64_t c;

		tracing_reconfigure(trace_pages, trace_mode);	/* empty, no overrun */
		tracing_start();
		c = fn(n);
		best = c < best ? c : best;
	}
	return best;
}

int bench_tracepoint(void)
{
	bool was = trace_events_enabled()[TEV_bench];
	uint64_t loop, on, off;
	char lpe[32], on_pe[32], off_pe[32];

	irq_disable();
	loop = min3(tp_empty, TP_EVENTS);
	trace_event_set(TEV_bench, true);
	on = min3(tp_event, TP_EVENTS);
	trace_event_set(TEV_bench, false);
	off = min3(tp_event, TP_EVENTS);
	trace_event_set(TEV_bench, was);
	irq_enable();
	per_event(lpe, sizeof(lpe), loop);
	per_event(on_pe, sizeof(on_pe), on > loop ? on - loop : 0);
	per_event(off_pe, sizeof(off_pe), off > loop ? off - loop : 0);
	cprintf("bench: test=tracepoint event=bench:bench state=enabled events=%u "
		"cycles_per_event=%s loop_cycles=%s\n", TP_EVENTS, on_pe, lpe);
	cprintf("bench: test=tracepoint event=bench:bench state=disabled events=%u "
		"cycles_per_event=%s loop_cycles=%s\n", TP_EVENTS, off_pe, lpe);
	return 0;
}
