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
#include <lib/crc32.h>
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
	w->cut = false;
	w->pack = 0;
	b.ring_version = RB_FORMAT_VERSION;
	b.events_version = DUMP_EVENTS_VERSION;
	dump_emit(w, DUMP_FRAME_BEGIN, &b, sizeof(b), 0, 0);
}

/*
 * An EVENTS frame is serialised twice by the same code: once to count its
 * bytes (the header needs the length first), once to send them with the
 * CRC taken on the way, so no buffer holds it.
 */
struct ev_enc {
	struct dump_writer *w;
	bool send;		/* second pass: to the sink */
	uint32_t len;		/* bytes so far */
	uint32_t crc;		/* running CRC (second pass) */
	uint8_t *buf;		/* or a pass into memory, to be packed */
};

static void enc_put(struct ev_enc *e, const void *p, uint32_t n)
{
	if (e->buf)
		__builtin_memcpy(e->buf + e->len, p, n);
	e->len += n;
	if (e->send) {
		e->crc = crc32_update(e->crc, p, n);
		trace_sink_put(&e->w->sink, p, n);
	}
}

static void enc_u8(struct ev_enc *e, uint32_t v) { uint8_t b = (uint8_t)v; enc_put(e, &b, 1); }
static void enc_u16(struct ev_enc *e, uint32_t v) { uint16_t b = (uint16_t)v; enc_put(e, &b, 2); }
static void enc_u64(struct ev_enc *e, uint64_t v) { enc_put(e, &v, 8); }

static void enc_str(struct ev_enc *e, const char *s)
{
	uint32_t n = 0;

	while (s && s[n] && n < 0xffffu)
		n++;
	enc_u16(e, n);
	enc_put(e, s, n);
}

static void enc_event(struct ev_enc *e, const struct trace_event_def *d)
{
	enc_u16(e, d->id);
	enc_u16(e, d->fixed);
	enc_u8(e, d->nfields);
	enc_u8(e, d->flags);
	enc_str(e, d->system);
	enc_str(e, d->name);
	enc_str(e, d->fmt);
	for (uint32_t i = 0; i < d->nfields; i++) {
		const struct trace_field_def *f = &d->fields[i];
		enc_str(e, f->name);
		enc_u8(e, f->kind);
		enc_u8(e, f->display);
		enc_u8(e, f->is_signed);
		enc_u8(e, 0);
		enc_u16(e, f->offset);
		enc_u16(e, f->size);
		enc_u16(e, f->max);
		enc_u16(e, f->nenums);
		for (uint32_t k = 0; k < f->nenums; k++) {
			enc_u64(e, f->enums[k].value);
			enc_str(e, f->enums[k].name);
		}
	}
}

/* One frame whose payload enc() writes twice: counted, then sent. */
static void emit_encoded(struct dump_writer *w, uint32_t type,
			 void (*enc)(struct ev_enc *e, const void *arg), const void *arg)
{
	struct ev_enc e = { w, false, 0, 0, 0 };
	struct dump_frame_header h = {
		.magic = { DUMP_MAGIC0, DUMP_MAGIC1, DUMP_MAGIC2, DUMP_MAGIC3 },
		.type = (uint8_t)type,
		.version = DUMP_VERSION,
		.dump_id = w->dump_id,
		.seq = w->seq,
	};

	enc(&e, arg);			/* counting pass */
	h.len = e.len;
	if (w->pack && e.len <= sizeof(w->pack->in)) {	/* into memory, then packed */
		e = (struct ev_enc){ w, false, 0, 0, w->pack->in };
		enc(&e, arg);
		dump_write_frame(w, type, w->pack->in, e.len);
		return;
	}
	e = (struct ev_enc){ w, true, 0, crc32_update(CRC32_INIT, &h, sizeof(h)), 0 };
	trace_sink_put(&w->sink, &h, sizeof(h));
	enc(&e, arg);
	e.crc = crc32_final(e.crc);
	trace_sink_put(&w->sink, &e.crc, sizeof(e.crc));
	w->chain = crc32_update(w->chain, &e.crc, sizeof(e.crc));
	w->seq++;
}

static void enc_event_frame(struct ev_enc *e, const void *arg)
{
	enc_event(e, arg);
}

void dump_write_events(struct dump_writer *w, const struct trace_catalog *cat,
		       const uint8_t *enabled)
{
	for (uint32_t id = 1; id < cat->nr_ids; id++) {
		const struct trace_event_def *d = trace_catalog_get(cat, id);
		struct trace_event_def copy;

		if (!d)
			continue;
		copy = *d;
		if (enabled)
			copy.flags = (uint8_t)((d->flags & ~TRACE_EVENT_DISABLED) |
					       (enabled[id] ? 0 : TRACE_EVENT_DISABLED));
		emit_encoded(w, DUMP_FRAME_EVENTS, enc_event_frame, &copy);
	}
}

/* One SYMS frame: symbols first .. first + n - 1. */
struct syms_part {
	const struct dump_syms_src *src;
	uint32_t first, n;
};

static void enc_syms_frame(struct ev_enc *e, const void *arg)
{
	const struct syms_part *p = arg;
	uint64_t end = p->src->end;

	enc_put(e, &end, 8);
	enc_put(e, &p->n, 4);
	for (uint32_t i = p->first; i < p->first + p->n; i++) {
		uint64_t addr = 0;
		const char *name = p->src->get(p->src->ctx, i, &addr);
		enc_u64(e, addr);
		enc_str(e, name);
	}
}

static void write_table(struct dump_writer *w, uint32_t type, const struct dump_syms_src *src)
{
	for (uint32_t first = 0; first < src->count; first += DUMP_SYMS_PER_FRAME) {
		struct syms_part p = { src, first, src->count - first };
		if (p.n > DUMP_SYMS_PER_FRAME)
			p.n = DUMP_SYMS_PER_FRAME;
		emit_encoded(w, type, enc_syms_frame, &p);
	}
}

void dump_write_symbols(struct dump_writer *w, const struct dump_syms_src *src)
{
	write_table(w, DUMP_FRAME_SYMS, src);
}

void dump_write_printk_formats(struct dump_writer *w, const struct dump_syms_src *src)
{
	write_table(w, DUMP_FRAME_PRINTK, src);
}

void dump_write_clock(struct dump_writer *w, const struct dump_clock *clock)
{
	dump_emit(w, DUMP_FRAME_CLOCK, clock, sizeof(*clock), 0, 0);
}

void dump_write_trust(struct dump_writer *w, const struct dump_trust *trust)
{
	dump_emit(w, DUMP_FRAME_TRUST, trust, sizeof(*trust), 0, 0);
}

void dump_write_calib(struct dump_writer *w, const struct dump_calib *calib)
{
	dump_emit(w, DUMP_FRAME_CALIB, calib, sizeof(*calib), 0, 0);
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
	uint32_t n;

	/* Only the records carry information; a bad commit sends it all. */
	if (page_size >= RB_PAGE_HEADER_SIZE &&
	    hdr->commit <= page_size - RB_PAGE_HEADER_SIZE)
		info.data_len = RB_PAGE_HEADER_SIZE + hdr->commit;
	else
		info.data_len = page_size;
	if (info.data_len > RB_PAGE_SIZE_MAX)
		info.data_len = RB_PAGE_SIZE_MAX;
	if (w->pack && (n = dump_pack_page(w->pack, &info, page)) != 0)
		dump_emit(w, DUMP_FRAME_PACK, w->pack->out, n, 0, 0);
	else
		dump_emit(w, DUMP_FRAME_PAGE, &info, sizeof(info), page, info.data_len);
	w->pages++;
	w->events += hdr->entries;
}

void dump_write_frame(struct dump_writer *w, uint32_t type, const void *payload, uint32_t len)
{
	uint32_t n = 0;

	if (type == DUMP_FRAME_PAGE && len >= sizeof(struct dump_page_info) + RB_PAGE_HEADER_SIZE) {
		struct dump_page_info info;
		struct rb_page_header hdr;

		__builtin_memcpy(&info, payload, sizeof(info));
		__builtin_memcpy(&hdr, (const uint8_t *)payload + sizeof(info), sizeof(hdr));
		if (w->pack && info.data_len == len - sizeof(info))
			n = dump_pack_page(w->pack, &info, (const uint8_t *)payload + sizeof(info));
		w->pages++;
		w->events += hdr.entries;
	} else if (w->pack && (type == DUMP_FRAME_EVENTS || type == DUMP_FRAME_SYMS ||
			       type == DUMP_FRAME_PRINTK)) {
		n = dump_pack_bytes(w->pack, type, payload, len);
	}
	if (n)
		dump_emit(w, DUMP_FRAME_PACK, w->pack->out, n, 0, 0);
	else
		dump_emit(w, type, payload, len, 0, 0);
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
		.flags = w->cut ? DUMP_END_CUT : 0,
	};

	dump_emit(w, DUMP_FRAME_END, &e, sizeof(e), 0, 0);
}
