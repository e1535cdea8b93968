/*
 * Which events record: the pattern lists of `trace.events=` and the shell's
 * `events enable|disable`, applied to one flag per event id.  Portable
 * (kernel, host tests): it knows events only through a catalog.
 *
 * A list is comma-separated patterns, applied in order:
 *
 *	system:name	one event		irq:lapic_tick
 *	system:*	every event of a system	ipi:*
 *	*		every event
 *	-PATTERN	the same, disabling
 *
 * Both halves of system:name may hold the glob characters '*' (any run of
 * characters) and '?' (one character): demo:prod* names demo:producer.
 * A pattern that names no event described by the catalog is an error, and
 * so is an empty list or an empty item: the whole list is then refused and
 * nothing changes, so a typo never half-applies.
 */
#ifndef TRACE_EVENT_SELECT_H
#define TRACE_EVENT_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace/events.h"

/* Does str match pattern ('*' any run, '?' one character; nothing else special)? */
bool trace_glob_match(const char *pattern, const char *str);

/* Does event d match one pattern (no leading '-'), of plen bytes? */
bool trace_event_match(const struct trace_event_def *d, const char *pat, size_t plen);

#define TRACE_SELECT_ERR_MAX	96	/* bytes of an error message, NUL included */

enum trace_select_how {
	TRACE_SELECT_FROM_ALL,	/* trace.events=: every event on, then the list */
	TRACE_SELECT_ENABLE,	/* events enable LIST: from the current state */
	TRACE_SELECT_DISABLE,	/* events disable LIST: the same, each sign flipped */
};

/*
 * Apply list to enabled[0 .. cat->nr_ids - 1] (1 enabled, 0 disabled; ids
 * the catalog does not describe are left alone).  Returns 0, or -1 with
 * err (a one-line message naming the bad item) filled and enabled
 * untouched.
 */
int trace_events_select(const struct trace_catalog *cat, const char *list,
			enum trace_select_how how, uint8_t *enabled,
			char err[TRACE_SELECT_ERR_MAX]);

/* Is event d enabled: enabled[d->id] if given, else its description's flags. */
static inline bool trace_event_is_enabled(const struct trace_event_def *d, const uint8_t *enabled)
{
	return enabled ? enabled[d->id] != 0 : !(d->flags & TRACE_EVENT_DISABLED);
}

/*
 * The one-line summary of which events are enabled, as the boot line, the
 * shell's `status` and `events`, and every text dump's header print it:
 *
 *	enabled=<n>/<total> all | none | <system>:<name>,...
 *
 * (the list in id order).  Written into buf (size bytes, always
 * NUL-terminated); a list that does not fit ends in ",...".  Returns buf.
 */
char *trace_events_summary(char *buf, size_t size, const struct trace_catalog *cat,
			   const uint8_t *enabled);

#endif
