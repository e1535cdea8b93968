/*
 * 16550 UARTs: on an I/O port (COM1 = 0x3F8) or memory-mapped (ACPI SPCR,
 * PCI cards), each registered as a console.
 */
#ifndef ARCH_UART_H
#define ARCH_UART_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/console.h"

#define COM1_PORT		0x3F8
#define UART_PC_CLOCK_HZ	1843200	/* the PC crystal: divisor 1 = 115200 baud */

struct uart {
	bool mmio;		/* registers in memory, else I/O ports */
	uint64_t base;		/* I/O port or physical address of register 0 */
	uint8_t reg_shift;	/* register i sits at base + (i << reg_shift) */
	uint8_t access_bytes;	/* MMIO access width: 1 or 4 (ignored for I/O) */
	uint32_t clock_hz;	/* input clock; 0 = UART_PC_CLOCK_HZ */
	uint32_t baud;		/* rate programmed; 0 = left as the firmware set it */
	bool dead;		/* stopped answering: writes are dropped */
	struct console con;	/* its console, once registered */
};

/* Does a 16550 answer at u (scratch register and loopback echo)? */
bool uart_present(const struct uart *u);
/* Program 8N1 at baud (0: keep the divisor), FIFOs on, interrupts off. */
void uart_setup(struct uart *u, uint32_t baud);
/* Register u as console name (output, and input through getc). */
void uart_register(struct uart *u, const char *name);

/* COM1 at boot: program 115200 8N1 and register as ttyS0 if it answers. */
bool uart_console_init(uint16_t port);
/* The console uart_console_init() registered, or NULL. */
struct uart *uart_early(void);
/* Write bytes directly to an I/O-port UART, no lock (early boot and panic). */
void uart_raw_write(uint16_t port, const char *s, uint64_t n);

#endif
