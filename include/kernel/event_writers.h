/*
 * The writer pass of <trace/event_list.h>: one inline trace_<name>() per
 * event, taking its fields in order (a code address as const void *,
 * strings as const char *), recording them at the CPU's context level.
 * Included by <kernel/tracing.h>; see <trace/trace_event.h> for the list's
 * format and the record layout.
 *
 * An event without strings reserves its constant size and stores each
 * field once: the same instructions a hand-written writer would have.  A
 * string is measured once before the reservation (at most its bound),
 * then copied: if it changes meanwhile, the bytes kept are still exactly
 * the length reserved, NUL-terminated.
 *
 * Each event has a static key (trace_event_keys[TEV_<name>], set by
 * `trace.events=` and the shell's `events`; kernel/tracer/trace_ctl.c).
 * A disabled event's call site is one 5-byte NOP that falls through to
 * "return -RB_EOFF"; enabled, the NOP is a jmp to the write.  A host
 * program that includes this file defines trace_event_enabled(name)
 * first (dump_sim.c: always true).
 */
#ifndef KERNEL_EVENT_WRITERS_H
#define KERNEL_EVENT_WRITERS_H

#include <stdint.h>
#include "trace/events.h"

#ifndef trace_event_enabled
#include "kernel/static_key.h"
extern struct static_key trace_event_keys[TEV_MAX];
#define trace_event_enabled(name)	static_branch_unlikely(&trace_event_keys[TEV_##name])
#endif

/* Characters of s before its NUL, at most max. */
static __always_inline uint32_t trace_strnlen(const char *s, uint32_t max)
{
	uint32_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

/* Bytes a string of n characters keeps under its bound: NUL included. */
static __always_inline uint32_t trace_str_room(uint32_t n, uint32_t max)
{
	return n < max ? n + 1 : max;
}

/* Copy a string's kept bytes to rec + *at, return its loc, move *at on. */
static __always_inline uint32_t trace_put_str(uint8_t *rec, uint32_t *at, const char *s,
					      uint32_t n, uint32_t max)
{
	uint32_t room = trace_str_room(n, max), off = *at;

	for (uint32_t i = 0; i + 1 < room; i++)
		rec[off + i] = (uint8_t)s[i];
	rec[off + room - 1] = 0;
	*at = off + room;
	return off | room << 16 | (n >= max ? TRACE_STR_CUT : 0);
}

/* trace_printk's encoded arguments, for an F_BPRINT field. */
struct trace_bprint_args {
	uint32_t len;
	const uint8_t *bytes;
};

/* Copy them to rec + *at, return their loc (no NUL), move *at on. */
static __always_inline uint32_t trace_put_bytes(uint8_t *rec, uint32_t *at,
						const struct trace_bprint_args *a)
{
	uint32_t off = *at;

	for (uint32_t i = 0; i < a->len; i++)
		rec[off + i] = a->bytes[i];
	*at = off + a->len;
	return off | a->len << 16;
}

/* char[size] from s: up to its NUL, the rest zero. */
static __always_inline void trace_put_chars(char *dst, const char *s, uint32_t size)
{
	uint32_t i = 0;

	for (; i < size && s[i]; i++)
		dst[i] = s[i];
	for (; i < size; i++)
		dst[i] = 0;
}

#define TE_PARAM(kind, t, n, x, conv)	TE_PARAM_##kind(t, n)
#define TE_PARAM_INT(t, n)		t n
#define TE_PARAM_SYM(t, n)		const void *n
#define TE_PARAM_CHARS(t, n)		const char *n
#define TE_PARAM_STR(t, n)		const char *n
#define TE_PARAM_ENUM(t, n)		uint32_t n
#define TE_PARAM_BPRINT(t, n)		const struct trace_bprint_args *n

/* Each string's length, measured once (te_len_<field>). */
#define TE_STRLEN(kind, t, n, x, conv)	TE_STRLEN_##kind(n, x)
#define TE_STRLEN_INT(n, x)
#define TE_STRLEN_SYM(n, x)
#define TE_STRLEN_CHARS(n, x)
#define TE_STRLEN_STR(n, x)		const uint32_t te_len_##n = trace_strnlen(n, (x));
#define TE_STRLEN_ENUM(n, x)
#define TE_STRLEN_BPRINT(n, x)

#define TE_ROOM(kind, t, n, x, conv)	TE_ROOM_##kind(n, x)
#define TE_ROOM_INT(n, x)
#define TE_ROOM_SYM(n, x)
#define TE_ROOM_CHARS(n, x)
#define TE_ROOM_STR(n, x)		+ trace_str_room(te_len_##n, (x))
#define TE_ROOM_ENUM(n, x)
#define TE_ROOM_BPRINT(n, x)		+ (n)->len

#define TE_ASSIGN(kind, t, n, x, conv)	TE_ASSIGN_##kind(n, x)
#define TE_ASSIGN_INT(n, x)		te_rec->n = n;
#define TE_ASSIGN_SYM(n, x)		te_rec->n = (uint64_t)(uintptr_t)n;
#define TE_ASSIGN_CHARS(n, x)		trace_put_chars(te_rec->n, n, (x));
#define TE_ASSIGN_STR(n, x)		te_rec->n = trace_put_str((uint8_t *)te_rec, &te_at, n, te_len_##n, (x));
#define TE_ASSIGN_ENUM(n, x)		te_rec->n = n;
#define TE_ASSIGN_BPRINT(n, x)		te_rec->n = trace_put_bytes((uint8_t *)te_rec, &te_at, n);

#define TE_ARG(kind, t, n, x, conv)	n

/* 1 for a field whose size is known only when recording (strings). */
#define TE_DYN(kind, t, n, x, conv)	TE_DYN_##kind
#define TE_DYN_INT
#define TE_DYN_SYM
#define TE_DYN_CHARS
#define TE_DYN_STR			| 1
#define TE_DYN_ENUM
#define TE_DYN_BPRINT			| 1

/* 1 for a field measured before the reservation (strings; bprint's bytes come ready). */
#define TE_WALK(kind, t, n, x, conv)	TE_WALK_##kind
#define TE_WALK_INT
#define TE_WALK_SYM
#define TE_WALK_CHARS
#define TE_WALK_STR			| 1
#define TE_WALK_ENUM
#define TE_WALK_BPRINT

/*
 * Locals are te_*: field names are the parameters' and must not collide.
 * __trace_<name>() writes; trace_<name>() is the call site, its key's NOP
 * first so that a disabled event evaluates nothing else.  A record of a
 * fixed size in the inline form has its record word and event header
 * stored by the reservation, with the delta, in one 64-bit store
 * (ring_buffer_reserve_head()); any other gets its header word after.
 * A record with strings measures them before it reserves: it asks first
 * whether recording is off (the answer the reservation would give), so
 * that recording off costs it no string walk (trace_printk, whose bprint
 * bytes come encoded, asks before it encodes them).
 */
#define TRACE_EVENT(sys, name, ...)						\
	static __always_inline int __trace_##name(TE_LIST(TE_PARAM, __VA_ARGS__)) \
	{									\
		struct rb_cpu_buffer *te_cb = this_cpu_rb();			\
		const uint64_t te_bit = arch_trace_level_bit();			\
		struct trace_ev_##name *te_rec;					\
		const int te_dyn = 0 TE_EACH(TE_DYN, __VA_ARGS__);		\
										\
		if ((0 TE_EACH(TE_WALK, __VA_ARGS__)) && ring_buffer_recording_off(te_cb)) \
			return -RB_EOFF;					\
		TE_EACH(TE_STRLEN, __VA_ARGS__)					\
		uint32_t te_at = sizeof(*te_rec);				\
		const int te_head = !te_dyn && sizeof(*te_rec) <= RB_INLINE_MAX; \
		int te_err;							\
										\
		(void)te_at;							\
		if (te_head) {							\
			te_err = ring_buffer_reserve_head(te_cb, sizeof(*te_rec), \
				(void **)&te_rec, te_bit,			\
				trace_ent_head(TEV_##name, TRACE_ENT_WORDS(name), \
					       sizeof(*te_rec)),		\
				trace_ent_head_ctx);				\
		} else {							\
			te_err = ring_buffer_reserve_bit(te_cb, sizeof(*te_rec)	\
					TE_EACH(TE_ROOM, __VA_ARGS__),		\
					(void **)&te_rec, te_bit);		\
			if (likely(!te_err))					\
				te_rec->hdr = trace_ent_word(TEV_##name,	\
							     TRACE_ENT_WORDS(name)); \
		}								\
		if (likely(!te_err)) {						\
			TE_EACH(TE_ASSIGN, __VA_ARGS__)				\
			ring_buffer_commit_bit(te_cb, te_bit);			\
		}								\
		return te_err;							\
	}									\
	static __always_inline int trace_##name(TE_LIST(TE_PARAM, __VA_ARGS__))	\
	{									\
		if (trace_event_enabled(name))					\
			return __trace_##name(TE_LIST(TE_ARG, __VA_ARGS__));	\
		return -RB_EOFF;						\
	}
#include "trace/event_list.h"

#endif
