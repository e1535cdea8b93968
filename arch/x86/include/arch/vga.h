/* VGA text mode console (80x25 at 0xB8000), for BIOS boots. */
#ifndef ARCH_VGA_H
#define ARCH_VGA_H

#include "kernel/console.h"

void vga_console_init(void);
/* Its console once vga_console_init() ran, else NULL. */
struct console *vga_console(void);

#endif
