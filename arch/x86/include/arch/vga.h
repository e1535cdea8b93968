/* VGA text mode console (80x25 at 0xB8000), for BIOS boots. */
#ifndef ARCH_VGA_H
#define ARCH_VGA_H

void vga_console_init(void);

#endif
