/*
 * 16550 UART driver: polled output, polled input, no interrupts.
 *
 * Presence detection: a UART that exists echoes a byte in loopback mode
 * (MCR.LOOP), and keeps what is written to its scratch register. An absent
 * one reads back 0xFF from the floating bus, so both checks fail. Each
 * transmit waits for THR-empty a bounded number of polls: a UART that stops
 * answering is dropped rather than hanging the kernel.
 */
#include <stddef.h>
#include <arch/io.h>
#include <arch/uart.h>
#include "kernel/console.h"

/* Register offsets from the base port. */
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

#define UART_CLOCK	115200	/* divisor 1 gives 115200 baud */
#define TX_SPIN_LIMIT	200000	/* ~2 s of polls at 10 us each on real ports */

struct uart {
	uint16_t port;		/* base I/O port */
	bool dead;		/* stopped answering: writes are dropped */
};

static struct uart com;
static struct console uart_con;

static bool uart_present(uint16_t port)
{
	uint8_t saved_mcr = inb(port + UART_MCR);
	bool ok;

	outb(port + UART_SCR, 0x5A);
	ok = inb(port + UART_SCR) == 0x5A;
	outb(port + UART_MCR, MCR_LOOP | MCR_OUT2 | MCR_RTS);
	outb(port + UART_THR, 0xAE);
	for (int i = 0; i < 1000 && !(inb(port + UART_LSR) & LSR_DR); i++)
		;
	ok = ok && inb(port + UART_RBR) == 0xAE;
	outb(port + UART_MCR, saved_mcr);
	return ok;
}

static void uart_setup(uint16_t port, uint32_t baud)
{
	uint16_t div = (uint16_t)(UART_CLOCK / baud);

	outb(port + UART_IER, 0);
	outb(port + UART_LCR, LCR_DLAB);
	outb(port + UART_DLL, div & 0xFF);
	outb(port + UART_DLM, div >> 8);
	outb(port + UART_LCR, LCR_8N1);
	outb(port + UART_FCR, FCR_ENABLE | FCR_CLEAR | FCR_TRIG14);
	outb(port + UART_MCR, MCR_DTR | MCR_RTS | MCR_OUT2);
}

static bool uart_putc(struct uart *u, char c)
{
	int spins = 0;

	while (!(inb(u->port + UART_LSR) & LSR_THRE)) {
		if (++spins > TX_SPIN_LIMIT) {
			u->dead = true;
			return false;
		}
	}
	outb(u->port + UART_THR, (uint8_t)c);
	return true;
}

void uart_raw_write(uint16_t port, const char *s, uint64_t n)
{
	struct uart u = { .port = port };

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

static int uart_con_getc(struct console *c)
{
	struct uart *u = c->priv;

	if (u->dead || !(inb(u->port + UART_LSR) & LSR_DR))
		return -1;
	return inb(u->port + UART_RBR);
}

bool uart_console_init(uint16_t port)
{
	if (!uart_present(port))
		return false;
	uart_setup(port, 115200);
	com.port = port;
	com.dead = false;
	uart_con.name = "ttyS0";
	uart_con.write = uart_con_write;
	uart_con.getc = uart_con_getc;
	uart_con.priv = &com;
	console_register(&uart_con);
	return true;
}
