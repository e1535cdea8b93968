/*
 * TRACE_EVENT: one definition per event, expanded by the C preprocessor
 * into everything that event needs.  An event is written once, in the
 * event list (<trace/event_list.h>):
 *
 *	TRACE_EVENT(irq, lapic_tick,
 *		F_U32(tick))
 *	TRACE_EVENT(demo, work,
 *		F_U64(bytes), F_STR(path, 64), F_ENUM(state, demo_states), F_SYM(fn))
 *
 * and each includer picks what it wants by defining TRACE_EVENT (and
 * TRACE_EVENT_ENUM) before including the list, as Linux's define_trace.h
 * does; the passes are below and in their users:
 *
 *	pass           where                          makes
 *	id             <trace/events.h>               enum trace_event_id: TEV_<name>
 *	layout         <trace/events.h>               struct trace_ev_<name> (the record)
 *	writer         <kernel/event_writers.h>       trace_<name>(fields...) (kernel)
 *	description    trace/event_catalog.c          struct trace_event_def per event
 *
 * Fields, in record order (at most TRACE_EVENT_FIELDS_MAX):
 *
 *	F_U8/16/32/64(n)    unsigned, decimal     F_X8/16/32/64(n)  unsigned, hex
 *	F_S8/16/32/64(n)    signed, decimal       F_BOOL(n)         0 or 1
 *	F_SYM(n)            code address (const void *), printed symbol+0xoff
 *	F_CHARS(n, N)       char[N], copied (NUL-padded), printed up to its NUL
 *	F_STR(n, MAX)       a string copied at record time: at most MAX bytes are
 *	                    kept, a longer one is cut and marked (printed with
 *	                    "..." after it); MAX <= TRACE_STR_MAX
 *	F_ENUM(n, table)    a u32 printed by name from table (TRACE_EVENT_ENUM)
 *
 * Record layout (payload of one ring-buffer data record, little-endian):
 *
 *	+0  u32 header: id | ctx << 16 | words << 24   (<trace/events.h>)
 *	+4  the fixed fields, packed in order, no padding (4-byte aligned
 *	    record, so wider fields may be unaligned: fine on x86, and read
 *	    with memcpy elsewhere); the fixed part is padded to 4 bytes and
 *	    words = (fixed size - 4) / 4
 *	    F_STR's fixed slot is a u32 loc: offset | len << 16 | cut << 31,
 *	    offset from the payload's start, len the bytes stored including
 *	    a NUL (ftrace's __data_loc, plus the cut bit)
 *	+fixed  the strings' bytes, in field order
 *
 * Field names must not begin with te_ (the writer's locals).
 * Misuse is a compile error: more than TRACE_EVENT_FIELDS_MAX fields, an
 * event or field name used twice (duplicate enumerator or member), a
 * string bound above TRACE_STR_MAX or a record that could not fit a
 * default-sized page (a static assertion naming the event).
 *
 * Portable: no kernel or x86 header.  Field tuples are (kind, C type of
 * the slot, name, extra, printf conversion); extra is the display for
 * integers, the size for F_CHARS, the bound for F_STR, the table for
 * F_ENUM.
 */
#ifndef TRACE_TRACE_EVENT_H
#define TRACE_TRACE_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include "trace/bprint.h"

#define TRACE_EVENT_FIELDS_MAX	8
#define TRACE_STR_MAX		512	/* bytes an F_STR keeps, its NUL included */
#define TRACE_STR_CUT		0x80000000u	/* loc bit: the string was cut */
#define TRACE_EVENT_PAYLOAD_MAX	1024	/* RB_MAX_PAYLOAD: one event's bytes, at most */

/* ---- field constructors ---- */

#define F_U8(n)		(INT, uint8_t, n, DEC, "%u")
#define F_U16(n)	(INT, uint16_t, n, DEC, "%u")
#define F_U32(n)	(INT, uint32_t, n, DEC, "%u")
#define F_U64(n)	(INT, uint64_t, n, DEC, "%llu")
#define F_X8(n)		(INT, uint8_t, n, HEX, "0x%x")
#define F_X16(n)	(INT, uint16_t, n, HEX, "0x%x")
#define F_X32(n)	(INT, uint32_t, n, HEX, "0x%x")
#define F_X64(n)	(INT, uint64_t, n, HEX, "0x%llx")
#define F_S8(n)		(INT, int8_t, n, DEC, "%d")
#define F_S16(n)	(INT, int16_t, n, DEC, "%d")
#define F_S32(n)	(INT, int32_t, n, DEC, "%d")
#define F_S64(n)	(INT, int64_t, n, DEC, "%lld")
#define F_BOOL(n)	(INT, uint8_t, n, BOOL, "%u")
#define F_SYM(n)	(SYM, uint64_t, n, 0, "%pS")
#define F_CHARS(n, N)	(CHARS, char, n, N, "%s")
#define F_STR(n, MAX)	(STR, uint32_t, n, MAX, "%s")
#define F_ENUM(n, tab)	(ENUM, uint32_t, n, tab, "%s")
/* trace_printk's arguments (<trace/bprint.h>), for the format at the event's F_X64(fmt). */
#define F_BPRINT(n)	(BPRINT, uint32_t, n, TRACE_BPRINT_ARGS_MAX, "%s")

/* ---- applying a macro to each field tuple ---- */

#define TE_COUNT(...)	TE_COUNT_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define TE_COUNT_(a1, a2, a3, a4, a5, a6, a7, a8, a9, n, ...) n
#define TE_CAT(a, b)	TE_CAT_(a, b)
#define TE_CAT_(a, b)	a##b

/* TE_EACH(M, fields...): M(kind, type, name, extra, conv) for each. */
#define TE_EACH(M, ...)	TE_CAT(TE_EACH_, TE_COUNT(__VA_ARGS__))(M, __VA_ARGS__)
#define TE_EACH_1(M, a)		M a
#define TE_EACH_2(M, a, ...)	M a TE_EACH_1(M, __VA_ARGS__)
#define TE_EACH_3(M, a, ...)	M a TE_EACH_2(M, __VA_ARGS__)
#define TE_EACH_4(M, a, ...)	M a TE_EACH_3(M, __VA_ARGS__)
#define TE_EACH_5(M, a, ...)	M a TE_EACH_4(M, __VA_ARGS__)
#define TE_EACH_6(M, a, ...)	M a TE_EACH_5(M, __VA_ARGS__)
#define TE_EACH_7(M, a, ...)	M a TE_EACH_6(M, __VA_ARGS__)
#define TE_EACH_8(M, a, ...)	M a TE_EACH_7(M, __VA_ARGS__)
#define TE_EACH_9(M, ...)	_Static_assert(0, "TRACE_EVENT: more than 8 fields");

/* TE_EACHX(M, c, fields...): M(c, kind, type, name, extra, conv) for each. */
#define TE_CALL(M, args)	M args
#define TE_UNPAREN(...)		__VA_ARGS__
#define TE_EACHX(M, c, ...)	TE_CAT(TE_EACHX_, TE_COUNT(__VA_ARGS__))(M, c, __VA_ARGS__)
#define TE_EACHX_1(M, c, a)	TE_CALL(M, (c, TE_UNPAREN a))
#define TE_EACHX_2(M, c, a, ...) TE_CALL(M, (c, TE_UNPAREN a)) TE_EACHX_1(M, c, __VA_ARGS__)
#define TE_EACHX_3(M, c, a, ...) TE_CALL(M, (c, TE_UNPAREN a)) TE_EACHX_2(M, c, __VA_ARGS__)
#define TE_EACHX_4(M, c, a, ...) TE_CALL(M, (c, TE_UNPAREN a)) TE_EACHX_3(M, c, __VA_ARGS__)
#define TE_EACHX_5(M, c, a, ...) TE_CALL(M, (c, TE_UNPAREN a)) TE_EACHX_4(M, c, __VA_ARGS__)
#define TE_EACHX_6(M, c, a, ...) TE_CALL(M, (c, TE_UNPAREN a)) TE_EACHX_5(M, c, __VA_ARGS__)
#define TE_EACHX_7(M, c, a, ...) TE_CALL(M, (c, TE_UNPAREN a)) TE_EACHX_6(M, c, __VA_ARGS__)
#define TE_EACHX_8(M, c, a, ...) TE_CALL(M, (c, TE_UNPAREN a)) TE_EACHX_7(M, c, __VA_ARGS__)
#define TE_EACHX_9(M, c, ...)	_Static_assert(0, "TRACE_EVENT: more than 8 fields");

/* The same as TE_EACH, with a comma between the expansions (parameter lists). */
#define TE_LIST(M, ...)	TE_CAT(TE_LIST_, TE_COUNT(__VA_ARGS__))(M, __VA_ARGS__)
#define TE_LIST_1(M, a)		M a
#define TE_LIST_2(M, a, ...)	M a, TE_LIST_1(M, __VA_ARGS__)
#define TE_LIST_3(M, a, ...)	M a, TE_LIST_2(M, __VA_ARGS__)
#define TE_LIST_4(M, a, ...)	M a, TE_LIST_3(M, __VA_ARGS__)
#define TE_LIST_5(M, a, ...)	M a, TE_LIST_4(M, __VA_ARGS__)
#define TE_LIST_6(M, a, ...)	M a, TE_LIST_5(M, __VA_ARGS__)
#define TE_LIST_7(M, a, ...)	M a, TE_LIST_6(M, __VA_ARGS__)
#define TE_LIST_8(M, a, ...)	M a, TE_LIST_7(M, __VA_ARGS__)
#define TE_LIST_9(M, ...)	void

/* ---- the layout pass: struct trace_ev_<name> ---- */

#define TE_MEMBER(kind, t, n, x, conv)	TE_MEMBER_##kind(t, n, x)
#define TE_MEMBER_INT(t, n, x)		t n;
#define TE_MEMBER_SYM(t, n, x)		t n;
#define TE_MEMBER_CHARS(t, n, x)	char n[x];
#define TE_MEMBER_STR(t, n, x)		t n;
#define TE_MEMBER_ENUM(t, n, x)		t n;
#define TE_MEMBER_BPRINT(t, n, x)	t n;

#define TE_LAYOUT(name, ...)						\
	struct __attribute__((packed, aligned(4))) trace_ev_##name {	\
		uint32_t hdr;						\
		TE_EACH(TE_MEMBER, __VA_ARGS__)				\
	};								\
	TE_EACH(TE_STR_CHECK, __VA_ARGS__)				\
	_Static_assert(sizeof(struct trace_ev_##name)			\
		       TE_EACH(TE_STR_ROOM, __VA_ARGS__) <= TRACE_EVENT_PAYLOAD_MAX, \
		       "TRACE_EVENT(" #name "): the record, strings at their bounds, "	\
		       "is larger than an event may be (TRACE_EVENT_PAYLOAD_MAX)");

/* The most a record's strings can add: each F_STR's bound. */
#define TE_STR_ROOM(kind, t, n, x, conv)	TE_STR_ROOM_##kind(x)
#define TE_STR_ROOM_INT(x)
#define TE_STR_ROOM_SYM(x)
#define TE_STR_ROOM_CHARS(x)
#define TE_STR_ROOM_STR(x)	+ (x)
#define TE_STR_ROOM_ENUM(x)
#define TE_STR_ROOM_BPRINT(x)	+ (x)

/* Compile-time checks of one event's strings against their limits. */
#define TE_STR_CHECK(kind, t, n, x, conv)	TE_STR_CHECK_##kind(n, x)
#define TE_STR_CHECK_INT(n, x)
#define TE_STR_CHECK_SYM(n, x)
#define TE_STR_CHECK_CHARS(n, x)	_Static_assert((x) >= 1, "F_CHARS(" #n "): size 0");
#define TE_STR_CHECK_STR(n, x)						\
	_Static_assert((x) >= 1 && (x) <= TRACE_STR_MAX,		\
		       "F_STR(" #n "): bound not in 1..TRACE_STR_MAX");
#define TE_STR_CHECK_ENUM(n, x)
#define TE_STR_CHECK_BPRINT(n, x)

/* The printed format: " n=conv" per field; the description skips the first space. */
#define TE_FMT(kind, t, n, x, conv)	" " #n "=" conv

#endif
