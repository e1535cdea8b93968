/*
 * Console input: bytes typed ahead of the shell, and Ctrl-C.
 *
 * Input is polled; no console interrupts. Between commands the shell reads
 * it byte by byte. While a command runs, its long loops (a dump's lines and
 * pages, a benchmark's runs, the ktests) call console_cancelled(), which
 * drains what the consoles hold:
 *
 *   0x03 (Ctrl-C on the serial line, Ctrl+C on the PS/2 keyboard)
 *        sets the cancel flag and drops the bytes typed ahead, as a
 *        terminal's interrupt character flushes its input queue;
 *   any other byte waits in the typeahead ring for console_getc(), so a
 *        command typed during a dump is not lost (up to TYPEAHEAD_SIZE
 *        bytes; beyond that they are dropped).
 *
 * Contract: any CPU may call these. One CPU drains at a time (input_lock,
 * taken by trylock: a CPU that finds it held just reads the flag, since the
 * holder is draining for it). The flag is written under the lock and read
 * without it (relaxed: a poll that misses a Ctrl-C set that instant sees it
 * at the next poll); console_cancel_clear() runs between commands, when
 * nothing polls.
 *
 * I1: tail <= head <= tail + TYPEAHEAD_SIZE (free-running counters).
 */
#include <stdbool.h>
#include <stdint.h>
#include "kernel/console.h"
#include "kernel/spinlock.h"

#define TYPEAHEAD_SIZE	256	/* two shell lines */
#define CTRL_C		0x03

static struct spinlock input_lock;	/* one drainer at a time */
static uint8_t typeahead[TYPEAHEAD_SIZE]; /* bytes typed during a command */
static uint32_t head, tail;		/* next write, next read (I1) */
static bool cancel;			/* Ctrl-C seen since the last clear */

/* Drain the consoles into the ring; caller holds input_lock. */
static void drain(void)
{
	int ch;

	/* Bounded: each console's getc returns -1 once its FIFO is empty, and
	 * a sender that never stops is cut off after a few ring's worth. */
	for (int i = 0; i < 4 * TYPEAHEAD_SIZE && (ch = console_poll_byte()) >= 0; i++) {
		if (ch == CTRL_C) {
			WRITE_ONCE(cancel, true);
			tail = head;		/* I1: the ring is empty */
		} else if (head - tail < TYPEAHEAD_SIZE) {
			typeahead[head++ % TYPEAHEAD_SIZE] = (uint8_t)ch;
		}	/* else dropped: the ring is full (I1) */
	}
}

bool console_cancelled(void)
{
	if (spin_trylock(&input_lock)) {
		drain();
		spin_unlock(&input_lock);
	}
	return READ_ONCE(cancel);
}

void console_cancel_clear(void)
{
	WRITE_ONCE(cancel, false);
}

int console_getc(void)
{
	int ch = -1;

	if (!spin_trylock(&input_lock))
		return -1;		/* another CPU drains: its bytes come next time */
	if (tail != head)
		ch = typeahead[tail++ % TYPEAHEAD_SIZE];
	else
		ch = console_poll_byte();
	spin_unlock(&input_lock);
	return ch;
}
