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
 * The same for a trace_printk with two integer arguments (printk:bprint).
 *
 *   bench: test=tracepoint event=<system:name> state=enabled|disabled events=<n>
 *          cycles_per_event=<x.xxx> loop_cycles=<x.xxx>
 */
#include <arch/cpu.h>
#include <arch/percpu.h>
#include <arch/tsc.h>
#include "kernel/bench.h"
#include "kernel/console.h"
#include "kernel/trace_ctl.h"
#include "kernel/trace_printk.h"
#include "kernel/tracing.h"
#include "lib/format.h"

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

/* trace_printk with two integer arguments: its site tests bprint's key. */
static __noinline uint64_t tp_printk(uint64_t n)
{
	uint64_t t0 = rdtsc();

	for (uint64_t i = 0; i < n; i++) {
		trace_printk("tp %u %u\n", (unsigned)i, (unsigned)(i >> 3));
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

/* One event's site, enabled then disabled; two bench: lines. */
static void measure(uint32_t id, const char *name, uint64_t (*fn)(uint64_t), uint64_t loop,
		    const char *lpe)
{
	bool was = trace_events_enabled()[id];
	uint64_t on, off;
	char on_pe[32], off_pe[32];

	trace_event_set(id, true);
	on = min3(fn, TP_EVENTS);
	trace_event_set(id, false);
	off = min3(fn, TP_EVENTS);
	trace_event_set(id, was);
	per_event(on_pe, sizeof(on_pe), on > loop ? on - loop : 0);
	per_event(off_pe, sizeof(off_pe), off > loop ? off - loop : 0);
	cprintf("bench: test=tracepoint event=%s state=enabled events=%u "
		"cycles_per_event=%s loop_cycles=%s\n", name, TP_EVENTS, on_pe, lpe);
	cprintf("bench: test=tracepoint event=%s state=disabled events=%u "
		"cycles_per_event=%s loop_cycles=%s\n", name, TP_EVENTS, off_pe, lpe);
}

int bench_tracepoint(void)
{
	uint64_t loop;
	char lpe[32];

	irq_disable();	/* no timer events in the loops (keys change with interrupts off too) */
	loop = min3(tp_empty, TP_EVENTS);
	per_event(lpe, sizeof(lpe), loop);
	measure(TEV_bench, "bench:bench", tp_event, loop, lpe);
	measure(TEV_bprint, "printk:bprint", tp_printk, loop, lpe);
	irq_enable();
	return 0;
}
