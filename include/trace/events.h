/*
 * The events baretrace records: one definition, shared by the kernel (which
 * writes them), the text formatter and the host decoder (which name them).
 *
 * Payload of every event (the ring buffer's data record carries it as is):
 *
 *   +0  u16 id        enum trace_event_id
 *   +2  u8  ctx       context level of the writer: 0 task, 1 softirq,
 *                     2 irq, 3 nmi (the ring buffer's level)
 *   +3  u8  nfields   number of u32 fields that follow (<= TRACE_FIELDS_MAX)
 *   +4  u32 f[nfields]
 *
 * So an event with one field is 8 bytes of payload. Little-endian, 4-byte
 * aligned (the ring buffer rounds payloads up to 4).
 */
#ifndef TRACE_EVENTS_H
#define TRACE_EVENTS_H

#include <stdint.h>

#define TRACE_FIELDS_MAX	6

enum trace_event_id {
	TEV_INVALID = 0,
	TEV_TICK = 1,		/* LAPIC timer interrupt: tick */
	TEV_IPI_SEND = 2,	/* an IPI sent: to_cpu, vector */
	TEV_IPI_RECV = 3,	/* an IPI taken: from_cpu, vector */
	TEV_NMI = 4,		/* an NMI taken: count */
	TEV_PRODUCER = 5,	/* the demo's producer loop: seq, value */
	TEV_STRESS = 6,		/* stress test: seq, check, level */
	TEV_MARK = 7,		/* a marker: id */
	TEV_BENCH = 8,		/* benchmark write: seq */
	TEV_MAX
};

/* The header word as one little-endian u32: the layout above. */
#define TRACE_ENT_CTX_SHIFT	16
#define TRACE_ENT_NFIELDS_SHIFT	24

/* The context bits of a header word: a writer at level keeps this at hand. */
static inline uint32_t trace_ent_ctx(uint32_t level)
{
	return level << TRACE_ENT_CTX_SHIFT;
}

/* The header word: id, context bits (trace_ent_ctx()), field count. */
static inline uint32_t trace_ent_pack(uint16_t id, uint32_t ctx, uint32_t nfields)
{
	return (uint32_t)id | ctx | nfields << TRACE_ENT_NFIELDS_SHIFT;
}

struct trace_ent_hdr {
	uint16_t id;		/* enum trace_event_id */
	uint8_t ctx;		/* writer's context level */
	uint8_t nfields;	/* u32 fields that follow */
};

_Static_assert(sizeof(struct trace_ent_hdr) == 4, "event header is 4 bytes");

struct trace_event_desc {
	const char *name;			/* as printed */
	uint8_t nfields;			/* fields it always has */
	const char *fields[TRACE_FIELDS_MAX];	/* their names */
};

static const struct trace_event_desc trace_event_descs[TEV_MAX] = {
	[TEV_INVALID] = { "invalid", 0, { 0 } },
	[TEV_TICK] = { "lapic_tick", 1, { "tick" } },
	[TEV_IPI_SEND] = { "ipi_send", 2, { "to_cpu", "vector" } },
	[TEV_IPI_RECV] = { "ipi_recv", 2, { "from_cpu", "vector" } },
	[TEV_NMI] = { "nmi", 1, { "count" } },
	[TEV_PRODUCER] = { "producer", 2, { "seq", "value" } },
	[TEV_STRESS] = { "stress", 3, { "seq", "check", "level" } },
	[TEV_MARK] = { "mark", 1, { "id" } },
	[TEV_BENCH] = { "bench", 1, { "seq" } },
};

/* Context names for text output, by level. */
static const char *const trace_ctx_names[4] = { "task", "softirq", "irq", "nmi" };

#endif
