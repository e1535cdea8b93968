/*
 * The events baretrace records, each defined once (<trace/trace_event.h>
 * explains TRACE_EVENT and the field kinds).  No include guard: each
 * includer defines TRACE_EVENT (and TRACE_EVENT_ENUM) to take the pass it
 * wants, then includes this list.
 *
 * Ids are given in list order, from 1.  Add events at the end, so that
 * the ids of the others stay what captures from older kernels carry
 * (a decoder reads a capture's own description first; its built-in
 * table, this list, only serves captures that carry none).
 */
#ifndef TRACE_EVENT_ENUM
#define TRACE_EVENT_ENUM(table, ...)
#endif

/* irq: interrupts as they arrive */
TRACE_EVENT(irq, lapic_tick, F_U32(tick))

/* ipi: inter-processor interrupts, sent and taken */
TRACE_EVENT(ipi, ipi_send, F_U32(to_cpu), F_U32(vector))
TRACE_EVENT(ipi, ipi_recv, F_U32(from_cpu), F_U32(vector))

/* irq: the NMI count of the CPU taking one */
TRACE_EVENT(irq, nmi, F_U32(count))

/* demo: the demo job's producer loop */
TRACE_EVENT(demo, producer, F_U32(seq), F_U32(value))

/* test: the ring-buffer stress ktest's writers */
TRACE_EVENT(test, stress, F_U32(seq), F_U32(check), F_U32(level))

/* demo: a marker */
TRACE_EVENT(demo, mark, F_U32(id))

/* bench: one benchmark write */
TRACE_EVENT(bench, bench, F_U32(seq))

/*
 * printk: trace_printk() (include/kernel/trace_printk.h): the calling
 * function, the format's address (its text travels in PRINTK frames) and
 * the arguments in binary; printed "<function>: <message>".
 */
TRACE_EVENT(printk, bprint, F_SYM(ip), F_X64(fmt), F_BPRINT(args))

/* bench: the typed writers' benchmarks (`bench ring event=u64|str16`) */
TRACE_EVENT(bench, bench_u64, F_U64(value))
TRACE_EVENT(bench, bench_str, F_STR(name, 16))

/*
 * ftrace: the function tracer (kernel/tracer/ftrace/ftrace.c, docs/ftrace.md).
 * function: a traced function was called; printed "ip <-parent_ip".
 * funcgraph_entry/exit: function_graph's call and return of func at depth
 * (0 = outermost of its context level); cycles is the TSC time from entry
 * to return, overrun the CPU's shadow-stack overruns so far. Printed as a
 * call graph ("<cpu>) <duration> | func() {"; trace/text.c).
 */
TRACE_EVENT(ftrace, function, F_SYM(ip), F_SYM(parent_ip))
TRACE_EVENT(ftrace, funcgraph_entry, F_SYM(func), F_U32(depth))
TRACE_EVENT(ftrace, funcgraph_exit, F_SYM(func), F_U64(cycles), F_U32(depth), F_U32(overrun))

/*
 * lab: the lab's experiments (docs/lab.md).
 * hwlat_gap: run=hwlat's loop saw the TSC jump by len_ns between two
 * reads, the first at start_ns (this CPU's corrected timeline, ns since
 * boot); smi_before/smi_after: this CPU's SMI count at its read before the
 * gap (the width's start or the previous gap) and right after it, -1 if
 * unknown; nmis: NMIs taken in the gap; seq: the CPU's gap number from 1.
 */
TRACE_EVENT(lab, hwlat_gap, F_S64(start_ns), F_U64(len_ns), F_S64(smi_before),
	    F_S64(smi_after), F_U32(nmis), F_U32(seq))
/*
 * c2c: run=c2c's result for the ordered pair from -> to: the median
 * one-way latency of a cache line on the corrected timeline (ns, may be
 * negative within bound_ns), the pair's skew bound, half the median
 * compare-and-swap round trip, and the samples taken.
 */
TRACE_EVENT(lab, c2c, F_U32(from), F_U32(to), F_S64(one_way_ns), F_U64(bound_ns),
	    F_U64(rtt_half_ns), F_U32(samples))
/*
 * timerlat: run=timerlat's sample seq (from 1) on this CPU: the handler's
 * first TSC read minus the timer's deadline, ns (0 if it fired early).
 */
TRACE_EVENT(lab, timerlat, F_U64(latency_ns), F_U32(seq))
/*
 * hwlat_cpu: run=hwlat's run on this CPU ended: the threshold it used, its
 * loop's resolution (median turn), its SMI count at its first and last
 * width (-1 unknown), the stalls injected on it, its gaps. Recorded once a
 * CPU after its last hwlat_gap, so that a capture says which CPUs sampled
 * (gaps or none) and with what parameters (baretrace-decode --lab).
 */
TRACE_EVENT(lab, hwlat_cpu, F_U64(threshold_ns), F_U64(resolution_ns), F_S64(smi_start),
	    F_S64(smi_end), F_U32(injected), F_U32(gaps))

#ifdef TRACE_EVENT_LIST_EXTRA
#include TRACE_EVENT_LIST_EXTRA
#endif

#undef TRACE_EVENT
#undef TRACE_EVENT_ENUM
