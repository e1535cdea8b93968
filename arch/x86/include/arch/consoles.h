/*
 * Console discovery: after ACPI is parsed, find every place output can go
 * (SPCR, PCI serial cards, COM1-COM4, the framebuffer, VGA text, the PS/2
 * keyboard for input), report each, and keep the ones console= selects.
 */
#ifndef ARCH_CONSOLES_H
#define ARCH_CONSOLES_H

void consoles_init(void);

#endif
