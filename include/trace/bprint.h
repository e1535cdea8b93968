/*
 * trace_printk's binary form, as ftrace's bprint: the record keeps a
 * reference to the constant format and the arguments in binary; the text
 * is made when the trace is read (the kernel's text dump, the decoder).
 * Portable: the kernel encodes, any reader formats, with one parser of
 * the format.
 *
 * Conversions: d i u x X o c s p %, flags "-+ #0", width and precision
 * (numbers or '*'), lengths hh h l ll z j t.  Arguments, in order, each:
 *	integer, char, pointer, '*'   8 bytes little-endian (signed ones
 *	                              sign-extended from their C type)
 *	string (%s)                   u16 n | cut << 15, then n bytes (no NUL);
 *	                              at most TRACE_BPRINT_STR_MAX bytes are
 *	                              kept, a longer string is cut and marked
 * A conversion the parser does not know ends the format there ("%?" is
 * printed, nothing more is read); the kernel's trace_printk has
 * format(printf) checking, so the compiler refuses most of them first.
 */
#ifndef TRACE_BPRINT_H
#define TRACE_BPRINT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define TRACE_BPRINT_STR_MAX	128	/* bytes of one %s kept */
#define TRACE_BPRINT_ARGS_MAX	512	/* bytes of arguments one record keeps */
/*
 * Widths and precisions above this, written in the format or given by
 * '*' arguments, are formatted as this: a format or argument damaged in a
 * capture can then neither overflow an int nor make the reader pad a
 * billion spaces for each event (a message is cut far below it anyway).
 */
#define TRACE_BPRINT_WIDTH_MAX	4096

/*
 * Encode ap's arguments for fmt into buf (cap bytes).  Returns the bytes
 * used; if they do not fit, the arguments that fit are kept and the
 * formatter prints "[...]" where the rest would be.
 */
uint32_t trace_bprint_encode(uint8_t *buf, uint32_t cap, const char *fmt, va_list ap);

/*
 * Format fmt with the encoded arguments args[0 .. len) into out (snprintf
 * semantics).  Every read is bounded by len: damaged arguments print as
 * "[...]" where they run out, never read past.
 */
int trace_bprint_format(char *out, size_t size, const char *fmt, const uint8_t *args,
			uint32_t len);

#endif
