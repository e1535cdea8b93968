/*
 * Finding TRACE.BIN and deciding where writes may go.  The chain of trust,
 * each link checked before the next is read:
 *   partition table (part.c) -> FAT32 partition labelled BARETRACE that
 *   overlaps no other -> its boot sector (fat32.c) -> the one root entry
 *   TRACE.BIN -> its clusters consecutive and exactly its size -> its
 *   header (magic, version, CRC, layout, size) -> tracefile.verified.
 * tracefile_write_ok() says yes only past the last link.
 */
#include <stddef.h>
#include <block/stick_err.h>
#include <block/tracefile.h>
#include <lib/crc32.h>

static const char *const stick_texts[] = {
#define STICK_ERR_TEXT(name, text) text,
	STICK_ERRORS(STICK_ERR_TEXT)
#undef STICK_ERR_TEXT
};

const char *stick_strerror(int err)
{
	if (err < 0 || err >= STICK_ERR_COUNT)
		return "unknown reason";
	return stick_texts[err];
}

void tracefile_hdr_make(uint8_t *buf, const struct tracefile_hdr *h)
{
	for (uint32_t i = 0; i < TRACEFILE_HDR_BYTES; i++)
		buf[i] = 0;
	for (int i = 0; i < 8; i++)
		buf[TFH_MAGIC + i] = (uint8_t)TRACEFILE_MAGIC[i];
	put_le32(buf + TFH_VERSION, h->version);
	put_le32(buf + TFH_DATA_OFFSET, h->data_offset);
	put_le64(buf + TFH_FILE_BYTES, h->file_bytes);
	for (uint32_t i = 0; i < TRACEFILE_BUILD_ID_LEN; i++)
		buf[TFH_BUILD_ID + i] = h->build_id[i];
	for (uint32_t i = 0; i < TRACEFILE_VERSION_LEN && h->version_str[i]; i++)
		buf[TFH_VERSION_STR + i] = (uint8_t)h->version_str[i];
	put_le32(buf + TFH_CRC, crc32(buf, TFH_CRC));
}

int tracefile_hdr_check(const uint8_t *buf, uint64_t file_bytes, uint32_t block_size,
			struct tracefile_hdr *h)
{
	for (int i = 0; i < 8; i++)
		if (buf[TFH_MAGIC + i] != (uint8_t)TRACEFILE_MAGIC[i])
			return STICK_EHDR_MAGIC;
	h->version = get_le32(buf + TFH_VERSION);
	if (h->version != TRACEFILE_VERSION)
		return STICK_EHDR_VERSION;
	if (get_le32(buf + TFH_CRC) != crc32(buf, TFH_CRC))
		return STICK_EHDR_CRC;
	h->data_offset = get_le32(buf + TFH_DATA_OFFSET);
	h->file_bytes = get_le64(buf + TFH_FILE_BYTES);
	/* The data area starts on a block and after the header's used bytes. */
	if (h->data_offset < TRACEFILE_HDR_USED || h->data_offset % block_size ||
	    h->data_offset >= h->file_bytes)
		return STICK_EHDR_LAYOUT;
	if (h->file_bytes != file_bytes)
		return STICK_EHDR_SIZE;
	for (uint32_t i = 0; i < TRACEFILE_BUILD_ID_LEN; i++)
		h->build_id[i] = buf[TFH_BUILD_ID + i];
	for (uint32_t i = 0; i < TRACEFILE_VERSION_LEN; i++)
		h->version_str[i] = (char)buf[TFH_VERSION_STR + i];
	h->version_str[TRACEFILE_VERSION_LEN] = 0;
	return STICK_OK;
}

static bool label_is(const char *label, const char *want)
{
	for (int i = 0; i < 11; i++)
		if (label[i] != want[i])
			return false;
	return true;
}

static bool overlaps(const struct part *a, const struct part *b)
{
	return a->start < b->start + b->blocks && b->start < a->start + a->blocks;
}

/* The partition p (of s->parts), labelled BARETRACE: its trace file. */
static int stick_check_part(const struct blockdev *dev, struct stick_scratch *s,
			    const struct part *p, struct tracefile *tf)
{
	struct fat32 *fs = &s->fs;
	struct fat32_dirent de;
	uint64_t lba;
	int err;

	for (uint32_t i = 0; i < s->parts.n; i++)
		if (&s->parts.p[i] != p && overlaps(p, &s->parts.p[i]))
			return STICK_EOVERLAP;
	if ((err = fat32_mount(fs, dev, p->start, p->blocks, s->buf)))
		return err;
	if ((err = fat32_find_root(fs, TRACEFILE_NAME83, &de)))
		return err;
	if (de.size % dev->block_size || de.size < TRACEFILE_HDR_USED)
		return STICK_EFILE_SIZE;
	if ((err = fat32_contiguous(fs, de.first_clus, de.size, &lba)))
		return err;
	if (dev->read(dev->ctx, lba, 1, s->buf))
		return STICK_EREAD;
	fs->buf_lba = UINT64_MAX;
	if ((err = tracefile_hdr_check(s->buf, de.size, dev->block_size, &tf->hdr)))
		return err;
	tf->dev = dev;
	tf->block_size = dev->block_size;
	tf->part_index = p->index;
	tf->part_gpt = s->parts.gpt;
	tf->part_start = p->start;
	tf->part_blocks = p->blocks;
	tf->file_lba = lba;
	tf->data_lba = lba + tf->hdr.data_offset / dev->block_size;
	tf->data_blocks = (de.size - tf->hdr.data_offset) / dev->block_size;
	return STICK_OK;
}

int stick_find(const struct blockdev *dev, struct stick_scratch *s, struct tracefile *tf)
{
	int err = STICK_ENOLABEL;
	uint8_t *z = (uint8_t *)tf;

	for (size_t i = 0; i < sizeof(*tf); i++)
		z[i] = 0;
	if ((err = part_read(dev, s->buf, &s->parts)))
		return err;
	err = STICK_ENOLABEL;
	for (uint32_t i = 0; i < s->parts.n; i++) {
		const struct part *p = &s->parts.p[i];
		int m = fat32_mount(&s->fs, dev, p->start, p->blocks, s->buf);

		if (m == STICK_EREAD)
			return m;
		if (!label_is(s->fs.label, TRACEFILE_LABEL))
			continue;
		err = stick_check_part(dev, s, p, tf);
		break;
	}
	if (err) {
		for (size_t i = 0; i < sizeof(*tf); i++)
			z[i] = 0;
		return err;
	}
	tf->verified = TRACEFILE_VERIFIED;
	return STICK_OK;
}

bool tracefile_write_ok(const struct tracefile *tf, uint64_t lba, uint64_t count)
{
	if (!tf || tf->verified != TRACEFILE_VERIFIED || count == 0)
		return false;
	if (lba < tf->data_lba)
		return false;
	/* Overflow-free form of lba + count <= data_lba + data_blocks. */
	return lba - tf->data_lba < tf->data_blocks && count <= tf->data_blocks - (lba - tf->data_lba);
}

int tracefile_write(const struct tracefile *tf, uint64_t lba, uint32_t count, const void *buf)
{
	if (!tracefile_write_ok(tf, lba, count) || !tf->dev->write)
		return TRACEFILE_EREFUSED;
	return tf->dev->write(tf->dev->ctx, tf, lba, count, buf) ? TRACEFILE_EIO : 0;
}
