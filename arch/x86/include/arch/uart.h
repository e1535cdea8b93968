/* 16550 UART on an I/O port (COM1 = 0x3F8). */
#ifndef ARCH_UART_H
#define ARCH_UART_H

#include <stdbool.h>
#include <stdint.h>

#define COM1_PORT	0x3F8

/* Program 115200 8N1 and register as a console if a UART answers. */
bool uart_console_init(uint16_t port);
/* Write bytes directly, no lock (early boot and panic). */
void uart_raw_write(uint16_t port, const char *s, uint64_t n);

#endif
