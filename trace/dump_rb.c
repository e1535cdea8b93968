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
	out->written = st->written;
	out->entries = st->entries;
	out->overrun = st->overrun;
	out->dropped = st->dropped;
	out->commit_overrun = st->commit_overrun;
	out->busy = st->busy;
	out->read = st->read;
	out->in_buffer = st->in_buffer;
	out->bytes = st->bytes;
	out->read_bytes = st->read_bytes;
	out->lost = st->lost;
	out->pages_read = st->pages_read;
	out->rejected = st->rejected;
	out->refused = st->refused;
	out->recursion = st->recursion;
	out->voided = st->voided;
	out->clock_backwards = st->clock_backwards;
	out->claim_raced = st->claim_raced;
	out->read_raced = st->read_raced;
	/* Truncated to fit, always NUL-terminated. */
	while (r && r[i] && i < DUMP_STOP_REASON_MAX - 1) {
		out->stop_reason[i] = r[i];
		i++;
	}
}
