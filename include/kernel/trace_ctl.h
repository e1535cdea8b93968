/*
 * Which events record: one static key per event (trace_event_keys[], the
 * keys the generated writers of <kernel/event_writers.h> test), set from
 * `trace.events=` at boot and by the shell's `events` afterwards.  The
 * patterns are <trace/event_select.h>'s.
 */
#ifndef KERNEL_TRACE_CTL_H
#define KERNEL_TRACE_CTL_H

#include <stdbool.h>
#include <stdint.h>
#include "trace/event_select.h"

/*
 * Apply `trace.events=` (every event when it is not given) and print the
 * "events: enabled=..." line.  Once, after text_poke_init() and before
 * any CPU records.
 */
void trace_events_init(void);

/*
 * Apply a pattern list from task context (any CPU, others running).
 * Returns 0, or -1 with err filled (a bad list: nothing changed), or -2
 * with err filled (applied, but the patcher refused some sites: it named
 * each on the console).  *changed (may be NULL) is how many events
 * changed state.
 */
int trace_events_apply(const char *list, enum trace_select_how how, unsigned *changed,
		       char err[TRACE_SELECT_ERR_MAX]);

/* Set one event's state (tests); returns the sites the patcher refused. */
unsigned trace_event_set(uint32_t id, bool on);

/* 1 or 0 per event id, TEV_MAX entries: the state the keys were last set to. */
const uint8_t *trace_events_enabled(void);

/* The "enabled=<n>/<total> ..." summary of <trace/event_select.h>, in buf. */
char *trace_events_summary_now(char *buf, size_t size);

#endif
