/*
 * Text console on a linear framebuffer (the Multiboot2 framebuffer tag):
 * the console font on black, scrolling. See kernel/fbcon.c for the exact
 * rules a host renderer must follow to reproduce the screen.
 */
#ifndef KERNEL_FBCON_H
#define KERNEL_FBCON_H

#include <stdbool.h>
#include "kernel/bootinfo.h"
#include "kernel/console.h"

#define FBCON_FG	0xAAAAAA	/* light grey, as VGA text attribute 0x07 */
#define FBCON_BG	0x000000	/* black */

/*
 * Check fb (RGB, 16/24/32 bpp, mapped), clear it and prepare the console.
 * Returns NULL and sets *why if it cannot be used. The caller registers it.
 */
struct console *fbcon_init(const struct boot_framebuffer *fb, const char **why);
/* Text cells once fbcon_init() succeeded. */
void fbcon_size(unsigned *cols, unsigned *rows);

#endif
