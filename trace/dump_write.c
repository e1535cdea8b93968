/*
 * Encoder of binary trace dumps.  The layout and its reasons are in
 * <trace/dump_format.h>; this file only serialises.
 *
 * Each frame is emitted as header, payload pieces, CRC, with the CRC
 * computed on the way, so a 64 KiB page is never copied.  The chain value
 * of END is the CRC-32 of the sequence of all earlier frames' CRC fields
 * (4 little-endian bytes each): a reader that recomputes it over what it
 * received knows that it received exactly those frames, in that order.
 */
#include <trace/crc32.h>
#include <trace/dump_write.h>

/* Write one frame made of two payload pieces (either may be empty). */
static void dump_emit(struct dump_writer *w, uint32_t type, const void *a,
		      uint32_t alen, const void *b, uint32_t blen)
{
	struct dump_frame_header h = {
		.magic = { DUMP_MAGIC0, DUMP_MAGIC1, DUMP_MAGIC2, DUMP_MAGIC3 },
		.type = (uint8_t)type,
		.version = DUMP_VERSION,
		.dump_id = w->dump_id,
		.len = alen + blen,
		.seq = w->seq,
	};
	uint32_t crc;

	crc = crc32_update(CRC32_INIT, &h, sizeof(h));
	crc = crc32_update(crc, a, alen);
	crc = crc32_final(crc32_update(crc, b, blen));

	trace_sink_put(&w->sink, &h, sizeof(h));
	trace_sink_put(&w->sink, a, alen);
	trace_sink_put(&w->sink, b, blen);
	trace_sink_put(&w->sink, &crc, sizeof(crc));

	w->chain = crc32_update(w->chain, &crc, sizeof(crc));
	w->seq++;
}

void dump_write_begin(struct dump_writer *w, const struct trace_sink *sink,
		      uint16_t dump_id, const struct dump_begin *begin)
{
	struct dump_begin b = *begin;

	w->sink = *sink;
	w->dump_id = dump_id;
	w->seq = 0;
	w->pages = 0;
	w->events = 0;
	w->chain = CRC32_INIT;
	b.ring_version = RB_FORMAT_VERSION;
	b.events_version = DUMP_EVENTS_VERSION;
	dump_emit(w, DUMP_FRAME_BEGIN, &b, sizeof(b), 0, 0);
}

void dump_write_clock(struct dump_writer *w, const struct dump_clock *clock)
{
	dump_emit(w, DUMP_FRAME_CLOCK, clock, sizeof(*clock), 0, 0);
}

void dump_write_page(struct dump_writer *w, uint32_t cpu, const void *page,
		     uint32_t page_size, uint64_t lost_overrun, uint64_t lost_dropped)
{
	const struct rb_page_header *hdr = page;
	struct dump_page_info info = {
		.cpu = cpu,
		.pos = hdr->pos,
		.lost_overrun = lost_overrun,
		.lost_dropped = lost_dropped,
	};

	/* Only the records carry information; a bad commit sends it all. */
	if (page_size >= RB_PAGE_HEADER_SIZE &&
	    hdr->commit <= page_size - RB_PAGE_HEADER_SIZE)
		info.data_len = RB_PAGE_HEADER_SIZE + hdr->commit;
	else
		info.data_len = page_size;
	if (info.data_len > RB_PAGE_SIZE_MAX)
		info.data_len = RB_PAGE_SIZE_MAX;
	dump_emit(w, DUMP_FRAME_PAGE, &info, sizeof(info), page, info.data_len);
	w->pages++;
	w->events += hdr->entries;
}

void dump_write_stats(struct dump_writer *w, const struct dump_stats *stats)
{
	dump_emit(w, DUMP_FRAME_STATS, stats, sizeof(*stats), 0, 0);
}

void dump_write_end(struct dump_writer *w)
{
	struct dump_end e = {
		.frames = w->seq,
		.pages = w->pages,
		.events = w->events,
		.chain = crc32_final(w->chain),
	};

	dump_emit(w, DUMP_FRAME_END, &e, sizeof(e), 0, 0);
}
