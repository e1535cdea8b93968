/*
 * Consoles: the places kernel output goes (COM1, VGA text, later others).
 * printk writes to every registered console; a console registered late gets
 * the log written so far replayed, so nothing printed before it is lost.
 */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include "baretrace/compiler.h"

struct console {
	const char *name;				/* shown at registration */
	void (*write)(struct console *c, const char *s, size_t n); /* must not block forever */
	int (*getc)(struct console *c);			/* next input byte or -1; may be NULL */
	void (*write_raw)(struct console *c, const char *s, size_t n); /* 8-bit clean; NULL: not a byte stream */
	void *priv;					/* driver state */
	struct console *next;				/* registration list */
};

void console_register(struct console *c);
bool console_unregister(struct console *c);	/* false if it was not registered */
void console_write(const char *s, size_t n);	/* to all consoles, serialised */
/* Bytes unchanged to the consoles that carry a byte stream (serial ports). */
void console_write_raw(const char *s, size_t n);
/*
 * Hold the console lock across many raw writes (a binary dump), so no
 * other CPU's printk lands inside a frame; interrupts are off meanwhile.
 * Lines already waiting for the lock go first (for a bounded time), so
 * that a stream held frame by frame lets them out between its frames.
 */
uint64_t console_hold(void);
void console_write_raw_held(const char *s, size_t n);
void console_release(uint64_t flags);
/* One byte from the first console with input, or -1 (kernel/console_input.c's source). */
int console_poll_byte(void);
/*
 * Input (kernel/console_input.c): the next byte typed, bytes typed ahead
 * during a command first, or -1. Ctrl-C (0x03) while a command runs sets
 * the cancel flag that long commands poll with console_cancelled(); the
 * shell and the job runner clear it before each command or job.
 */
int console_getc(void);
bool console_cancelled(void);
void console_cancel_clear(void);
bool console_any(void);				/* is any console registered? */

/*
 * After a fatal exception the console lock may be held by the code that
 * faulted; panic mode makes the writers skip the lock from then on.
 */
void console_enter_panic_mode(void);

int printk(const char *fmt, ...) __printf(1, 2);
/* Like printk without the timestamp prefix: shell replies, dumps, KTAP. */
int cprintf(const char *fmt, ...) __printf(1, 2);

/* printk's timestamp source: ns since the clock's epoch, or -1 if none yet. */
void printk_set_clock(long long (*now_ns)(void));

#endif
