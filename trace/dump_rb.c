/*
 * Glue between the ring buffer and the dump format.  The dump defines its
 * own copies of the counters and states so that readers need only the
 * format header; the assertions keep the two in step.
 */
#include <trace/dump_rb.h>

_Static_assert((int)DUMP_STATE_NONE == (int)RB_STATE_NONE &&
	       (int)DUMP_STATE_OFF == (int)RB_STATE_OFF &&
	       (int)DUMP_STATE_RECORDING == (int)RB_STATE_RECORDING &&
	       (int)DUMP_STATE_STOPPED == (int)RB_STATE_STOPPED, "dump states are ring states");

void dump_stats_from_rb(struct dump_stats *out, uint32_t cpu, const struct rb_stats *st)
{
	const char *r = st->stop_reason;
	uint32_t i = 0;

	__builtin_memset(out, 0, sizeof(*out));
	out->cpu = cpu;
	out->state = st->state;
#define COPY(name, what) out->name = st->name;
	RB_COUNTERS_DUMPED(COPY)
#undef COPY
	/* Truncated to fit, always NUL-terminated. */
	while (r && r[i] && i < DUMP_STOP_REASON_MAX - 1) {
		out->stop_reason[i] = r[i];
		i++;
	}
}
