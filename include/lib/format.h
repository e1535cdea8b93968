/*
 * Formatted output into a buffer, C99 snprintf semantics (the return value
 * is the length the whole output would have had; the buffer is always
 * NUL-terminated when size > 0). Supported: flags "-0+ #", width and
 * precision (numbers or '*'), length modifiers hh h l ll z j t, conversions
 * d i u x X o c s p %. No floating point: the kernel has no FPU state.
 * Named k* so that host tests can compare it with libc's.
 */
#ifndef LIB_FORMAT_H
#define LIB_FORMAT_H

#include <stdarg.h>
#include <stddef.h>
#include "baretrace/compiler.h"

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);

/* Output built piece by piece, snprintf-style: len may pass size (then cut, NUL-terminated). */
struct kbuf {
	char *buf;		/* may be NULL when size is 0 */
	size_t size, len;
};
void kbuf_printf(struct kbuf *b, const char *fmt, ...) __printf(2, 3);

#endif
