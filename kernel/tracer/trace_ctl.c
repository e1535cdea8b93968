/*
 * Per-event enable and disable (see <kernel/trace_ctl.h>).
 *
 * Each event id has a static key; its state is mirrored in enabled[],
 * which the dumps read (the EVENTS frames' DISABLED flag, the text
 * header).  A change patches the key's sites first and updates the mirror
 * after, under ctl_lock, so two shells (or a shell and a test) never
 * interleave their lists.  Invariant: between changes, enabled[id] ==
 * static_key_is_enabled(&trace_event_keys[id]) for every described id.
 */
#include <stddef.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/shell.h"
#include "kernel/spinlock.h"
#include "kernel/static_key.h"
#include "kernel/trace_ctl.h"
#include "kernel/tracing.h"
#include "lib/format.h"

struct static_key trace_event_keys[TEV_MAX];
static uint8_t enabled[TEV_MAX];
static struct spinlock ctl_lock;

static char opt_events[256] = "";
CMDLINE_OPTION(trace_events, .name = "trace.events", .type = OPT_STRING, .var = opt_events,
	       .size = sizeof(opt_events),
	       .help = "events that record: comma list of system:name, system:*, * "
		       "(globs), '-' in front disables; applied in order from all enabled");

static void ctl_take(void)
{
	spin_lock(&ctl_lock);
}

static void ctl_give(void)
{
	spin_unlock(&ctl_lock);
}

const uint8_t *trace_events_enabled(void)
{
	return enabled;
}

char *trace_events_summary_now(char *buf, size_t size)
{
	return trace_events_summary(buf, size, &trace_builtin_catalog, enabled);
}

unsigned trace_event_set(uint32_t id, bool on)
{
	unsigned refused = 0;

	if (id == 0 || id >= TEV_MAX || !trace_catalog_get(&trace_builtin_catalog, id))
		return 0;
	ctl_take();
	if (enabled[id] != on) {
		refused = static_key_set(&trace_event_keys[id], on);
		enabled[id] = on;
	}
	ctl_give();
	return refused;
}

int trace_events_apply(const char *list, enum trace_select_how how, unsigned *changed,
		       char err[TRACE_SELECT_ERR_MAX])
{
	uint8_t want[TEV_MAX];
	unsigned n = 0, refused = 0;

	ctl_take();
	memcpy(want, enabled, sizeof(want));
	if (trace_events_select(&trace_builtin_catalog, list, how, want, err)) {
		ctl_give();
		return -1;
	}
	for (uint32_t id = 1; id < TEV_MAX; id++) {
		if (want[id] == enabled[id])
			continue;
		refused += static_key_set(&trace_event_keys[id], want[id]);
		enabled[id] = want[id];
		n++;
	}
	ctl_give();
	if (changed)
		*changed = n;
	if (refused) {
		ksnprintf(err, TRACE_SELECT_ERR_MAX, "%u call sites were refused by the patcher "
			  "(lines above); those sites keep their old form", refused);
		return -2;
	}
	return 0;
}

void trace_events_init(void)
{
	char err[TRACE_SELECT_ERR_MAX], line[256];
	const char *list = opt_events[0] ? opt_events : "*";

	if (trace_events_apply(list, TRACE_SELECT_FROM_ALL, NULL, err)) {
		printk("events: error: trace.events=%s: %s; every event stays enabled\n",
		       opt_events, err);
		trace_events_apply("*", TRACE_SELECT_FROM_ALL, NULL, err);
	}
	printk("events: %s\n", trace_events_summary_now(line, sizeof(line)));
}

/* ---- the shell's `events` ---- */

static int cmd_events(int argc, char **argv)
{
	char err[TRACE_SELECT_ERR_MAX], line[256];
	enum trace_select_how how;
	unsigned changed = 0;

	if (argc == 1) {
		for (uint32_t id = 1; id < TEV_MAX; id++) {
			const struct trace_event_def *d = trace_catalog_get(&trace_builtin_catalog, id);
			if (d)
				cprintf("event: %s:%s id=%u %s\n", d->system, d->name, id,
					enabled[id] ? "enabled" : "disabled");
		}
		cprintf("events: %s\n", trace_events_summary_now(line, sizeof(line)));
		return 0;
	}
	if (argc != 3 || (strcmp(argv[1], "enable") && strcmp(argv[1], "disable"))) {
		cprintf("error: usage: events [enable|disable PATTERN[,PATTERN...]]\n");
		return 1;
	}
	how = argv[1][0] == 'e' ? TRACE_SELECT_ENABLE : TRACE_SELECT_DISABLE;
	switch (trace_events_apply(argv[2], how, &changed, err)) {
	case 0:
		break;
	case -1:
		cprintf("error: events %s %s: %s; nothing changed\n", argv[1], argv[2], err);
		return 1;
	default:
		cprintf("error: events %s %s: %s\n", argv[1], argv[2], err);
		return 1;
	}
	cprintf("events: changed=%u %s\n", changed, trace_events_summary_now(line, sizeof(line)));
	return 0;
}
SHELL_COMMAND(events, .name = "events", .usage = "[enable|disable PATTERN]",
	      .help = "list events and their state; enable or disable them by pattern",
	      .fn = cmd_events);
