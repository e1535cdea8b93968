/*
 * Framebuffer text console.
 *
 * The screen is a grid of cols x rows cells, each font.width x font.height
 * pixels, from the top-left corner; pixels right of and below the grid stay
 * background. Two grids of characters are kept: text[] (what should show)
 * and shown[] (what was last drawn). A write updates text[] only, then
 * draws the cells where the two differ; a scroll therefore costs one redraw
 * of the changed cells, not one per line of a long write (the replayed boot
 * log is one write). The framebuffer is only written, never read: reads of
 * video memory are slow on real hardware.
 *
 * Rules (a host renderer reproduces the screen from the same bytes with
 * them; tests/qemu/fbrender.py does):
 *   '\n'       col = 0, next row
 *   '\r'       col = 0
 *   '\b'       col - 1, if col > 0
 *   '\t'       to the next multiple of 8 (spaces), at most to the last column
 *   other < 0x20, 0x7F: ignored
 *   other      drawn at (row, col) with glyph[byte], col + 1; when col has
 *              reached cols a printable byte first moves to the next row
 *              (the wrap waits for the next character, so a line of exactly
 *              cols characters and its '\n' take one row)
 *   next row past the last: everything moves up one row, the last row is
 *              blank.
 * No cursor is drawn.
 */
#include <stddef.h>
#include <stdint.h>
#include "kernel/fbcon.h"
#include "kernel/font.h"
#include "kernel/kstring.h"

#define FBCON_MAX_COLS	256
#define FBCON_MAX_ROWS	160
#define TAB		8

struct fbcon {
	uint8_t *fb;			/* framebuffer (identity-mapped) */
	uint32_t pitch;			/* bytes per pixel row */
	uint32_t bytes_pp;		/* bytes per pixel: 2, 3 or 4 */
	uint32_t fg, bg;		/* pixel values in the framebuffer's format */
	unsigned cols, rows;		/* text grid */
	unsigned col, row;		/* where the next character goes */
	char text[FBCON_MAX_ROWS][FBCON_MAX_COLS];	/* wanted */
	char shown[FBCON_MAX_ROWS][FBCON_MAX_COLS];	/* on screen */
};

static struct fbcon fbc;
static struct console fbcon_con;

/* 0xRRGGBB into the framebuffer's pixel layout. */
static uint32_t pixel(const struct boot_framebuffer *fb, uint32_t rgb)
{
	uint32_t r = (rgb >> 16) & 0xFF, g = (rgb >> 8) & 0xFF, b = rgb & 0xFF;

	return (r >> (8 - fb->red_size)) << fb->red_pos |
	       (g >> (8 - fb->green_size)) << fb->green_pos |
	       (b >> (8 - fb->blue_size)) << fb->blue_pos;
}

static void put_pixel(uint8_t *p, uint32_t v)
{
	switch (fbc.bytes_pp) {
	case 4:
		*(uint32_t *)p = v;
		break;
	case 3:
		p[0] = v & 0xFF;
		p[1] = (v >> 8) & 0xFF;
		p[2] = (v >> 16) & 0xFF;
		break;
	default:
		*(uint16_t *)p = (uint16_t)v;
		break;
	}
}

static void draw_cell(unsigned row, unsigned col, uint8_t ch)
{
	const uint8_t *g = font_console.glyphs +
			   (size_t)ch * font_console.height * font_console.row_bytes;
	uint8_t *line = fbc.fb + (size_t)row * font_console.height * fbc.pitch +
			(size_t)col * font_console.width * fbc.bytes_pp;

	for (uint32_t y = 0; y < font_console.height; y++, line += fbc.pitch) {
		const uint8_t *bits = g + y * font_console.row_bytes;
		uint8_t *p = line;
		for (uint32_t x = 0; x < font_console.width; x++, p += fbc.bytes_pp) {
			bool on = bits[x / 8] & (0x80 >> (x % 8));
			put_pixel(p, on ? fbc.fg : fbc.bg);
		}
	}
}

static void flush(void)
{
	for (unsigned r = 0; r < fbc.rows; r++) {
		if (!memcmp(fbc.text[r], fbc.shown[r], fbc.cols))
			continue;
		for (unsigned c = 0; c < fbc.cols; c++) {
			if (fbc.text[r][c] != fbc.shown[r][c]) {
				draw_cell(r, c, (uint8_t)fbc.text[r][c]);
				fbc.shown[r][c] = fbc.text[r][c];
			}
		}
	}
}

static void next_row(void)
{
	fbc.col = 0;
	if (++fbc.row < fbc.rows)
		return;
	memmove(fbc.text[0], fbc.text[1], sizeof(fbc.text[0]) * (fbc.rows - 1));
	memset(fbc.text[fbc.rows - 1], ' ', sizeof(fbc.text[0]));
	fbc.row = fbc.rows - 1;
}

static void fbcon_write(struct console *c, const char *s, size_t n)
{
	(void)c;
	for (size_t i = 0; i < n; i++) {
		uint8_t ch = (uint8_t)s[i];
		switch (ch) {
		case '\n':
			next_row();
			break;
		case '\r':
			fbc.col = 0;
			break;
		case '\b':
			if (fbc.col)
				fbc.col--;
			break;
		case '\t':
			do {
				if (fbc.col < fbc.cols)
					fbc.text[fbc.row][fbc.col++] = ' ';
			} while (fbc.col % TAB && fbc.col < fbc.cols);
			break;
		default:
			if (ch < 0x20 || ch == 0x7F)
				break;
			if (fbc.col == fbc.cols)
				next_row();
			fbc.text[fbc.row][fbc.col++] = (char)ch;
			break;
		}
	}
	flush();
}

struct console *fbcon_init(const struct boot_framebuffer *fb, const char **why)
{
	if (fb->type != BOOT_FB_RGB) {
		*why = fb->type == BOOT_FB_EGA ? "EGA text, not pixels" : "indexed colour is not supported";
		return NULL;
	}
	if (fb->bpp != 16 && fb->bpp != 24 && fb->bpp != 32) {
		*why = "only 16, 24 and 32 bits per pixel are supported";
		return NULL;
	}
	if (!fb->red_size || fb->red_size > 8 || !fb->green_size || fb->green_size > 8 ||
	    !fb->blue_size || fb->blue_size > 8) {
		*why = "colour fields are implausible";
		return NULL;
	}
	if (fb->width < font_console.width || fb->height < font_console.height ||
	    fb->pitch < fb->width * (fb->bpp / 8)) {
		*why = "mode is smaller than one character or pitch is too small";
		return NULL;
	}
	fbc.fb = (uint8_t *)(uintptr_t)fb->addr;
	fbc.pitch = fb->pitch;
	fbc.bytes_pp = fb->bpp / 8;
	fbc.fg = pixel(fb, FBCON_FG);
	fbc.bg = pixel(fb, FBCON_BG);
	fbc.cols = fb->width / font_console.width;
	fbc.rows = fb->height / font_console.height;
	if (fbc.cols > FBCON_MAX_COLS)
		fbc.cols = FBCON_MAX_COLS;
	if (fbc.rows > FBCON_MAX_ROWS)
		fbc.rows = FBCON_MAX_ROWS;
	fbc.col = fbc.row = 0;
	memset(fbc.text, ' ', sizeof(fbc.text));
	memset(fbc.shown, ' ', sizeof(fbc.shown));
	for (uint32_t y = 0; y < fb->height; y++)
		for (uint32_t x = 0; x < fb->width; x++)
			put_pixel(fbc.fb + (size_t)y * fbc.pitch + (size_t)x * fbc.bytes_pp, fbc.bg);

	fbcon_con.name = "fb";
	fbcon_con.write = fbcon_write;
	fbcon_con.getc = NULL;
	return &fbcon_con;
}

void fbcon_size(unsigned *cols, unsigned *rows)
{
	*cols = fbc.cols;
	*rows = fbc.rows;
}
