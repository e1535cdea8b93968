/*
 * LTTng-UST tracepoint provider of the host benchmark: one event with the
 * same 8 bytes of payload as the kernel's trace_bench(): the event header
 * word and one u32 (a sequence number), as two 32-bit integer fields.
 *
 * This header follows LTTng-UST 2.13's provider protocol: it is read once
 * normally and once more by <lttng/tracepoint-event.h> in the file that
 * defines LTTNG_UST_TRACEPOINT_CREATE_PROBES.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER baretrace_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "lttng_tp.h"

#if !defined(BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(baretrace_bench, event1,
	LTTNG_UST_TP_ARGS(uint32_t, word, uint32_t, seq),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint32_t, word, word)
		lttng_ust_field_integer(uint32_t, seq, seq)
	)
)

#endif

#include <lttng/tracepoint-event.h>
