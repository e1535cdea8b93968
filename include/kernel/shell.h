/*
 * The serial shell. Commands register themselves with SHELL_COMMAND() in
 * the "shell_cmds" linker section, next to the code they drive. A command
 * gets argc/argv (argv[0] is its name) and returns 0, or non-zero after
 * printing a one-line error; either way the prompt comes back.
 */
#ifndef KERNEL_SHELL_H
#define KERNEL_SHELL_H

#include "baretrace/compiler.h"

#define SHELL_LINE_MAX	128	/* bytes per line, NUL included */
#define SHELL_ARGS_MAX	8

struct shell_cmd {
	const char *name;			/* what the user types */
	const char *usage;			/* arguments, for help */
	const char *help;			/* one line */
	int (*fn)(int argc, char **argv);	/* 0 = ok */
};

#define SHELL_COMMAND(id, ...)						\
	static const struct shell_cmd __shell_cmd_##id			\
	__section("shell_cmds") __used __aligned(8) = { __VA_ARGS__ }

/*
 * Work done while the shell waits for a key, registered with SHELL_IDLE()
 * in the "shell_idle" linker section next to its owner (the shell knows no
 * subsystem).  Called on the boot CPU at task level, interrupts off, about
 * once a millisecond between two polls of the consoles: each call must be
 * short and bounded, or typing lags and a UART FIFO can overflow.
 */
struct shell_idle {
	const char *name;	/* the owner, for reading the table */
	void (*fn)(void);	/* one bounded step */
};

#define SHELL_IDLE(id, ...)						\
	static const struct shell_idle __shell_idle_##id		\
	__section("shell_idle") __used __aligned(8) = { __VA_ARGS__ }

/* Read and run commands until one asks to leave (never, today). */
void __attribute__((noreturn)) shell_run(void);

/* Split line in place into argv; returns argc (0 for a blank line). */
int shell_split(char *line, char **argv, int max);

/* Run one line; returns the command's status, or -1 if there is none. */
int shell_exec(char *line);

#endif
