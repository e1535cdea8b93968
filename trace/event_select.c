/*
 * Event selection by pattern (see <trace/event_select.h>).  The list is
 * checked whole (every item names an event) before a second pass applies
 * it, so a refused list changes nothing.
 */
#include "trace/event_select.h"
#include "lib/format.h"

/*
 * Glob match without recursion: on a mismatch after a '*', retry with the
 * star swallowing one more character.  Linear in practice, quadratic at
 * worst (names are short).
 */
static bool glob_n(const char *p, size_t pn, const char *s)
{
	size_t pi = 0, si = 0, star_p = (size_t)-1, star_s = 0;

	while (s[si]) {
		if (pi < pn && (p[pi] == '?' || p[pi] == s[si])) {
			pi++, si++;
		} else if (pi < pn && p[pi] == '*') {
			star_p = pi++;
			star_s = si;
		} else if (star_p != (size_t)-1) {
			pi = star_p + 1;
			si = ++star_s;
		} else {
			return false;
		}
	}
	while (pi < pn && p[pi] == '*')
		pi++;
	return pi == pn;
}

bool trace_glob_match(const char *pattern, const char *str)
{
	size_t n = 0;

	while (pattern[n])
		n++;
	return glob_n(pattern, n, str);
}

bool trace_event_match(const struct trace_event_def *d, const char *pat, size_t plen)
{
	size_t colon = 0;

	while (colon < plen && pat[colon] != ':')
		colon++;
	if (colon == plen)	/* no system: only "*" means every event */
		return plen == 1 && pat[0] == '*';
	return glob_n(pat, colon, d->system) &&
	       glob_n(pat + colon + 1, plen - colon - 1, d->name);
}

/* One pass over the list: check every item (apply == false) or apply it. */
static int select_pass(const struct trace_catalog *cat, const char *list, uint8_t *enabled,
		       bool base, bool apply, char *err)
{
	const char *p = list;

	if (!*list) {
		ksnprintf(err, TRACE_SELECT_ERR_MAX, "an empty list names no event");
		return -1;
	}
	for (;;) {
		const char *item = p;
		bool on = base;
		size_t len;
		uint32_t hits = 0;

		while (*p && *p != ',')
			p++;
		len = (size_t)(p - item);
		if (len && item[0] == '-')
			on = !base, item++, len--;
		if (!len) {
			ksnprintf(err, TRACE_SELECT_ERR_MAX, "an empty pattern in the list");
			return -1;
		}
		for (uint32_t id = 0; id < cat->nr_ids; id++) {
			const struct trace_event_def *d = trace_catalog_get(cat, id);
			if (d && trace_event_match(d, item, len)) {
				if (apply)
					enabled[id] = on;
				hits++;
			}
		}
		if (!hits) {
			ksnprintf(err, TRACE_SELECT_ERR_MAX, "'%.*s' names no event%s",
				  (int)(len > 48 ? 48 : len), item, len > 48 ? " (cut)" : "");
			return -1;
		}
		if (!*p)
			return 0;
		p++;
	}
}

int trace_events_select(const struct trace_catalog *cat, const char *list,
			enum trace_select_how how, uint8_t *enabled,
			char err[TRACE_SELECT_ERR_MAX])
{
	bool base = how != TRACE_SELECT_DISABLE;

	if (select_pass(cat, list, enabled, base, false, err))
		return -1;
	if (how == TRACE_SELECT_FROM_ALL)
		for (uint32_t id = 0; id < cat->nr_ids; id++)
			if (trace_catalog_get(cat, id))
				enabled[id] = 1;
	return select_pass(cat, list, enabled, base, true, err);
}

static size_t name_len(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

char *trace_events_summary(char *buf, size_t size, const struct trace_catalog *cat,
			   const uint8_t *enabled)
{
	struct kbuf b = { buf, size, 0 };
	uint32_t on = 0, total = 0;
	const char *sep = " ";

	for (uint32_t id = 0; id < cat->nr_ids; id++) {
		const struct trace_event_def *d = trace_catalog_get(cat, id);
		if (d) {
			total++;
			on += trace_event_is_enabled(d, enabled);
		}
	}
	kbuf_printf(&b, "enabled=%u/%u%s", on, total,
		    on == total ? " all" : on == 0 ? " none" : "");
	if (on == total || on == 0)
		return buf;
	for (uint32_t id = 0; id < cat->nr_ids; id++) {
		const struct trace_event_def *d = trace_catalog_get(cat, id);
		size_t need;

		if (!d || !trace_event_is_enabled(d, enabled))
			continue;
		/* Room for this name and a ",..." after it. */
		need = b.len + 1 + name_len(d->system) + 1 + name_len(d->name) + 4;
		if (need >= size) {
			kbuf_printf(&b, "%s...", sep);
			break;
		}
		kbuf_printf(&b, "%s%s:%s", sep, d->system, d->name);
		sep = ",";
	}
	return buf;
}
