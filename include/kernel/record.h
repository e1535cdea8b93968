/*
 * trace.record=usb: the trace streamed into TRACE.BIN while it is recorded
 * (kernel/tracer/record.c).  The boot CPU is the consumer: a job that
 * records opens a stream after building its buffers, calls record_poll()
 * between its own work, and ends it; the shell's `start` opens one and its
 * `stop` ends it, the shell's idle loop draining it meanwhile.
 */
#ifndef KERNEL_RECORD_H
#define KERNEL_RECORD_H

#include <stdbool.h>
#include <stdint.h>

/* What a stream held when it ended. */
struct record_result {
	bool saved;		/* its END and mark were written */
	bool full;		/* it ended early: TRACE.BIN was full */
	uint32_t pages;		/* PAGE frames */
	uint64_t events;	/* events on them */
	uint64_t lost;		/* overrun + dropped before them, as the pages said */
	uint64_t bytes;		/* bytes of frames */
};

/* trace.record=usb was given. */
bool record_enabled(void);
bool record_to_usb(void);	/* trace.record=usb: the stick is needed */
/* A stream is open. */
bool record_active(void);
/*
 * With trace.record=usb: open a stream of the current buffers (a line);
 * true if it opened or none was asked for.  Boot CPU, task level.
 */
bool record_begin(void);
/* Write every complete page waiting (bounded per CPU by its ring's size). */
void record_poll(void);
/*
 * End each CPU's tail page, drain, end the stream (a line); true if it was
 * saved whole (not cut short by a full file or a failing stick).  *out
 * (may be NULL): what it held.
 */
bool record_end(struct record_result *out);

/* run=record and run=record_bench (kernel/tracer/record_job.c). */
bool record_job(void);
bool record_bench_job(void);

#endif
