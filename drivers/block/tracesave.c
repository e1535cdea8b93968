/*
 * Saves in TRACE.BIN's data area (layout and write order in
 * <block/tracesave.h>).  Portable: the kernel writes through USB mass
 * storage, the host tests through a RAM disk, both via tracefile_write().
 */
#include <block/part.h>
#include <block/stick_err.h>
#include <block/tracesave.h>
#include <lib/crc32.h>

static void zero(uint8_t *p, size_t n)
{
	while (n--)
		*p++ = 0;
}

void tracesave_mark_make(uint8_t *buf, uint32_t block_size, const struct tracesave_mark *m)
{
	zero(buf, block_size);
	for (int i = 0; i < 8; i++)
		buf[TSM_MAGIC + i] = (uint8_t)TRACESAVE_MAGIC[i];
	put_le32(buf + TSM_VERSION, TRACESAVE_VERSION);
	put_le32(buf + TSM_SEQ, m->seq);
	put_le32(buf + TSM_DUMP_ID, m->dump_id);
	put_le32(buf + TSM_BLOCK_SIZE, m->block_size);
	put_le64(buf + TSM_BLOCKS, m->blocks);
	put_le64(buf + TSM_BYTES, m->bytes);
	put_le32(buf + TSM_CRC, crc32(buf, TSM_CRC));
}

int tracesave_mark_parse(const uint8_t *buf, struct tracesave_mark *m)
{
	for (int i = 0; i < 8; i++)
		if (buf[TSM_MAGIC + i] != (uint8_t)TRACESAVE_MAGIC[i])
			return -1;
	if (get_le32(buf + TSM_VERSION) != TRACESAVE_VERSION ||
	    get_le32(buf + TSM_CRC) != crc32(buf, TSM_CRC))
		return -1;
	m->seq = get_le32(buf + TSM_SEQ);
	m->dump_id = get_le32(buf + TSM_DUMP_ID);
	m->block_size = get_le32(buf + TSM_BLOCK_SIZE);
	m->blocks = get_le64(buf + TSM_BLOCKS);
	m->bytes = get_le64(buf + TSM_BYTES);
	/* Whole blocks of frames, the last one not empty. */
	if (!m->block_size || !m->blocks || m->blocks > UINT64_MAX / m->block_size ||
	    m->bytes > m->blocks * m->block_size ||
	    m->blocks * m->block_size - m->bytes >= m->block_size)
		return -1;
	return 0;
}

int tracesave_scan(const struct tracefile *tf, uint8_t *buf, struct tracesave_scan *out)
{
	uint64_t end = tf->data_lba + tf->data_blocks;
	uint64_t lba = tf->data_lba;
	struct tracesave_mark m;

	*out = (struct tracesave_scan){ .next_seq = 1 };
	/* Each step moves lba forward by at least 2 blocks: at most
	 * data_blocks / 2 reads. */
	while (lba < end) {
		if (tf->dev->read(tf->dev->ctx, lba, 1, buf))
			return STICK_EREAD;
		if (tracesave_mark_parse(buf, &m) || m.block_size != tf->block_size ||
		    m.blocks > end - lba - 1)
			break;
		out->saves++;
		out->next_seq = m.seq + 1;
		out->used_bytes += m.bytes;
		lba += 1 + m.blocks;
	}
	out->next_lba = lba;
	out->free_blocks = end - lba;
	return STICK_OK;
}

uint64_t tracesave_blocks(uint32_t block_size, uint64_t bytes)
{
	return 1 + (bytes + block_size - 1) / block_size;
}

void tracesave_begin(struct tracesave *s, const struct tracefile *tf,
		     const struct tracesave_scan *sc, uint8_t *buf, uint32_t buf_bytes)
{
	*s = (struct tracesave){
		.tf = tf, .mark_lba = sc->next_lba, .lba = sc->next_lba + 1,
		.room = sc->free_blocks ? sc->free_blocks - 1 : 0, .seq = sc->next_seq,
		.buf = buf, .buf_blocks = buf_bytes / tf->block_size,
	};
	if (!sc->free_blocks || !s->buf_blocks)
		s->err = TRACESAVE_EFULL;
}

void tracesave_begin_stream(struct tracesave *s, const struct tracefile *tf,
			    const struct tracesave_scan *sc, uint8_t *buf, uint32_t buf_bytes,
			    uint32_t dump_id)
{
	tracesave_begin(s, tf, sc, buf, buf_bytes);
	s->stream = true;
	s->dump_id = dump_id;
	if (s->buf_blocks < 2 && !s->err)
		s->err = TRACESAVE_EFULL;
}

uint64_t tracesave_free_bytes(const struct tracesave *s)
{
	return s->err ? 0 : s->room * s->tf->block_size - s->fill;
}

/* The mark of the save as written so far: blocks of frames after it, bytes in them. */
static int ts_mark(struct tracesave *s, uint32_t dump_id, uint64_t bytes)
{
	uint32_t bs = s->tf->block_size;
	struct tracesave_mark m = {
		.seq = s->seq, .dump_id = dump_id, .block_size = bs,
		.blocks = s->lba - s->mark_lba - 1, .bytes = bytes,
	};

	tracesave_mark_make(s->buf, bs, &m);
	return tracefile_write(s->tf, s->mark_lba, 1, s->buf);
}

/*
 * Write the staged blocks (the last one padded with zeros).  A stream's
 * go out with Z after them in one write (the staging keeps a block for
 * it), then its checkpoint: the mark of the whole blocks written so far.
 */
static void ts_flush(struct tracesave *s, bool checkpoint)
{
	uint32_t bs = s->tf->block_size;
	uint32_t n = (s->fill + bs - 1) / bs, z;
	int err;

	if (!n || s->err)
		return;
	zero(s->buf + s->fill, (size_t)n * bs - s->fill);
	if (n > s->room) {
		s->err = TRACESAVE_EFULL;
		return;
	}
	z = s->stream && n < s->room ? 1 : 0;
	zero(s->buf + (size_t)n * bs, (size_t)z * bs);
	if ((err = tracefile_write(s->tf, s->lba, n + z, s->buf))) {
		s->err = err;
		return;
	}
	s->lba += n;
	s->room -= n;
	s->fill = 0;
	if (checkpoint && s->stream &&
	    (err = ts_mark(s, s->dump_id, (s->lba - s->mark_lba - 1) * bs)))
		s->err = err;
}

void tracesave_put(struct tracesave *s, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t cap = (s->buf_blocks - (s->stream ? 1 : 0)) * s->tf->block_size;

	while (len && !s->err) {
		uint32_t n = cap - s->fill;

		if (n > len)
			n = (uint32_t)len;
		for (uint32_t i = 0; i < n; i++)
			s->buf[s->fill + i] = p[i];
		s->fill += n;
		s->bytes += n;
		p += n;
		len -= n;
		if (s->fill == cap)
			ts_flush(s, true);
	}
}

int tracesave_end(struct tracesave *s, uint32_t dump_id)
{
	uint32_t bs = s->tf->block_size;
	int err;

	ts_flush(s, false);
	if (!s->err && !s->bytes)
		s->err = TRACESAVE_EEMPTY;	/* a mark of no frames would not parse */
	if (s->err)
		return s->err;
	/* Z: stale frames of a save cut short here can never pass for a mark. */
	zero(s->buf, bs);
	if (s->room && (err = tracefile_write(s->tf, s->lba, 1, s->buf)))
		return s->err = err;
	if ((err = ts_mark(s, dump_id, s->bytes)))
		return s->err = err;
	return 0;
}
