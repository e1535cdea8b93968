/*
 * Where trace output goes: a function that takes bytes and its context.
 * The kernel passes its serial console (raw, no newline translation), host
 * tools a FILE or a memory buffer.  A sink cannot fail: it keeps what it
 * can, and the formats are built to be checked by whoever reads them.
 */
#ifndef TRACE_SINK_H
#define TRACE_SINK_H

#include <stddef.h>

struct trace_sink {
	void (*write)(void *ctx, const void *buf, size_t len); /* take len bytes */
	void *ctx;						/* its argument */
};

static inline void trace_sink_put(const struct trace_sink *s, const void *buf, size_t len)
{
	if (len)
		s->write(s->ctx, buf, len);
}

#endif
