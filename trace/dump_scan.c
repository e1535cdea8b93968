/*
 * Scanning a capture for frames, and grouping frames into dumps: the
 * first two layers of the dump reader (design notes in trace/dump_read.c).
 *
 * The scan never trusts a header further than it has checked it: the
 * magic, then a length no frame exceeds, then a type and length that fit
 * together (cheap, so debris full of magic bytes costs a CRC only where
 * a PAGE frame could start), then that the frame fits in the capture,
 * then the CRC.  Only a frame that passes all of that is skipped whole.
 */
#include <lib/crc32.h>

#include "dump_scan.h"

/* ---- scanning ---- */

static bool is_magic(const uint8_t *p)
{
	return p[0] == DUMP_MAGIC0 && p[1] == DUMP_MAGIC1 && p[2] == DUMP_MAGIC2 &&
	       p[3] == DUMP_MAGIC3;
}

/*
 * Can a version-1 header be right?  Checked before the CRC, so that debris
 * full of magic bytes costs a CRC only where a PAGE frame could start.
 */
bool dump_header_plausible(const struct dump_frame_header *h)
{
	switch (h->type) {
	case DUMP_FRAME_BEGIN:
		return h->len == sizeof(struct dump_begin);
	case DUMP_FRAME_CLOCK:
		return h->len == sizeof(struct dump_clock);
	case DUMP_FRAME_PAGE:
		return h->len >= sizeof(struct dump_page_info) + RB_PAGE_HEADER_SIZE;
	case DUMP_FRAME_STATS:
		return h->len == sizeof(struct dump_stats);
	case DUMP_FRAME_TRUST:
		return h->len == sizeof(struct dump_trust);
	case DUMP_FRAME_CALIB:
		return h->len == sizeof(struct dump_calib);
	case DUMP_FRAME_END:
		return h->len == sizeof(struct dump_end);
	case DUMP_FRAME_EVENTS:		/* the smallest: no field, empty strings */
		return h->len >= 12 && h->len <= DUMP_EVENTS_MAX_PAYLOAD;
	case DUMP_FRAME_PRINTK:
		return h->len >= 12 && h->len <= DUMP_SYMS_PER_FRAME * (10u + DUMP_PRINTK_FMT_MAX) + 12u;
	case DUMP_FRAME_SYMS:
		return h->len >= 12 && h->len <= DUMP_SYMS_PER_FRAME * (10u + DUMP_SYM_NAME_MAX) + 12u;
	case DUMP_FRAME_PACK:		/* the inner type and at least 4 coded bytes */
		return h->len >= 5 && h->len <= DUMP_MAX_PAYLOAD;
	default:
		return false;
	}
}

void dump_scan_next(struct dump_scanner *s, struct dump_item *it)
{
	const uint8_t *b = s->buf;
	size_t p = s->pos, m = p, total;

	__builtin_memset(it, 0, sizeof(*it));
	while (m + 4 <= s->len && !is_magic(b + m))
		m++;
	if (m + 4 > s->len)
		m = s->len;	/* a partial magic at the very end is debris */
	if (m > p) {
		it->kind = SCAN_GAP;
		it->off = p;
		it->end = m;
		s->pos = m;
		return;
	}
	if (m >= s->len) {
		it->kind = SCAN_EOF;
		it->off = it->end = s->len;
		return;
	}
	it->off = m;
	it->end = m + 1;
	it->kind = SCAN_BAD;
	s->pos = m + 1;
	if (s->len - m < DUMP_HEADER_SIZE) {
		it->reason = BAD_SHORT_HEADER;
		return;
	}
	__builtin_memcpy(&it->h, b + m, sizeof(it->h));
	if (it->h.len > DUMP_MAX_PAYLOAD) {
		it->reason = BAD_LENGTH;
		return;
	}
	if (it->h.version == DUMP_VERSION && !dump_header_plausible(&it->h)) {
		it->reason = BAD_HEADER;
		return;
	}
	total = DUMP_FRAME_OVERHEAD + it->h.len;
	if (s->len - m < total) {
		it->reason = BAD_TRUNCATED;
		return;
	}
	__builtin_memcpy(&it->crc, b + m + DUMP_HEADER_SIZE + it->h.len, 4);
	it->crc_calc = crc32(b + m, DUMP_HEADER_SIZE + it->h.len);
	if (it->crc != it->crc_calc) {
		it->reason = BAD_CRC;
		return;
	}
	/* The CRC vouches for the length: skip the whole frame. */
	it->end = m + total;
	s->pos = m + total;
	if (it->h.version != DUMP_VERSION) {
		it->reason = BAD_VERSION;
		return;
	}
	it->kind = SCAN_FRAME;
	it->payload = b + m + DUMP_HEADER_SIZE;
}

/* ---- segmentation into dumps ---- */

static void seg_record(struct dump_segmenter *g)
{
	if (g->which < 0 || (uint32_t)g->which == g->nr_dumps - 1) {
		g->found = true;
		g->sel_start = g->cur_start;
		g->sel_end = g->cur_end;
		g->sel_id = g->id;
	}
}

void dump_segment(const uint8_t *buf, size_t len, struct dump_segmenter *g)
{
	struct dump_scanner s = { buf, len, 0 };
	struct dump_item it;

	for (dump_scan_next(&s, &it); it.kind != SCAN_EOF; dump_scan_next(&s, &it)) {
		if (it.kind == SCAN_GAP)
			continue;
		if (it.kind == SCAN_BAD) {
			if (g->open) {
				g->cur_end = it.end;
			} else if (!g->pending) {
				g->pending = true;
				g->pending_off = it.off;
			}
			continue;
		}
		if (!g->open || it.h.type == DUMP_FRAME_BEGIN || it.h.dump_id != g->id) {
			if (g->open)
				seg_record(g);
			g->nr_dumps++;
			g->open = true;
			g->id = it.h.dump_id;
			g->cur_start = g->pending ? g->pending_off : it.off;
			g->pending = false;
		}
		g->cur_end = it.end;
		if (it.h.type == DUMP_FRAME_END) {
			seg_record(g);
			g->open = false;
		}
	}
	if (g->open)
		seg_record(g);
}
