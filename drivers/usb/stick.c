/*
 * Finding the stick and saving into it.  Every USB mass-storage device is
 * asked, in order, by stick_find() (reads only); the first whose trace file
 * checks out is the stick, every other gets its `usb: refused:` (or `usb:
 * not used:`) line naming it and is never written: writes go only through
 * tracefile_write() on the verified file, which the storage driver checks
 * again.
 *
 * A save is staged in a 64 KiB buffer (whole blocks, one bulk transfer
 * each) and written through tracesave.c, which places it after the saves
 * already there and writes its mark last.  A stream (trace.record=usb:
 * frames written as pages fill) has its own state and staging, and all
 * the free room; a one-off save while a stream is open (a panic) ends the
 * stream at its last checkpoint first, so the two never share blocks.
 */
#include <stddef.h>
#include <block/stick_err.h>
#include <block/tracefile.h>
#include <block/tracesave.h>
#include <usb/msc.h>
#include <usb/stick.h>
#include <usb/usb.h>
#include "kernel/console.h"
#include "kernel/pmm.h"

#define STAGE_BYTES	0x10000

static struct tracefile stick_tf;
static const struct tracefile *stick;	/* &stick_tf once found */
static struct tracesave save;
static uint8_t *stage;			/* STAGE_BYTES */
static struct tracesave stream;		/* trace.record=usb's */
static uint8_t *stream_stage;		/* STAGE_BYTES */
static bool stream_open;
static uint8_t block_buf[BLOCK_SIZE_MAX];

const struct tracefile *usb_trace_file(void)
{
	static struct stick_scratch scratch;
	static struct tracefile other_tf;	/* a device asked after the stick was found */
	static bool looked;
	struct msc *m[USB_MAX_DEVICES];
	unsigned n;

	if (looked)
		return stick;
	looked = true;
	usb_init();
	n = msc_probe(m, USB_MAX_DEVICES);
	/*
	 * Every device is asked (reads only), so that each one that is not the
	 * stick gets its line whatever its port; once the stick is found, the
	 * others are read into other_tf, never into the stick's own file.
	 */
	for (unsigned i = 0; i < n; i++) {
		struct tracefile *tf = stick ? &other_tf : &stick_tf;
		int err = stick_find(&m[i]->bdev, &scratch, tf);
		const char *name = m[i]->dev->name;

		if (err) {
			printk("usb: refused: %s; storage=\"%s\" is never written\n",
			       stick_strerror(err), name);
			continue;
		}
		if (stick) {
			printk("usb: not used: storage=\"%s\" holds a trace file too; the first "
			       "stick found is the one written, this one never\n", name);
			continue;
		}
		printk("usb: trace file: partition %u (%s) blocks %llu+%llu, file at %llu, data at "
		       "%llu, %llu blocks of %u, image %s\n", tf->part_index,
		       tf->part_gpt ? "gpt" : "mbr", (unsigned long long)tf->part_start,
		       (unsigned long long)tf->part_blocks, (unsigned long long)tf->file_lba,
		       (unsigned long long)tf->data_lba, (unsigned long long)tf->data_blocks,
		       tf->block_size, tf->hdr.version_str);
		stick = tf;
	}
	if (!stick)
		printk("usb: no stick with a baretrace trace file (%u storage device%s); nothing "
		       "will be written\n", n, n == 1 ? "" : "s");
	return stick;
}

/* The trace file, a staging buffer in *buf and the saves already there; NULL after a line. */
static const struct tracefile *save_place(uint8_t **buf, struct tracesave_scan *sc)
{
	const struct tracefile *tf = usb_trace_file();

	if (!tf) {
		printk("usb: save: no trace file to save into\n");
		return NULL;
	}
	if (!*buf)
		*buf = (uint8_t *)(uintptr_t)pmm_alloc_nowait(STAGE_BYTES / PAGE_SIZE, 1);
	if (!*buf) {
		printk("usb: save: no memory for the staging buffer\n");
		return NULL;
	}
	if (tracesave_scan(tf, block_buf, sc)) {
		printk("usb: save: reading the saves in TRACE.BIN failed; nothing written\n");
		return NULL;
	}
	return tf;
}

struct tracesave *usb_save_begin(uint64_t bytes)
{
	const struct tracefile *tf;
	struct tracesave_scan sc;
	uint64_t need;

	if (stream_open) {
		printk("usb: save: the stream (trace.record=usb) ends at its last checkpoint, "
		       "%llu bytes, for this save\n", (unsigned long long)((stream.lba -
		       stream.mark_lba - 1) * stream.tf->block_size));
		if (!stream.err)
			stream.err = TRACESAVE_EFULL;
		stream_open = false;
	}
	if (!(tf = save_place(&stage, &sc)))
		return NULL;
	need = tracesave_blocks(tf->block_size, bytes);
	if (need > sc.free_blocks) {
		printk("usb: save: TRACE.BIN is full: this save needs %llu blocks, %llu are free "
		       "after %u saves; nothing written\n", (unsigned long long)need,
		       (unsigned long long)sc.free_blocks, sc.saves);
		return NULL;
	}
	tracesave_begin(&save, tf, &sc, stage, STAGE_BYTES);
	return &save;
}

bool usb_save_end(struct tracesave *s, uint32_t dump_id)
{
	int err = tracesave_end(s, dump_id);

	if (err) {
		printk("usb: save: failed (%s) after %llu bytes; no mark written, the save does "
		       "not count\n", err == TRACESAVE_EFULL ? "TRACE.BIN is full" :
		       err == TRACEFILE_EREFUSED ? "a write was refused" :
		       err == TRACESAVE_EEMPTY ? "nothing to save" : "the device failed",
		       (unsigned long long)s->bytes);
		return false;
	}
	printk("usb: saved seq=%u dump_id=%u bytes=%llu lba=%llu blocks=%llu free_blocks=%llu\n",
	       s->seq, dump_id, (unsigned long long)s->bytes, (unsigned long long)s->mark_lba,
	       (unsigned long long)(s->lba - s->mark_lba), (unsigned long long)s->room);
	return true;
}

struct tracesave *usb_stream_begin(uint32_t dump_id, uint64_t min_bytes)
{
	const struct tracefile *tf;
	struct tracesave_scan sc;

	if (stream_open)
		usb_stream_end(&stream, dump_id);
	if (!(tf = save_place(&stream_stage, &sc)))
		return NULL;
	tracesave_begin_stream(&stream, tf, &sc, stream_stage, STAGE_BYTES, dump_id);
	if (tracesave_free_bytes(&stream) < min_bytes) {
		printk("usb: save: TRACE.BIN is full: a stream needs %llu bytes, %llu are free "
		       "after %u saves; nothing written\n", (unsigned long long)min_bytes,
		       (unsigned long long)tracesave_free_bytes(&stream), sc.saves);
		return NULL;
	}
	stream_open = true;
	return &stream;
}

bool usb_stream_end(struct tracesave *s, uint32_t dump_id)
{
	if (s != &stream || !stream_open)
		return false;	/* ended already (a one-off save took over) */
	stream_open = false;
	return usb_save_end(s, dump_id);
}
