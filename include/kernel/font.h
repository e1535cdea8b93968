/*
 * The console font: a PSF font from a Debian package, converted at build
 * time by tools/psf2c into 256 glyphs indexed by Latin-1 code point.
 * Glyph c's row y is row_bytes bytes at glyphs + (c * height + y) * row_bytes,
 * most significant bit = leftmost pixel.
 */
#ifndef KERNEL_FONT_H
#define KERNEL_FONT_H

#include <stdint.h>

struct font {
	const char *name;		/* the PSF file it came from */
	uint32_t width;			/* pixels per glyph row */
	uint32_t height;		/* rows per glyph */
	uint32_t row_bytes;		/* bytes per glyph row: (width + 7) / 8 */
	const uint8_t *glyphs;		/* 256 glyphs of height * row_bytes bytes */
};

extern const struct font font_console;

#endif
