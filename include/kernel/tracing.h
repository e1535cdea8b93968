/*
 * The kernel's tracing: per-CPU ring buffers (trace/ring_buffer.c) wired to
 * the CPUs, options trace.pages= and trace.mode=, and the event writers the
 * rest of the kernel calls. Writing an event is inline: one %gs load for
 * the CPU's buffer, the ring buffer's reserve/commit, two or three stores.
 */
#ifndef KERNEL_TRACING_H
#define KERNEL_TRACING_H

#include <stdbool.h>
#include <stdint.h>
#include <arch/percpu.h>
#include <arch/trace_arch.h>
#include "kernel/trace_ctx.h"
#include "trace/events.h"
#include "trace/ring_buffer.h"

extern struct ring_buffer trace_rb;	/* all CPUs' buffers */
extern uint32_t trace_pages;		/* ring pages per CPU in use */
extern int trace_mode;			/* enum rb_mode in use */
DECLARE_PER_CPU(struct rb_cpu_buffer *, tracing_rb);	/* this_cpu_rb() */

/*
 * The boot CPU's buffer, recording, before smp_init(): trace.pages= is
 * fitted to the CPUs smp_init() plans to start.
 */
void tracing_init_boot(void);
/* A buffer of the same size for every other CPU with an area (after smp_init). */
void tracing_init(void);
/*
 * Boot tracing of the APs' own bring-up is the tracer's CPU hook
 * (<kernel/cpu_hooks.h>): CPU c's buffer memory is readied before it
 * starts; the AP builds its buffer itself once its clock is final, and
 * records from then on.
 */
/*
 * Rebuild every buffer empty with pages/mode; recording on if it was.  Call
 * at task level, outside any reservation.  The old buffers are freed only
 * once every other online CPU has confirmed, from its task context, that it
 * holds none of them (tracing_quiescent(); an idle CPU does so by itself).
 * Returns false, with a line naming each CPU that did not confirm within
 * 5 s, if that did not happen: the old buffers then stay in place.
 */
bool tracing_reconfigure(uint32_t pages, int mode);
/* The same, waiting at most wait_ms for the other CPUs instead of 5 s. */
bool tracing_reconfigure_within(uint32_t pages, int mode, uint32_t wait_ms);
/*
 * A quiescent point for tracing_reconfigure(): task level only, between
 * events (no reservation of this CPU in flight).  A loop that runs at task
 * level for long on a CPU while another may reconfigure calls it between
 * its events; it costs a load and a compare when nothing is pending.
 */
void tracing_quiescent(void);
void tracing_start(void);
void tracing_stop(void);
bool tracing_on(void);

/* Buffer size, mode and recording state: what a test changes and puts back. */
struct tracing_setup {
	uint32_t pages;		/* trace_pages */
	int mode;		/* trace_mode */
	bool on;		/* recording */
};
struct tracing_setup tracing_setup_get(void);
/* Rebuild the buffers as saved (empty) and set recording; false if refused. */
bool tracing_setup_restore(const struct tracing_setup *s);
/* End every CPU's tail page so its events can be read (runs on each CPU). */
void tracing_flush_all(void);

/* trace_bench(v) out of line: for counting and benchmarks. */
int trace_probe_event1(uint32_t v);

static __always_inline struct rb_cpu_buffer *this_cpu_rb(void)
{
	return this_cpu_read(tracing_rb);
}

static __always_inline uint32_t trace_ent_word(uint16_t id, unsigned words)
{
	/* The context level, already in place: trace_ent_ctx(level). */
	return trace_ent_pack(id, this_cpu_read(trace_ctx.ent_ctx), words);
}

/*
 * A fixed-size record's first 8 bytes but the delta (rb_head_word()): its
 * record word and event header; ring_buffer_reserve_head() ORs in the
 * context bits from this CPU's trace_ctx.ent_hi (trace_ent_head_ctx) once the
 * writer is past the guard.
 */
static __always_inline uint64_t trace_ent_head(uint16_t id, unsigned words, uint32_t len)
{
	return rb_head_word(len, trace_ent_pack(id, 0, words));
}

static __always_inline uint64_t trace_ent_head_ctx(uint64_t head)
{
	return this_cpu_or_into(trace_ctx.ent_hi, head);
}

#include "kernel/event_writers.h"	/* trace_<event>(fields...) */

#endif
