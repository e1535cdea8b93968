/*
 * Reading one event's payload with a description: the one rule the text
 * formatter, the CTF converter and the kernel's own checks use to call a
 * payload well formed, and the printing of each field kind.  Portable:
 * the descriptions come from a catalog, the built-in one or a capture's.
 */
#ifndef TRACE_EVENT_FMT_H
#define TRACE_EVENT_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace/events.h"

/* One event's payload, decoded. */
struct trace_event_view {
	const struct trace_event_def *def; /* its description; NULL: unknown */
	const uint8_t *data;		/* the payload */
	uint32_t id;			/* event id (payload's first 16 bits) */
	uint32_t ctx;			/* writer's context level */
	uint32_t bytes;			/* payload bytes */
};

/*
 * Decode the payload of one data record (len bytes, a multiple of 4)
 * against cat (NULL: the built-in catalog).  Returns true for an event
 * the catalog describes whose payload matches the description exactly:
 * context level 0..3, the header's words byte, the fixed part's size and,
 * for strings, every loc inside the payload with its NUL, within its
 * bound, the strings ending where the payload (rounded to 4) ends.
 * Otherwise v describes it as unknown (def NULL) and it returns false.
 */
bool trace_event_parse(const struct trace_catalog *cat, const uint8_t *data, uint32_t len,
		       struct trace_event_view *v);

/* An INT, SYM or ENUM field's value (sign-extended for signed INTs). */
uint64_t trace_field_value(const struct trace_event_view *v, const struct trace_field_def *f);

/*
 * A STR or CHARS field's bytes (without the NUL) and whether the string
 * was cut at record time.  Only for a view trace_event_parse() accepted.
 */
const char *trace_field_string(const struct trace_event_view *v, const struct trace_field_def *f,
			       uint32_t *len, bool *cut);

/*
 * What a reader knows beyond the descriptions: code addresses to names,
 * for SYM fields, and trace_printk formats by address (either NULL: none;
 * each returns NULL where it knows nothing).
 */
struct trace_symbols {
	const char *(*lookup)(const void *ctx, uint64_t addr, uint64_t *offset);
	const void *ctx;
	const char *(*format)(const void *ctx, uint64_t addr);
};

/* The longest trace_printk message printed; longer ones are cut. */
#define TRACE_BPRINT_MSG_MAX	512

/* Is d trace_printk's event (ip, format address, arguments)?  It prints as "<function>: <message>". */
bool trace_event_is_bprint(const struct trace_event_def *d);

/* A bprint event's message alone (snprintf semantics; "" for other events). */
int trace_event_bprint_message(const struct trace_event_view *v, const struct trace_symbols *syms,
			       char *buf, size_t size);

/* A sorted symbol table: addrs[] ascending, each symbol up to the next (the last to end). */
struct trace_symtab {
	const uint64_t *addrs;
	const char *const *names;
	uint32_t count;
	uint64_t end;			/* first address past the last symbol */
};

/* trace_symbols' lookup over a struct trace_symtab (ctx). */
const char *trace_symtab_lookup(const void *ctx, uint64_t addr, uint64_t *offset);

/*
 * Print an accepted event's fields as "<name>=<value>" separated by
 * spaces into buf (snprintf semantics: returns the length the whole text
 * would have had).  Integers in decimal or 0x-hex as described, bools
 * 0/1, code addresses as symbol+0xoff (0x<hex> without syms or a match),
 * enums by name (the number if the table has none), strings as stored
 * with bytes outside printable ASCII shown as '?', "..." after a cut one.
 */
int trace_event_format(const struct trace_event_view *v, const struct trace_symbols *syms,
		       char *buf, size_t size);

/* "u32", "x64", "s8", "bool", "sym", "char[16]", "str[64]", "enum": for listings. */
int trace_field_kind_name(const struct trace_field_def *f, char *buf, size_t size);

#endif
