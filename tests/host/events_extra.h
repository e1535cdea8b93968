/*
 * Extra events for tests: every field kind, in a build option of the
 * capture generator (mkcapture-extra, -DTRACE_EVENT_LIST_EXTRA) that the
 * decoder is never built with, so that a decoder must read them from the
 * capture's own EVENTS frames.  Included at the end of the event list.
 */
TRACE_EVENT_ENUM(extra_states, { 0, "idle" }, { 1, "busy" }, { 7, "gone" })

TRACE_EVENT(extra, ints, F_U8(a), F_S8(b), F_U16(c), F_S16(d), F_X32(e), F_S32(f),
	    F_U64(g), F_S64(h))
TRACE_EVENT(extra, mixed, F_BOOL(flag), F_X64(addr), F_SYM(fn), F_ENUM(state, extra_states),
	    F_CHARS(tag, 6), F_STR(path, 16), F_STR(note, 40), F_X8(small))
