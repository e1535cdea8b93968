/*
 * Kernel command line options. Each subsystem declares its own options next
 * to the variable they set, with CMDLINE_OPTION(); the parser finds them all
 * in the "cmdline_opts" linker section. The variable's initial value is the
 * default; a bad value is reported (naming the option, the value and what
 * is accepted) and leaves the default in place.
 */
#ifndef KERNEL_CMDLINE_H
#define KERNEL_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "baretrace/compiler.h"

enum cmdline_type {
	OPT_FLAG,	/* bool: "name", "name=yes|no|on|off|1|0" */
	OPT_UINT,	/* uint64_t in [min, max]; decimal or 0x hex */
	OPT_INT,	/* int64_t in [(int64_t)min, (int64_t)max] */
	OPT_ENUM,	/* int index into choices[] */
	OPT_LIST,	/* char[size]: comma-separated items, each in choices[] if given */
	OPT_STRING,	/* char[size] */
};

struct cmdline_opt {
	const char *name;		/* the key */
	enum cmdline_type type;		/* how to parse the value */
	void *var;			/* what it sets */
	size_t size;			/* buffer size for LIST and STRING */
	uint64_t min, max;		/* bounds for UINT and INT */
	const char *const *choices;	/* NULL-terminated, for ENUM and LIST */
	const char *help;		/* one line for the README and errors */
	/* STRING: the value's own syntax; false with why (what is accepted) refuses it */
	bool (*check)(const char *value, char *why, size_t cap);
};

#define CMDLINE_OPTION(id, ...)						\
	static const struct cmdline_opt __cmdline_opt_##id		\
	__section("cmdline_opts") __used __aligned(8) = { __VA_ARGS__ }

/*
 * Parse the whole line, setting variables; print one message per problem
 * through report (printk in the kernel). Returns the number of problems.
 */
int cmdline_parse(const char *line, void (*report)(const char *msg));

/*
 * s[0 .. len) as a size: decimal or 0x hex, optionally followed by K, M or
 * G (binary units), as an option's own parser needs it (trace.persist=);
 * false if not exactly that or it overflows.
 */
bool cmdline_parse_size(const char *s, size_t len, uint64_t *out);

/* Does item appear in the comma-separated list? */
bool cmdline_list_has(const char *list, const char *item);

#endif
