/*
 * Console multiplexer and printk.
 *
 * Every line printk produces is "[sssss.uuuuuu] text": seconds and
 * microseconds on the kernel clock (zeros until the TSC is calibrated, as in
 * Linux). Tools parse what follows the prefix; the prefix itself is only for
 * people.
 *
 * All output is also kept in a 32 KiB log so that a console that appears
 * later (VGA once we know we booted under BIOS) starts with the whole boot.
 */
#include <stdarg.h>
#include <stdint.h>
#include "kernel/console.h"
#include "lib/format.h"
#include "kernel/spinlock.h"

#define LOG_SIZE 32768

static struct console *consoles;
static struct spinlock console_lock;
static bool panic_mode;
static long long (*clock_now_ns)(void);

static char log_buf[LOG_SIZE];	/* first LOG_SIZE bytes of output */
static size_t log_len;		/* bytes held in log_buf */

/*
 * A binary stream (trace.record=serial) holds the lock for each frame,
 * one frame after another, while other CPUs' printk waits.  The lock is
 * test-and-set, not fair: the streaming CPU re-takes it a few hundred
 * instructions after releasing it and could win every race, leaving a
 * line waiting for the whole stream.  So a line that waits says so
 * (console_waiters), and console_hold() lets such lines go first, for at
 * most CONSOLE_YIELD_NS.  Bounds, at b bytes a second on the line:
 *   - a printk waits for the frame being sent (a PACK page frame is
 *     under 1.3 KB at 4 KiB pages: 0.11 s at 115,200 baud; a plain one
 *     4.1 KB, 0.36 s) and for the lines ahead of it, not for the stream;
 *   - a frame waits at most CONSOLE_YIELD_NS for lines (the time of a
 *     512-byte line, printk's longest, at 115,200 baud), so a CPU that
 *     prints without pause slows a stream but cannot stop it.
 */
#define CONSOLE_YIELD_NS	50000000ll

static uint32_t console_waiters;	/* printk callers waiting for the lock */

static uint64_t lock(void)
{
	uint64_t flags;

	if (READ_ONCE(panic_mode))
		return 0;
	__atomic_fetch_add(&console_waiters, 1, __ATOMIC_RELAXED);	/* a hint only */
	flags = spin_lock_irqsave(&console_lock);
	__atomic_fetch_sub(&console_waiters, 1, __ATOMIC_RELAXED);
	return flags;
}

static void unlock(uint64_t flags)
{
	if (READ_ONCE(panic_mode))
		return;
	spin_unlock_irqrestore(&console_lock, flags);
}

static void write_locked(const char *s, size_t n)
{
	size_t room = LOG_SIZE - log_len;

	if (room) {
		size_t k = n < room ? n : room;
		for (size_t i = 0; i < k; i++)
			log_buf[log_len + i] = s[i];
		log_len += k;
	}
	for (struct console *c = consoles; c; c = c->next)
		c->write(c, s, n);
}

void console_register(struct console *c)
{
	uint64_t flags = lock();

	c->next = NULL;
	if (!consoles) {
		consoles = c;
	} else {
		struct console *t = consoles;
		while (t->next)
			t = t->next;
		t->next = c;
	}
	if (log_len)
		c->write(c, log_buf, log_len);
	unlock(flags);
}

bool console_unregister(struct console *c)
{
	uint64_t flags = lock();
	bool found = false;

	for (struct console **pp = &consoles; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			c->next = NULL;
			found = true;
			break;
		}
	}
	unlock(flags);
	return found;
}

bool console_any(void)
{
	return READ_ONCE(consoles) != NULL;
}

void console_write(const char *s, size_t n)
{
	uint64_t flags = lock();

	write_locked(s, n);
	unlock(flags);
}

void console_write_raw(const char *s, size_t n)
{
	uint64_t flags = lock();

	for (struct console *c = consoles; c; c = c->next)
		if (c->write_raw)
			c->write_raw(c, s, n);
	unlock(flags);
}

uint64_t console_hold(void)
{
	long long t0 = clock_now_ns ? clock_now_ns() : -1;

	/* Lines waiting go first, within the bound (see console_waiters). */
	while (t0 >= 0 && __atomic_load_n(&console_waiters, __ATOMIC_RELAXED) &&
	       clock_now_ns() - t0 < CONSOLE_YIELD_NS)
		cpu_relax();
	if (READ_ONCE(panic_mode))
		return 0;
	return spin_lock_irqsave(&console_lock);	/* not counted: not a line */
}

void console_release(uint64_t flags)
{
	unlock(flags);
}

void console_write_raw_held(const char *s, size_t n)
{
	for (struct console *c = consoles; c; c = c->next)
		if (c->write_raw)
			c->write_raw(c, s, n);
}

int console_poll_byte(void)
{
	for (struct console *c = consoles; c; c = c->next) {
		if (c->getc) {
			int ch = c->getc(c);
			if (ch >= 0)
				return ch;
		}
	}
	return -1;
}

void console_enter_panic_mode(void)
{
	WRITE_ONCE(panic_mode, true);
}

void printk_set_clock(long long (*now_ns)(void))
{
	clock_now_ns = now_ns;
}

int printk(const char *fmt, ...)
{
	char buf[512];
	long long ns = clock_now_ns ? clock_now_ns() : -1;
	uint64_t us = ns > 0 ? (uint64_t)ns / 1000 : 0;
	int n, p;
	va_list ap;

	p = ksnprintf(buf, sizeof(buf), "[%5llu.%06llu] ",
		      (unsigned long long)(us / 1000000),
		      (unsigned long long)(us % 1000000));
	va_start(ap, fmt);
	n = kvsnprintf(buf + p, sizeof(buf) - p, fmt, ap);
	va_end(ap);
	n += p;
	if (n >= (int)sizeof(buf)) {
		n = sizeof(buf) - 1;
		buf[n - 1] = '\n';	/* truncated line still ends */
	}
	console_write(buf, n);
	return n;
}

int cprintf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	console_write(buf, n);
	return n;
}
