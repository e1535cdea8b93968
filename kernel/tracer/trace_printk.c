/*
 * trace_printk's writer: encode the arguments on the stack, record them
 * with the generated trace_bprint() (<trace/event_list.h>), the caller's
 * address as the function.  Out of line, so that the return address names
 * the caller and call sites stay small.
 */
#include <stdarg.h>
#include <stdint.h>
#include "kernel/trace_printk.h"
#include "kernel/tracing.h"

__attribute__((noinline)) int __trace_printk(const char *fmt, ...)
{
	uint8_t buf[TRACE_BPRINT_ARGS_MAX];
	struct trace_bprint_args a = { 0, buf };
	va_list ap;

	/* Recording off: the writer's answer, before the encoding (about 440). */
	if (ring_buffer_recording_off(this_cpu_rb()))
		return -RB_EOFF;
	va_start(ap, fmt);
	a.len = trace_bprint_encode(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* The call site tested the key already (<kernel/trace_printk.h>). */
	return __trace_bprint(__builtin_return_address(0), (uint64_t)(uintptr_t)fmt, &a);
}

const char *trace_printk_format(uint64_t addr)
{
	for (const char *const *f = __start_trace_printk_fmts; f < __stop_trace_printk_fmts; f++)
		if ((uint64_t)(uintptr_t)*f == addr)
			return *f;
	return 0;
}
