/*
 * From the live ring buffer to the dump structs: the only part of the dump
 * code that knows struct rb_stats.  Linked by the kernel
 * and the host tests; the host decoder does without it.
 */
#ifndef TRACE_DUMP_RB_H
#define TRACE_DUMP_RB_H

#include <trace/dump_write.h>
#include <trace/ring_buffer.h>

/* Fill *out (all of it, reason NUL-padded) from cpu's ring_buffer_stats(). */
void dump_stats_from_rb(struct dump_stats *out, uint32_t cpu, const struct rb_stats *st);

#endif
