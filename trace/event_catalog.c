/*
 * The built-in catalog: the description pass of <trace/event_list.h>, one
 * struct trace_event_def per event, indexed by id.  The kernel sends it in
 * every binary dump (EVENTS frames) and formats its own text with it; the
 * decoder falls back on it only for captures that carry no description.
 */
#include <stddef.h>
#include "trace/events.h"
#include "trace/ring_format.h"

_Static_assert(TRACE_EVENT_PAYLOAD_MAX == RB_MAX_PAYLOAD, "an event is a ring-buffer payload");

#define TE_FDEF(ev, kind, t, n, x, conv)	TE_FDEF_##kind(ev, t, n, x)
#define TE_FDEF_AT(ev, n, k)						\
	.name = #n, .kind = (k), .offset = offsetof(struct trace_ev_##ev, n), \
	.size = sizeof(((struct trace_ev_##ev *)0)->n)
#define TE_FDEF_INT(ev, t, n, x)					\
	{ TE_FDEF_AT(ev, n, TRACE_FIELD_INT), .display = TRACE_DISPLAY_##x, \
	  .is_signed = (t)-1 < (t)1 },
#define TE_FDEF_SYM(ev, t, n, x)					\
	{ TE_FDEF_AT(ev, n, TRACE_FIELD_SYM), .display = TRACE_DISPLAY_HEX },
#define TE_FDEF_CHARS(ev, t, n, x)					\
	{ TE_FDEF_AT(ev, n, TRACE_FIELD_CHARS), .max = (x) },
#define TE_FDEF_STR(ev, t, n, x)					\
	{ TE_FDEF_AT(ev, n, TRACE_FIELD_STR), .max = (x) },
#define TE_FDEF_BPRINT(ev, t, n, x)					\
	{ TE_FDEF_AT(ev, n, TRACE_FIELD_BPRINT), .max = (x) },
#define TE_FDEF_ENUM(ev, t, n, x)					\
	{ TE_FDEF_AT(ev, n, TRACE_FIELD_ENUM),				\
	  .nenums = sizeof(x) / sizeof((x)[0]), .enums = (x) },

/* Enum tables first, then each event's fields and definition. */
#define TRACE_EVENT_ENUM(table, ...)					\
	static const struct trace_enum_entry table[] = { __VA_ARGS__ };
#define TRACE_EVENT(sys, ev, ...)					\
	static const struct trace_field_def te_fields_##ev[] = {	\
		TE_EACHX(TE_FDEF, ev, __VA_ARGS__)			\
	};								\
	static const struct trace_event_def te_def_##ev = {		\
		.id = TEV_##ev, .fixed = sizeof(struct trace_ev_##ev),	\
		.nfields = TE_COUNT(__VA_ARGS__), .system = #sys, .name = #ev, \
		.fmt = &(TE_EACH(TE_FMT, __VA_ARGS__))[1],		\
		.fields = te_fields_##ev,				\
	};
#include "trace/event_list.h"

#define TRACE_EVENT(sys, ev, ...)	[TEV_##ev] = &te_def_##ev,
static const struct trace_event_def *const builtin_by_id[TEV_MAX] = {
#include "trace/event_list.h"
};

const struct trace_catalog trace_builtin_catalog = { builtin_by_id, TEV_MAX };
