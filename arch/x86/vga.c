/*
 * VGA text-mode console: 80x25 cells of (character, attribute) at 0xB8000,
 * scrolling up one line when the cursor passes the bottom. Only used when
 * the firmware is a BIOS, where text mode is what GRUB leaves us in.
 */
#include <stddef.h>
#include <stdint.h>
#include <arch/io.h>
#include <arch/vga.h>
#include "kernel/console.h"

#define VGA_BASE	0xB8000
#define VGA_COLS	80
#define VGA_ROWS	25
#define VGA_ATTR	0x07	/* light grey on black */
#define CRTC_INDEX	0x3D4
#define CRTC_DATA	0x3D5
#define CRTC_CURSOR_HI	0x0E
#define CRTC_CURSOR_LO	0x0F

static struct console vga_con;
static unsigned col, row;

static volatile uint16_t *cell(unsigned r, unsigned c)
{
	return (volatile uint16_t *)VGA_BASE + r * VGA_COLS + c;
}

static void scroll(void)
{
	for (unsigned r = 1; r < VGA_ROWS; r++)
		for (unsigned c = 0; c < VGA_COLS; c++)
			*cell(r - 1, c) = *cell(r, c);
	for (unsigned c = 0; c < VGA_COLS; c++)
		*cell(VGA_ROWS - 1, c) = (VGA_ATTR << 8) | ' ';
}

static void newline(void)
{
	col = 0;
	if (++row == VGA_ROWS) {
		scroll();
		row = VGA_ROWS - 1;
	}
}

static void vga_write(struct console *con, const char *s, size_t n)
{
	(void)con;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (ch == '\n') {
			newline();
		} else if (ch == '\r') {
			col = 0;
		} else {
			*cell(row, col) = (VGA_ATTR << 8) | (uint8_t)ch;
			if (++col == VGA_COLS)
				newline();
		}
	}
	uint16_t pos = row * VGA_COLS + col;
	outb(CRTC_INDEX, CRTC_CURSOR_HI);
	outb(CRTC_DATA, pos >> 8);
	outb(CRTC_INDEX, CRTC_CURSOR_LO);
	outb(CRTC_DATA, pos & 0xFF);
}

void vga_console_init(void)
{
	for (unsigned r = 0; r < VGA_ROWS; r++)
		for (unsigned c = 0; c < VGA_COLS; c++)
			*cell(r, c) = (VGA_ATTR << 8) | ' ';
	col = row = 0;
	vga_con.name = "vga";
	vga_con.write = vga_write;
	vga_con.getc = NULL;
	console_register(&vga_con);
}

struct console *vga_console(void)
{
	return vga_con.write ? &vga_con : NULL;
}
