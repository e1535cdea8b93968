/*
 * The on-page trace format: one definition shared by the kernel's ring
 * buffer and the host tools that decode captured pages.
 *
 * A page is a page header followed by records, all little-endian, all
 * 4-byte aligned.  Records never cross a page.  Every timestamp on a page is
 * a raw clock value (TSC cycles in the kernel) expressed relative to the
 * page's 64-bit base stamp, so a writer needs no knowledge of the previous
 * record to encode its own (see the ring buffer design notes in docs/).
 *
 *   page (page_size bytes, a power of two, 2 KiB .. 64 KiB, 4 KiB default)
 *   +----------------------+-------+-------+-----+-------+---------------+
 *   | page header (48 B)   | rec 0 | rec 1 | ... | rec n | padding/unused|
 *   +----------------------+-------+-------+-----+-------+---------------+
 *   ^ page                 ^ data  <------- commit bytes ------>          ^
 *                                  <------------ capacity --------------->
 *
 *   record header word (32 bits)
 *   31       27 26                                      0
 *   +----------+-----------------------------------------+
 *   |   kind   |  arg (27 bits): delta or length         |
 *   +----------+-----------------------------------------+
 *
 *   (kind on top: a writer with a delta below 2^27 in a register makes the
 *   word with one or.)
 *
 *   kind      record                         size      arg
 *   0         data, long form                8 + len   delta; next word = len
 *   1..27     data, inline length 4 * kind   4 + len   delta
 *   28        padding                        arg       total record bytes (>= 4)
 *   29        time extend                    4         bits 27..53 of the next
 *                                                      data record's delta
 *   30        absolute stamp                 12        0; next 8 bytes = stamp
 *                                                      the next data record's
 *                                                      delta is relative to
 *   31        invalid                        -         -
 *
 * Key: len = payload bytes, always a multiple of 4 (writers round up);
 * delta = stamp - page base, in clock units; capacity = page_size - 48.
 *
 * A data record's stamp is base + delta, or base + (extend << 27 | delta) after
 * a time extend, or abs + delta after an absolute stamp.  An extend or an
 * absolute stamp applies to the data record that immediately follows it and
 * to nothing else; one never ends a page or precedes padding.
 */
#ifndef TRACE_RING_FORMAT_H
#define TRACE_RING_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RB_FORMAT_VERSION	2	/* 2: kind moved to the top bits */

#define RB_PAGE_SIZE_DEFAULT	4096u
#define RB_PAGE_SIZE_MIN	2048u	/* the largest record must fit an empty page */
#define RB_PAGE_SIZE_MAX	65536u

/* Largest payload one event may carry, in bytes (after rounding up to 4). */
#define RB_MAX_PAYLOAD		1024u

/* Record header word fields. */
#define RB_DELTA_BITS		27	/* the arg field: bits 0..26 */
#define RB_ARG_MASK		((1u << RB_DELTA_BITS) - 1)
#define RB_DELTA_LIMIT		(1ull << RB_DELTA_BITS)		/* inline delta < this */
#define RB_EXTEND_LIMIT		(1ull << (2 * RB_DELTA_BITS))	/* extend + delta < this */

#define RB_KIND_DATA_LONG	0u
#define RB_KIND_DATA_MAX	27u	/* inline data kinds are 1..27 */
#define RB_KIND_PADDING		28u
#define RB_KIND_EXTEND		29u
#define RB_KIND_ABS		30u
#define RB_KIND_INVALID		31u

#define RB_INLINE_MAX		(4u * RB_KIND_DATA_MAX)	/* 108 payload bytes */
#define RB_EXTEND_SIZE		4u
#define RB_ABS_SIZE		12u
/* Largest record group: absolute stamp + long-form data of maximum size. */
#define RB_MAX_RECORD		(RB_ABS_SIZE + 8u + RB_MAX_PAYLOAD)

/* Page header flags. */
#define RB_PAGE_FLUSHED		0x01u	/* the page was ended early by a flush */
#define RB_PAGE_LOST		0x02u	/* events were lost before this page */
#define RB_PAGE_CLOCK_BACK	0x04u	/* a stamp on it is below the one before it */

/*
 * Page header.  The writer fills base_ts, dropped, pos, cpu, version and
 * flags when it starts the page, entries as it reserves, commit when it
 * leaves it, and seq when the page becomes readable.  The reader fills lost
 * and adds the LOST and CLOCK_BACK flags when it takes the page.
 */
struct rb_page_header {
	uint64_t base_ts;	/* stamp every delta on this page is relative to */
	uint64_t seq;		/* events stored on this CPU before this page's first */
	uint64_t dropped;	/* events dropped on this CPU before this page started */
	uint64_t pos;		/* page sequence number on this CPU, 0 for the first */
	uint32_t commit;	/* bytes of records after the header */
	uint32_t entries;	/* data records on this page */
	uint32_t lost;		/* events lost since the reader's previous page (saturates) */
	uint16_t cpu;		/* CPU that wrote the page */
	uint8_t version;	/* RB_FORMAT_VERSION */
	uint8_t flags;		/* RB_PAGE_* */
};

#define RB_PAGE_HEADER_SIZE	48u

_Static_assert(sizeof(struct rb_page_header) == RB_PAGE_HEADER_SIZE, "page header size");
_Static_assert(offsetof(struct rb_page_header, seq) == 8, "page header layout");
_Static_assert(offsetof(struct rb_page_header, dropped) == 16, "page header layout");
_Static_assert(offsetof(struct rb_page_header, pos) == 24, "page header layout");
_Static_assert(offsetof(struct rb_page_header, commit) == 32, "page header layout");
_Static_assert(offsetof(struct rb_page_header, entries) == 36, "page header layout");
_Static_assert(offsetof(struct rb_page_header, lost) == 40, "page header layout");
_Static_assert(offsetof(struct rb_page_header, cpu) == 44, "page header layout");
_Static_assert(offsetof(struct rb_page_header, flags) == 47, "page header layout");
_Static_assert(RB_MAX_RECORD <= RB_PAGE_SIZE_MIN - RB_PAGE_HEADER_SIZE,
	       "the largest record must fit an empty page");
_Static_assert(RB_MAX_PAYLOAD % 4 == 0, "payloads are whole words");

/* ---- encoding (used by the writer; pure functions) ---- */

static inline uint32_t rb_payload_round(uint32_t len)
{
	return (len + 3u) & ~3u;
}

/* Bytes of the data record (header, length word if any, payload) for len. */
static inline uint32_t rb_data_record_size(uint32_t len)
{
	uint32_t r = rb_payload_round(len);

	return r <= RB_INLINE_MAX ? 4u + r : 8u + r;
}

/* Bytes between the record header and the payload. */
static inline uint32_t rb_data_header_size(uint32_t len)
{
	return rb_payload_round(len) <= RB_INLINE_MAX ? 4u : 8u;
}

/* arg must be below 2^27. */
static inline uint32_t rb_record_word(uint32_t kind, uint32_t arg)
{
	return kind << RB_DELTA_BITS | arg;
}

static inline uint32_t rb_record_kind(uint32_t word)
{
	return word >> RB_DELTA_BITS;
}

static inline uint32_t rb_record_arg(uint32_t word)
{
	return word & RB_ARG_MASK;
}

static inline uint32_t rb_load32(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t rb_load64(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

static inline void rb_store32(uint8_t *p, uint32_t v)
{
	__builtin_memcpy(p, &v, sizeof(v));
}

static inline void rb_store64(uint8_t *p, uint64_t v)
{
	__builtin_memcpy(p, &v, sizeof(v));
}

/*
 * An inline-form record's first 8 bytes with the delta left out, as one
 * little-endian value: its record word in the low half, the payload's first
 * 32-bit word (first) in the high half.  A writer that knows both before it
 * reserves hands this over (rb_reserve_head()), and the record's header and
 * first word are stored with the delta in one 64-bit store.  len is a
 * multiple of 4, at least 4 and at most RB_INLINE_MAX.
 */
static inline uint64_t rb_head_word(uint32_t len, uint32_t first)
{
	return (uint64_t)first << 32 | rb_record_word(len / 4u, 0);
}

/*
 * Write the header of a data record of len payload bytes at rp with a delta
 * below RB_DELTA_LIMIT; returns the payload address.  The last payload word
 * is zeroed when len is not a multiple of 4 so no stale bytes leak out.
 */
static inline uint8_t *rb_put_data(uint8_t *rp, uint32_t len, uint64_t delta)
{
	uint32_t r = rb_payload_round(len);
	/* Stores relative to the payload: one address for all of them. */
	uint8_t *payload = rp + rb_data_header_size(len);

	if (r <= RB_INLINE_MAX) {
		rb_store32(payload - 4, rb_record_word(r / 4u, (uint32_t)delta));
	} else {
		rb_store32(payload - 8, rb_record_word(RB_KIND_DATA_LONG, (uint32_t)delta));
		rb_store32(payload - 4, r);
	}
	if (r != len)
		rb_store32(payload + r - 4u, 0);
	return payload;
}

/* A padding record covering len bytes (len >= 4, a multiple of 4). */
static inline void rb_put_padding(uint8_t *rp, uint32_t len)
{
	rb_store32(rp, rb_record_word(RB_KIND_PADDING, len));
}

/* ---- decoding (used by the reader and host tools) ---- */

/* One decoded data event. */
struct rb_event {
	uint64_t ts;		/* absolute stamp, clock units */
	const uint8_t *data;	/* payload, 4-byte aligned */
	uint32_t len;		/* payload bytes, a multiple of 4 */
	uint32_t offset;	/* record offset from the start of the data area */
};

/* Walks the records of one page, bounds-checked against commit. */
struct rb_page_iter {
	const uint8_t *data;	/* first record */
	uint64_t base;		/* page base stamp */
	uint64_t abs;		/* pending absolute stamp */
	uint32_t off;		/* next record offset */
	uint32_t end;		/* page header's commit */
	uint32_t hi;		/* pending extend bits */
	uint32_t pending;	/* 0, RB_KIND_EXTEND or RB_KIND_ABS */
};

enum {
	RB_ITER_ERROR = -1,	/* malformed page: stop decoding it */
	RB_ITER_END = 0,	/* no more records */
	RB_ITER_EVENT = 1,	/* *ev holds the next data event */
};

/* Returns RB_ITER_ERROR if the header cannot describe a page of page_size. */
static inline int rb_page_iter_init(struct rb_page_iter *it, const void *page,
				    uint32_t page_size)
{
	const struct rb_page_header *hdr = (const struct rb_page_header *)page;

	it->data = (const uint8_t *)page + RB_PAGE_HEADER_SIZE;
	it->base = hdr->base_ts;
	it->abs = 0;
	it->off = 0;
	it->end = hdr->commit;
	it->hi = 0;
	it->pending = 0;
	if (page_size < RB_PAGE_SIZE_MIN || page_size > RB_PAGE_SIZE_MAX ||
	    hdr->version != RB_FORMAT_VERSION ||
	    hdr->commit > page_size - RB_PAGE_HEADER_SIZE || hdr->commit % 4u)
		return RB_ITER_ERROR;
	return RB_ITER_END;
}

static inline int rb_page_iter_next(struct rb_page_iter *it, struct rb_event *ev)
{
	while (it->off < it->end) {
		uint32_t room = it->end - it->off;
		const uint8_t *rp = it->data + it->off;
		uint32_t word, kind, arg, len, hsize;

		if (room < 4u)
			return RB_ITER_ERROR;
		word = rb_load32(rp);
		kind = rb_record_kind(word);
		arg = rb_record_arg(word);
		switch (kind) {
		case RB_KIND_PADDING:
			if (it->pending || arg < 4u || arg % 4u || arg > room)
				return RB_ITER_ERROR;
			it->off += arg;
			continue;
		case RB_KIND_EXTEND:
			if (it->pending)
				return RB_ITER_ERROR;
			it->pending = RB_KIND_EXTEND;
			it->hi = arg;
			it->off += RB_EXTEND_SIZE;
			continue;
		case RB_KIND_ABS:
			if (it->pending || arg != 0 || room < RB_ABS_SIZE)
				return RB_ITER_ERROR;
			it->pending = RB_KIND_ABS;
			it->abs = rb_load64(rp + 4);
			it->off += RB_ABS_SIZE;
			continue;
		case RB_KIND_INVALID:
			return RB_ITER_ERROR;
		case RB_KIND_DATA_LONG:
			if (room < 8u)
				return RB_ITER_ERROR;
			len = rb_load32(rp + 4);
			/* The long form is only used where the inline one cannot be. */
			if (len <= RB_INLINE_MAX || len > RB_MAX_PAYLOAD || len % 4u)
				return RB_ITER_ERROR;
			hsize = 8u;
			break;
		default:
			len = 4u * kind;
			hsize = 4u;
			break;
		}
		if (hsize + len > room)
			return RB_ITER_ERROR;
		if (it->pending == RB_KIND_ABS)
			ev->ts = it->abs + arg;
		else
			ev->ts = it->base + (((uint64_t)it->hi << RB_DELTA_BITS) | arg);
		ev->data = rp + hsize;
		ev->len = len;
		ev->offset = it->off;
		it->pending = 0;
		it->hi = 0;
		it->off += hsize + len;
		return RB_ITER_EVENT;
	}
	return it->pending ? RB_ITER_ERROR : RB_ITER_END;
}

#endif
