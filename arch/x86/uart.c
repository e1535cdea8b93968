/*
 * 16550 UART driver: polled output, polled input, no interrupts.
 *
 * The same register set is reached three ways on PCs: I/O ports (COM1-COM4,
 * most PCI cards), or memory-mapped, either one byte per register or one
 * 32-bit word per register (ACPI SPCR and PCIe cards say which). struct uart
 * hides the difference behind uart_in()/uart_out().
 *
 * Presence detection: a UART that exists echoes a byte in loopback mode
 * (MCR.LOOP), and keeps what is written to its scratch register. An absent
 * one reads back 0xFF from the floating bus, so both checks fail. Each
 * transmit waits for THR-empty a bounded time (TX_WAIT_CYCLES of the TSC):
 * a UART that stops answering is dropped rather than hanging the kernel.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/io.h>
#include <arch/uart.h>
#include "kernel/console.h"

/* Register indices (multiplied by the stride to get the offset). */
#define UART_RBR	0	/* receive buffer (read, DLAB=0) */
#define UART_THR	0	/* transmit holding (write, DLAB=0) */
#define UART_DLL	0	/* divisor latch low (DLAB=1) */
#define UART_IER	1	/* interrupt enable (DLAB=0) */
#define UART_DLM	1	/* divisor latch high (DLAB=1) */
#define UART_FCR	2	/* FIFO control (write) */
#define UART_LCR	3	/* line control */
#define UART_MCR	4	/* modem control */
#define UART_LSR	5	/* line status */
#define UART_SCR	7	/* scratch */

#define LCR_8N1		0x03
#define LCR_DLAB	0x80
#define FCR_ENABLE	0x01
#define FCR_CLEAR	0x06	/* clear receive and transmit FIFOs */
#define FCR_TRIG14	0xC0
#define MCR_DTR		0x01
#define MCR_RTS		0x02
#define MCR_OUT2	0x08
#define MCR_LOOP	0x10
#define LSR_DR		0x01	/* data ready */
#define LSR_THRE	0x20	/* transmit holding register empty */

/*
 * How long one byte may wait for THR-empty: 2^31 TSC cycles, 0.5 to 1 s at
 * the 2-4 GHz of real TSCs (and QEMU's), known before calibration. Bounded
 * in time, not in polls: a poll costs 1-2 us on a real port but 20-90 ns
 * under TCG, where a count of polls gave a line paced by its reader (a
 * socket, a pipe: QEMU holds THRE until the backend takes more) 5-18 ms.
 * The TSC is read every TX_POLLS_PER_LOOK polls, only once THRE was not set.
 */
#define TX_WAIT_CYCLES		(1ull << 31)
#define TX_POLLS_PER_LOOK	64

static struct uart com1;	/* the early console, set up before anything is parsed */

static uint8_t uart_in(const struct uart *u, unsigned reg)
{
	uint64_t off = (uint64_t)reg << u->reg_shift;

	if (!u->mmio)
		return inb((uint16_t)(u->base + off));
	if (u->access_bytes == 4)
		return (uint8_t)mmio_read32((uintptr_t)(u->base + off));
	return mmio_read8((uintptr_t)(u->base + off));
}

static void uart_out(const struct uart *u, unsigned reg, uint8_t v)
{
	uint64_t off = (uint64_t)reg << u->reg_shift;

	if (!u->mmio)
		outb((uint16_t)(u->base + off), v);
	else if (u->access_bytes == 4)
		mmio_write32((uintptr_t)(u->base + off), v);
	else
		mmio_write8((uintptr_t)(u->base + off), v);
}

bool uart_present(const struct uart *u)
{
	uint8_t saved_mcr = uart_in(u, UART_MCR);
	bool ok;

	uart_out(u, UART_SCR, 0x5A);
	ok = uart_in(u, UART_SCR) == 0x5A;
	uart_out(u, UART_MCR, MCR_LOOP | MCR_OUT2 | MCR_RTS);
	uart_out(u, UART_THR, 0xAE);
	for (int i = 0; i < 1000 && !(uart_in(u, UART_LSR) & LSR_DR); i++)
		;
	ok = ok && uart_in(u, UART_RBR) == 0xAE;
	uart_out(u, UART_MCR, saved_mcr);
	return ok;
}

/*
 * The divisor is clock / (16 * baud). Without a stated clock we assume the
 * PC's 1.8432 MHz crystal, where divisor 1 is 115200 baud. baud == 0 keeps
 * the divisor the firmware programmed (SPCR's "as is").
 */
void uart_setup(struct uart *u, uint32_t baud)
{
	uint32_t clock = u->clock_hz ? u->clock_hz : UART_PC_CLOCK_HZ;

	uart_out(u, UART_IER, 0);
	if (baud) {
		uint32_t div = (clock / 16 + baud / 2) / baud;
		if (div == 0)
			div = 1;
		if (div > 0xFFFF)
			div = 0xFFFF;
		uart_out(u, UART_LCR, LCR_DLAB);
		uart_out(u, UART_DLL, div & 0xFF);
		uart_out(u, UART_DLM, div >> 8);
	}
	uart_out(u, UART_LCR, LCR_8N1);
	uart_out(u, UART_FCR, FCR_ENABLE | FCR_CLEAR | FCR_TRIG14);
	uart_out(u, UART_MCR, MCR_DTR | MCR_RTS | MCR_OUT2);
	u->baud = baud;
	u->dead = false;
}

static bool uart_putc(struct uart *u, char c)
{
	uint64_t t0 = 0;
	unsigned polls = 0;

	while (!(uart_in(u, UART_LSR) & LSR_THRE)) {
		if (polls++ % TX_POLLS_PER_LOOK)
			continue;
		if (!t0)
			t0 = rdtsc() | 1;
		else if (rdtsc() - t0 > TX_WAIT_CYCLES) {
			u->dead = true;
			return false;
		}
	}
	uart_out(u, UART_THR, (uint8_t)c);
	return true;
}

void uart_raw_write(uint16_t port, const char *s, uint64_t n)
{
	struct uart u = { .base = port };

	for (uint64_t i = 0; i < n && !u.dead; i++) {
		if (s[i] == '\n')
			uart_putc(&u, '\r');
		uart_putc(&u, s[i]);
	}
}

static void uart_con_write(struct console *c, const char *s, size_t n)
{
	struct uart *u = c->priv;

	for (size_t i = 0; i < n && !u->dead; i++) {
		if (s[i] == '\n' && !uart_putc(u, '\r'))
			break;
		uart_putc(u, s[i]);
	}
}

/* Bytes as they are: binary dumps must not get '\r' inserted. */
static void uart_con_write_raw(struct console *c, const char *s, size_t n)
{
	struct uart *u = c->priv;

	for (size_t i = 0; i < n && !u->dead; i++)
		uart_putc(u, s[i]);
}

static int uart_con_getc(struct console *c)
{
	struct uart *u = c->priv;

	if (u->dead || !(uart_in(u, UART_LSR) & LSR_DR))
		return -1;
	return uart_in(u, UART_RBR);
}

void uart_register(struct uart *u, const char *name)
{
	u->con.name = name;
	u->con.write = uart_con_write;
	u->con.write_raw = uart_con_write_raw;
	u->con.getc = uart_con_getc;
	u->con.priv = u;
	console_register(&u->con);
}

bool uart_console_init(uint16_t port)
{
	com1 = (struct uart){ .base = port };
	if (!uart_present(&com1))
		return false;
	uart_setup(&com1, 115200);
	uart_register(&com1, "ttyS0");
	return true;
}

struct uart *uart_early(void)
{
	return com1.con.write ? &com1 : NULL;
}
