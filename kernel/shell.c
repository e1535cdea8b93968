/*
 * Serial shell: a prompt, a line editor and a command table.
 *
 * The editor keeps printable ASCII only; backspace (BS or DEL) erases,
 * Ctrl-C drops the line, Ctrl-U clears it, Up and Down (ESC [ A, ESC [ B,
 * or ESC O A/B) walk the last SHELL_HISTORY lines run, other escape
 * sequences are swallowed, other control bytes and bytes >= 0x80 are
 * ignored, and a line longer than SHELL_LINE_MAX - 1 is refused with one
 * message when Enter comes. Any byte sequence leaves the shell at a prompt. While a
 * command runs, Ctrl-C cancels it if it is a long one (dumps, benchmarks,
 * ktests poll console_cancelled()); bytes typed meanwhile wait for the
 * next prompt.
 *
 * Between keys the CPU sleeps in hlt; a 1 kHz LAPIC timer wakes it to poll
 * the UART, often enough that a 16-byte FIFO at 115200 baud (11.5 bytes
 * per ms) never overflows on a real serial line.  Each wake also runs the
 * SHELL_IDLE() steps (bounded each), such as the drain of trace.record=.
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
#define SHELL_HISTORY	16	/* lines Up can bring back */

/*
 * History: a ring of the last lines run, oldest overwritten. hist_count
 * counts every line ever added; line n (0-based) sits in slot n %
 * SHELL_HISTORY while n >= hist_count - SHELL_HISTORY. Only the shell's
 * own loop touches it (one CPU, no interrupt handler).
 */
static char hist[SHELL_HISTORY][SHELL_LINE_MAX];
static unsigned hist_count;

static void history_add(const char *line)
{
	if (!*line || (hist_count && !strcmp(hist[(hist_count - 1) % SHELL_HISTORY], line)))
		return;		/* blank, or the same as the line before: kept once */
	memcpy(hist[hist_count % SHELL_HISTORY], line, strnlen(line, SHELL_LINE_MAX - 1) + 1);
	hist_count++;
}

extern const struct shell_cmd __start_shell_cmds[];
extern const struct shell_cmd __stop_shell_cmds[];
extern const struct shell_idle __start_shell_idle[];
extern const struct shell_idle __stop_shell_idle[];

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

static notrace int wait_key(void)
{
	for (;;) {
		int ch = console_getc();
		if (ch >= 0)
			return ch;
		clock_watchdog_poll(true);	/* a check if one is due (boot CPU) */
		for (const struct shell_idle *h = __start_shell_idle; h < __stop_shell_idle; h++)
			h->fn();		/* e.g. a page or two of trace.record= */
		cpu_sleep_until_irq();
		irq_disable();
	}
}

/* Replace the line being edited by s (NULL: empty), on screen too. */
static int replace_line(char *buf, int len, const char *s)
{
	while (len) {
		cprintf("\b \b");
		len--;
	}
	for (; s && s[len] && len < SHELL_LINE_MAX - 1; len++)
		buf[len] = s[len];
	console_write(buf, len);
	return len;
}

/* Read one line with basic editing; returns its length, -1 if too long. */
static int read_line(char *buf)
{
	int len = 0;
	bool overflow = false;
	unsigned at = hist_count;	/* history line shown; hist_count: the new one */

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
			int c3 = 0;

			if (c2 == '[' || c2 == 'O') {
				int n = 0;
				do {
					c3 = wait_key();
				} while (c3 >= 0x20 && c3 < 0x40 && ++n < 16);
			}
			/* Up: one line older, as far as the ring holds; Down: newer, then empty. */
			if (c3 == 'A' && at > 0 && at + SHELL_HISTORY > hist_count) {
				at--;
				len = replace_line(buf, len, hist[at % SHELL_HISTORY]);
				overflow = false;
			} else if (c3 == 'B' && at < hist_count) {
				at++;
				len = replace_line(buf, len, at < hist_count ?
						   hist[at % SHELL_HISTORY] : NULL);
				overflow = false;
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
		history_add(line);
		irq_enable();
		console_cancel_clear();	/* a Ctrl-C from now on cancels this command */
		shell_exec(line);
		irq_disable();
	}
}

/*
 * One command's usage: each line of c->usage is a form of the command,
 * "ARGS" or "ARGS\tWHAT IT DOES", printed under "usage:" with the forms'
 * descriptions aligned.
 */
static void help_one(const struct shell_cmd *c)
{
	const char *p = c->usage, *e, *tab;
	int width = 0, n;

	for (p = c->usage; ; p = e + 1) {	/* the widest ARGS */
		for (e = p; *e && *e != '\n'; e++)
			;
		for (tab = p; tab < e && *tab != '\t'; tab++)
			;
		if (tab - p > width)
			width = (int)(tab - p);
		if (!*e)
			break;
	}
	cprintf("%s: %s\nusage:\n", c->name, c->help);
	for (p = c->usage; ; p = e + 1) {
		for (e = p; *e && *e != '\n'; e++)
			;
		for (tab = p; tab < e && *tab != '\t'; tab++)
			;
		n = (int)(tab - p);
		if (tab < e)
			cprintf("  %s %-*.*s  %.*s\n", c->name, width, n, p, (int)(e - tab - 1),
				tab + 1);
		else
			cprintf("  %s%s%.*s\n", c->name, n ? " " : "", n, p);
		if (!*e)
			break;
	}
}

static int cmd_help(int argc, char **argv)
{
	const struct shell_cmd *c;
	int width = 0;

	if (argc > 2) {
		cprintf("error: usage: help [command]\n");
		return 1;
	}
	for (c = __start_shell_cmds; c < __stop_shell_cmds; c++) {
		if (argc == 2 && !strcmp(c->name, argv[1])) {
			help_one(c);
			return 0;
		}
		if ((int)strlen(c->name) > width)
			width = (int)strlen(c->name);
	}
	if (argc == 2) {
		cprintf("error: help: no command '%.32s'; 'help' lists the commands\n", argv[1]);
		return 1;
	}
	for (c = __start_shell_cmds; c < __stop_shell_cmds; c++)
		cprintf("  %-*s  %s\n", width, c->name, c->help);
	cprintf("'help <command>' gives its usage; Up and Down recall earlier lines\n");
	return 0;
}
SHELL_COMMAND(help, .name = "help", .usage = "\tlist the commands\n<command>\tone command's usage",
	      .help = "list the commands, or one command's usage", .fn = cmd_help);
