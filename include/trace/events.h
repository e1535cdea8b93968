/*
 * The events baretrace records and their descriptions: shared by the
 * kernel (which writes them), the text formatter and the host decoder
 * (which read them).  The events themselves are defined once each, in
 * <trace/event_list.h>; this header takes two passes of that list (the
 * ids and the record layouts) and declares the description types that the
 * catalog (trace/event_catalog.c) and dumps' EVENTS frames fill in.
 *
 * Payload of every event (the ring buffer's data record carries it as is):
 *
 *   +0  u16 id        enum trace_event_id
 *   +2  u8  ctx       context level of the writer: 0 task, 1 softirq,
 *                     2 irq, 3 nmi (the ring buffer's level)
 *   +3  u8  words     4-byte words of the fixed fields that follow
 *   +4  the fields (layout in <trace/trace_event.h>)
 *
 * So an event with one u32 field is 8 bytes of payload.  Little-endian,
 * 4-byte aligned (the ring buffer rounds payloads up to 4).
 */
#ifndef TRACE_EVENTS_H
#define TRACE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include "trace/trace_event.h"

/* The id pass: TEV_<name> in list order from 1. */
enum trace_event_id {
	TEV_INVALID = 0,
#define TRACE_EVENT(sys, name, ...)	TEV_##name,
#include "trace/event_list.h"
	TEV_MAX
};

/* The layout pass: struct trace_ev_<name>, the record of each event. */
#define TRACE_EVENT(sys, name, ...)	TE_LAYOUT(name, __VA_ARGS__)
#include "trace/event_list.h"

/* The header word as one little-endian u32: the layout above. */
#define TRACE_ENT_CTX_SHIFT	16
#define TRACE_ENT_WORDS_SHIFT	24

/*
 * The context bits of a header word: a writer at level keeps this at hand.
 * A macro, so that per-CPU contexts can be initialised with it.
 */
#define trace_ent_ctx(level)	((uint32_t)(level) << TRACE_ENT_CTX_SHIFT)

/* The header word: id, context bits (trace_ent_ctx()), fixed words. */
static inline uint32_t trace_ent_pack(uint16_t id, uint32_t ctx, uint32_t words)
{
	return (uint32_t)id | ctx | words << TRACE_ENT_WORDS_SHIFT;
}

/* The words byte of an event's header: its fixed fields, in 4-byte words. */
#define TRACE_ENT_WORDS(name)	((sizeof(struct trace_ev_##name) - 4) / 4)

struct trace_ent_hdr {
	uint16_t id;		/* enum trace_event_id */
	uint8_t ctx;		/* writer's context level */
	uint8_t words;		/* 4-byte words of fixed fields that follow */
};

_Static_assert(sizeof(struct trace_ent_hdr) == 4, "event header is 4 bytes");

/* ---- descriptions ---- */

enum trace_field_kind {
	TRACE_FIELD_INT = 1,	/* integer of 1, 2, 4 or 8 bytes */
	TRACE_FIELD_SYM = 2,	/* u64 code address, printed symbol+0xoff */
	TRACE_FIELD_CHARS = 3,	/* char[size], printed up to its first NUL */
	TRACE_FIELD_STR = 4,	/* u32 loc of a string after the fixed part */
	TRACE_FIELD_ENUM = 5,	/* u32 printed by name */
	TRACE_FIELD_BPRINT = 6,	/* u32 loc of trace_printk's binary arguments */
};

enum trace_field_display {
	TRACE_DISPLAY_DEC = 0,
	TRACE_DISPLAY_HEX = 1,
	TRACE_DISPLAY_BOOL = 2,
};

struct trace_enum_entry {
	uint64_t value;
	const char *name;
};

/* One field of a record. */
struct trace_field_def {
	const char *name;
	uint8_t kind;			/* enum trace_field_kind */
	uint8_t display;		/* enum trace_field_display (INT) */
	uint8_t is_signed;		/* INT: two's complement */
	uint16_t offset;		/* bytes from the payload's start */
	uint16_t size;			/* bytes of its fixed slot */
	uint16_t max;			/* STR: bound, NUL included; CHARS: size */
	uint16_t nenums;		/* ENUM: entries in enums[] */
	const struct trace_enum_entry *enums;
};

/* An event's flags: in a capture, its state when the dump was taken. */
#define TRACE_EVENT_DISABLED	0x01u	/* its static key was off */
#define TRACE_EVENT_FLAGS_KNOWN	TRACE_EVENT_DISABLED

/* One event: what a reader needs to print it with nothing else. */
struct trace_event_def {
	uint16_t id;			/* enum trace_event_id (or a capture's id) */
	uint16_t fixed;			/* bytes of the fixed part, header included */
	uint8_t nfields;
	uint8_t flags;			/* TRACE_EVENT_DISABLED: as a dump found it */
	const char *system, *name;
	const char *fmt;		/* printf-style: "a=%u b=%s" in field order */
	const struct trace_field_def *fields;
};

/*
 * The events one kernel (or one capture) describes, by id: by_id[id] or
 * NULL.  The built-in one is this list's (trace/event_catalog.c).
 */
struct trace_catalog {
	const struct trace_event_def *const *by_id;
	uint32_t nr_ids;		/* entries in by_id */
};

extern const struct trace_catalog trace_builtin_catalog;

static inline const struct trace_event_def *trace_catalog_get(const struct trace_catalog *cat,
							       uint32_t id)
{
	return cat && id < cat->nr_ids ? cat->by_id[id] : 0;
}

/* Context names for text output, by level. */
static const char *const trace_ctx_names[4] = { "task", "softirq", "irq", "nmi" };

/* The flag character (trace/text.c's "..h." column) and name of a context level. */
static inline char trace_ctx_flag(uint32_t ctx)
{
	static const char flags[4] = { '.', 's', 'h', 'z' };

	return ctx < 4 ? flags[ctx] : '?';
}

static inline const char *trace_ctx_name(uint32_t ctx)
{
	return ctx < 4 ? trace_ctx_names[ctx] : "?";
}

/*
 * The pid of a CPU's context, the same in the text ("irq/2-11") and the
 * trace.dat (common_pid, saved cmdlines): 1 + 4 * cpu + context level
 * (task 0, softirq 1, irq 2, nmi 3); a level past nmi counts as task.
 */
static inline uint32_t trace_ctx_pid(uint32_t cpu, uint32_t ctx)
{
	return 1u + 4u * cpu + (ctx < 4 ? ctx : 0);
}

#endif
