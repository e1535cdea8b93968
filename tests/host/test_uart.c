/*
 * arch/x86/uart.c against a model of a 16550, reached through the three
 * ways PCs wire one: I/O ports, MMIO one byte per register, and MMIO one
 * 32-bit word per register (ACPI SPCR and PCIe cards).  QEMU's x86
 * machines offer only port-mapped 16550s, so the MMIO paths are shown
 * here: the right register at the right address with the right width, the
 * divisor, presence, output with and without CR insertion, input, and a
 * UART that stops answering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <arch/io.h>
#include <arch/uart.h>

/* ---- the model ---- */

#define LSR_DR		0x01
#define LSR_THRE	0x20
#define LSR_TEMT	0x40

static struct model {
	int mmio;		/* 0: ports at port_base, 1: memory at mem_base */
	uint16_t port_base;
	uintptr_t mem_base;
	unsigned shift, width;	/* register stride (log2) and MMIO access bytes */
	int absent;		/* nothing there: reads float high */
	int stuck;		/* THR never empties */
	uint64_t now;		/* the TSC as the driver reads it (model_rdtsc) */
	uint64_t poll_cycles;	/* how far each poll of LSR moves it */
	uint64_t busy_until;	/* THR not empty before this time (a paced line) */
	uint8_t ier, lcr, mcr, scr, fcr, dll, dlm;
	uint8_t rx[16];
	unsigned rx_head, rx_len;
	char tx[256];
	unsigned tx_len;
	unsigned lsr_reads;	/* polls of the line status register */
	unsigned bad;		/* accesses outside the model's decoding */
	unsigned dll_writes;
} m;

static uint8_t mem_window[64];	/* only its address is used: MMIO base */

static void model_reset(int mmio, unsigned shift, unsigned width)
{
	memset(&m, 0, sizeof(m));
	m.mmio = mmio;
	m.port_base = 0x2F8;
	m.mem_base = (uintptr_t)mem_window;
	m.shift = shift;
	m.width = width;
	m.poll_cycles = 1000;	/* 1 us at 1 GHz: a real port's poll */
}

uint64_t model_rdtsc(void)
{
	return m.now;
}

static void rx_push(uint8_t v)
{
	if (m.rx_len < sizeof(m.rx))
		m.rx[(m.rx_head + m.rx_len++) % sizeof(m.rx)] = v;
}

static uint8_t reg_read(unsigned reg)
{
	int dlab = m.lcr & 0x80;
	uint8_t v;

	if (m.absent)
		return 0xFF;
	switch (reg) {
	case 0:
		if (dlab)
			return m.dll;
		if (!m.rx_len)
			return 0;
		v = m.rx[m.rx_head];
		m.rx_head = (m.rx_head + 1) % sizeof(m.rx);
		m.rx_len--;
		return v;
	case 1: return dlab ? m.dlm : m.ier;
	case 3: return m.lcr;
	case 4: return m.mcr;
	case 5:
		m.lsr_reads++;
		m.now += m.poll_cycles;
		return (m.rx_len ? LSR_DR : 0) |
		       (m.stuck || m.now < m.busy_until ? 0 : LSR_THRE | LSR_TEMT);
	case 7: return m.scr;
	default: return 0;
	}
}

static void reg_write(unsigned reg, uint8_t v)
{
	int dlab = m.lcr & 0x80;

	if (m.absent)
		return;
	switch (reg) {
	case 0:
		if (dlab) {
			m.dll = v;
			m.dll_writes++;
		} else if (m.mcr & 0x10) {
			rx_push(v);		/* loopback */
		} else if (!m.stuck && m.tx_len < sizeof(m.tx)) {
			m.tx[m.tx_len++] = (char)v;
		}
		return;
	case 1:
		if (dlab)
			m.dlm = v;
		else
			m.ier = v;
		return;
	case 2: m.fcr = v; return;
	case 3: m.lcr = v; return;
	case 4: m.mcr = v; return;
	case 7: m.scr = v; return;
	default: m.bad++; return;
	}
}

/* Decode an offset from the base into a register, or count a bad access. */
static int decode(uint64_t off, unsigned bytes)
{
	if (bytes != m.width || off % (1u << m.shift) || (off >> m.shift) > 7) {
		m.bad++;
		return -1;
	}
	return (int)(off >> m.shift);
}

uint8_t model_inb(uint16_t port)
{
	if (m.mmio || port < m.port_base || port > m.port_base + 7) {
		m.bad++;
		return 0xFF;
	}
	return reg_read(port - m.port_base);
}

void model_outb(uint16_t port, uint8_t v)
{
	if (m.mmio || port < m.port_base || port > m.port_base + 7) {
		m.bad++;
		return;
	}
	reg_write(port - m.port_base, v);
}

uint32_t model_mmio_read(uintptr_t addr, unsigned bytes)
{
	int reg = m.mmio && addr >= m.mem_base ? decode(addr - m.mem_base, bytes) : (m.bad++, -1);

	return reg < 0 ? 0xFFFFFFFFu : reg_read((unsigned)reg);
}

void model_mmio_write(uintptr_t addr, uint32_t v, unsigned bytes)
{
	int reg = m.mmio && addr >= m.mem_base ? decode(addr - m.mem_base, bytes) : (m.bad++, -1);

	if (reg >= 0)
		reg_write((unsigned)reg, (uint8_t)v);
}

/* ---- the kernel's side ---- */

static struct console *registered;

void console_register(struct console *c)
{
	registered = c;
}

static struct uart port_uart(void)
{
	return (struct uart){ .base = 0x2F8 };
}

static struct uart mmio_uart(unsigned shift, unsigned width, uint32_t clock_hz)
{
	return (struct uart){ .mmio = true, .base = (uintptr_t)mem_window,
			      .reg_shift = (uint8_t)shift, .access_bytes = (uint8_t)width,
			      .clock_hz = clock_hz };
}

/* Present, programmed, registered; output cooked and raw; input. */
static void exercise(struct uart *u, uint32_t baud, uint8_t want_dll, uint8_t want_dlm)
{
	struct console *c;
	char buf[8];

	assert_true(uart_present(u));
	assert_int_equal(m.mcr & 0x10, 0);		/* loopback undone */
	uart_setup(u, baud);
	assert_int_equal(m.dll, want_dll);
	assert_int_equal(m.dlm, want_dlm);
	assert_int_equal(m.lcr, 0x03);			/* 8N1, DLAB off again */
	assert_int_equal(m.ier, 0);
	assert_int_equal(m.mcr & 0x0B, 0x0B);		/* DTR, RTS, OUT2 */
	assert_int_equal(m.fcr & 0x01, 0x01);		/* FIFOs on */

	uart_register(u, "test");
	c = registered;
	assert_ptr_equal(c, &u->con);
	c->write(c, "a\nb", 3);
	c->write_raw(c, "\n\x00\xff", 3);
	assert_int_equal(m.tx_len, 7);
	assert_memory_equal(m.tx, "a\r\nb\n\x00\xff", 7);

	assert_int_equal(c->getc(c), -1);
	rx_push('x');
	rx_push('\r');
	buf[0] = (char)c->getc(c);
	buf[1] = (char)c->getc(c);
	assert_memory_equal(buf, "x\r", 2);
	assert_int_equal(c->getc(c), -1);
	assert_int_equal(m.bad, 0);
}

static void test_port(void **state)
{
	struct uart u = port_uart();

	(void)state;
	model_reset(0, 0, 1);
	exercise(&u, 115200, 1, 0);
}

static void test_mmio_bytes(void **state)
{
	struct uart u = mmio_uart(0, 1, 0);

	(void)state;
	model_reset(1, 0, 1);
	exercise(&u, 9600, 12, 0);		/* 1.8432 MHz / 16 / 9600 */
}

static void test_mmio_words(void **state)
{
	/* SPCR or a PCIe card: 32-bit registers 4 bytes apart, 48 MHz clock. */
	struct uart u = mmio_uart(2, 4, 48000000);

	(void)state;
	model_reset(1, 2, 4);
	exercise(&u, 115200, 26, 0);		/* 3 MHz / 115200 = 26.04 */
	model_reset(1, 2, 4);
	u = mmio_uart(2, 4, 48000000);
	exercise(&u, 300, 0x10, 0x27);		/* 3 MHz / 300 = 10000 = 0x2710 */
}

static void test_mmio_wrong_stride_is_seen(void **state)
{
	/* The model decoding 32-bit registers: a byte-wide driver misses it. */
	struct uart u = mmio_uart(0, 1, 0);

	(void)state;
	model_reset(1, 2, 4);
	assert_false(uart_present(&u));
	assert_true(m.bad > 0);
}

static void test_absent(void **state)
{
	struct uart u = port_uart(), w = mmio_uart(2, 4, 0);

	(void)state;
	model_reset(0, 0, 1);
	m.absent = 1;
	assert_false(uart_present(&u));
	model_reset(1, 2, 4);
	m.absent = 1;
	assert_false(uart_present(&w));
}

static void test_keep_divisor(void **state)
{
	struct uart u = mmio_uart(2, 4, 0);

	(void)state;
	model_reset(1, 2, 4);
	m.dll = 3;				/* as the firmware left it */
	uart_setup(&u, 0);
	assert_int_equal(m.dll_writes, 0);
	assert_int_equal(m.dll, 3);
	assert_int_equal(m.lcr, 0x03);
}

/* A console on u at 115200 baud, the model reset (mmio, stride, width). */
static struct console *console_on(struct uart *u, int mmio, unsigned shift, unsigned width)
{
	model_reset(mmio, shift, width);
	uart_setup(u, 115200);
	uart_register(u, "under test");
	return registered;
}

static void test_stuck_uart_is_dropped(void **state)
{
	struct uart u = mmio_uart(2, 4, 0);
	struct console *c = console_on(&u, 1, 2, 4);
	unsigned polls;

	(void)state;
	m.stuck = 1;
	c->write(c, "hello", 5);
	assert_true(u.dead);
	polls = m.lsr_reads;
	/* It waited its time (2^31 cycles), not a count of polls, and no more. */
	assert_true(m.now > (1ull << 31));
	assert_true(m.now <= (1ull << 31) + 2 * 64 * m.poll_cycles);
	c->write(c, "more", 4);			/* dropped at once */
	c->write_raw(c, "more", 4);
	assert_int_equal(m.lsr_reads, polls);
	assert_int_equal(c->getc(c), -1);
	assert_int_equal(m.tx_len, 0);
	uart_setup(&u, 115200);			/* set up again: it may talk again */
	m.stuck = 0;
	c->write(c, "ok", 2);
	assert_memory_equal(m.tx, "ok", 2);
}

/*
 * A line paced by its reader (QEMU's socket or pipe backend: THRE stays
 * clear until the reader takes more) holds a byte for 400 ms: it is
 * written, the UART not dropped. With polls at 20 ns (TCG) a bound of
 * 200,000 polls (4 ms) dropped it.
 */
static void test_paced_line_is_kept(void **state)
{
	struct uart u = { .base = 0x2F8 };
	struct console *c = console_on(&u, 0, 0, 1);

	(void)state;
	m.poll_cycles = 20;
	m.busy_until = m.now + 400000000;	/* 400 ms at 1 GHz */
	c->write(c, "ab", 2);
	assert_false(u.dead);
	assert_memory_equal(m.tx, "ab", 2);
	assert_true(m.now >= m.busy_until);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_port),
		cmocka_unit_test(test_mmio_bytes),
		cmocka_unit_test(test_mmio_words),
		cmocka_unit_test(test_mmio_wrong_stride_is_seen),
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_paced_line_is_kept),
		cmocka_unit_test(test_keep_divisor),
		cmocka_unit_test(test_stuck_uart_is_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
