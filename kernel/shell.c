/*
 * Serial shell: a prompt, a line editor and a command table.
 *
 * The editor keeps printable ASCII only; backspace (BS or DEL) erases,
 * Ctrl-C drops the line, Ctrl-U clears it, escape sequences (arrow keys)
 * are swallowed, other control bytes and bytes >= 0x80 are ignored, and a
 * line longer than SHELL_LINE_MAX - 1 is refused with one message when
 * Enter comes. Any byte sequence leaves the shell at a prompt. While a
 * command runs, Ctrl-C cancels it if it is a long one (dumps, benchmarks,
 * ktests poll console_cancelled()); bytes typed meanwhile wait for the
 * next prompt.
 *
 * Between keys the CPU sleeps in hlt; a 1 kHz LAPIC timer wakes it to poll
 * the UART, often enough that a 16-byte FIFO at 115200 baud (11.5 bytes
 * per ms) never overflows on a real serial line.
 */
#include <stdbool.h>
#include <stddef.h>
#include <arch/clockwd.h>
#include <arch/cpu.h>
#include <arch/lapic.h>
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/shell.h"

#define PROMPT		"baretrace> "
#define POLL_HZ		1000

extern const struct shell_cmd __start_shell_cmds[];
extern const struct shell_cmd __stop_shell_cmds[];

int shell_split(char *line, char **argv, int max)
{
	int argc = 0;
	char *p = line;

	while (*p) {
		while (*p == ' ' || *p == '\t')
			*p++ = '\0';
		if (!*p)
			break;
		if (argc == max)
			return -1;
		argv[argc++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
	return argc;
}

int shell_exec(char *line)
{
	char *argv[SHELL_ARGS_MAX];
	int argc = shell_split(line, argv, SHELL_ARGS_MAX);

	if (argc < 0) {
		cprintf("error: too many arguments (at most %d)\n", SHELL_ARGS_MAX - 1);
		return -1;
	}
	if (argc == 0)
		return 0;
	for (const struct shell_cmd *c = __start_shell_cmds; c < __stop_shell_cmds; c++)
		if (!strcmp(c->name, argv[0]))
			return c->fn(argc, argv);
	cprintf("error: unknown command '%.32s'; 'help' lists the commands\n", argv[0]);
	return -1;
}

static int wait_key(void)
{
	for (;;) {
		int ch = console_getc();
		if (ch >= 0)
			return ch;
		clock_watchdog_poll(true);	/* a check if one is due (boot CPU) */
		cpu_sleep_until_irq();
		irq_disable();
	}
}

/* Read one line with basic editing; returns its length, -1 if too long. */
static int read_line(char *buf)
{
	int len = 0;
	bool overflow = false;

	for (;;) {
		int ch = wait_key();

		if (ch == '\r' || ch == '\n') {
			cprintf("\n");
			buf[len] = '\0';
			return overflow ? -1 : len;
		}
		if (ch == 0x03) {			/* Ctrl-C */
			cprintf("^C\n" PROMPT);
			len = 0;
			overflow = false;
		} else if (ch == 0x15) {		/* Ctrl-U */
			while (len) {
				cprintf("\b \b");
				len--;
			}
			overflow = false;
		} else if (ch == 0x08 || ch == 0x7F) {	/* backspace */
			if (len) {
				len--;
				cprintf("\b \b");
			}
		} else if (ch == 0x1B) {		/* ESC [ ... final byte */
			int c2 = wait_key();
			if (c2 == '[' || c2 == 'O') {
				int c3;
				int n = 0;
				do {
					c3 = wait_key();
				} while (c3 >= 0x20 && c3 < 0x40 && ++n < 16);
			}
		} else if (ch >= 0x20 && ch < 0x7F) {
			if (len < SHELL_LINE_MAX - 1) {
				buf[len++] = (char)ch;
				char echo[2] = { (char)ch, 0 };
				console_write(echo, 1);
			} else {
				overflow = true;
			}
		}
		/* anything else: ignored */
	}
}

void shell_run(void)
{
	char line[SHELL_LINE_MAX];

	lapic_timer_periodic(POLL_HZ);
	cprintf("shell: type 'help' for commands\n");
	for (;;) {
		cprintf(PROMPT);
		int n = read_line(line);
		if (n < 0) {
			cprintf("error: line too long (at most %d characters)\n", SHELL_LINE_MAX - 1);
			continue;
		}
		irq_enable();
		console_cancel_clear();	/* a Ctrl-C from now on cancels this command */
		shell_exec(line);
		irq_disable();
	}
}

static int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	for (const struct shell_cmd *c = __start_shell_cmds; c < __stop_shell_cmds; c++)
		cprintf("  %-8s %-28s %s\n", c->name, c->usage, c->help);
	return 0;
}
SHELL_COMMAND(help, .name = "help", .usage = "", .help = "list the commands", .fn = cmd_help);
