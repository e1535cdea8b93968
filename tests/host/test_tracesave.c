/*
 * Saves in TRACE.BIN's data area: where each goes, that none is written
 * over, a full file, a save cut short, damaged marks, and the write path's
 * own refusal.  The disk is RAM whose writes are all recorded; the trace
 * file is a verified one built by hand around it (stick_find() itself is
 * test_block's).  Each test names the mutation it catches.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <block/stick_err.h>
#include <block/tracesave.h>

#define DISK	4096u		/* blocks */
#define HDR_LBA	100u		/* the file's header */
#define DATA	(HDR_LBA + 8)	/* its data area: 4096 bytes of header at 512 */
#define NDATA	200u		/* blocks */

struct ram {
	uint32_t bs;		/* block size */
	uint8_t *d;		/* DISK blocks */
	uint64_t writes;	/* write calls that reached the device */
	uint64_t outside;	/* blocks written outside [DATA, DATA + NDATA) */
	int fail_after;		/* writes that succeed before one fails; -1 never */
};

static int ram_read(void *ctx, uint64_t lba, uint32_t n, void *buf)
{
	struct ram *r = ctx;

	if (lba >= DISK || n > DISK - lba)
		return -1;
	memcpy(buf, r->d + lba * r->bs, (size_t)n * r->bs);
	return 0;
}

static int ram_write(void *ctx, const struct tracefile *tf, uint64_t lba, uint32_t n,
		     const void *buf)
{
	struct ram *r = ctx;

	assert_true(tracefile_write_ok(tf, lba, n));	/* the driver's own check */
	r->writes++;
	if (r->fail_after == 0) {
		r->fail_after = -1;	/* one failure, then the device answers again */
		return -1;
	}
	if (r->fail_after > 0)
		r->fail_after--;
	for (uint64_t b = lba; b < lba + n; b++)
		if (b < DATA || b >= DATA + NDATA)
			r->outside++;
	memcpy(r->d + lba * r->bs, buf, (size_t)n * r->bs);
	return 0;
}

static struct ram ram;
static struct blockdev dev;
static struct tracefile tf;
static uint8_t scratch[4096];
static uint8_t stage[3 * 4096];

static void setup_disk(uint32_t bs, uint32_t data_blocks)
{
	ram = (struct ram){ .bs = bs, .d = calloc(DISK, bs), .fail_after = -1 };
	assert_non_null(ram.d);
	dev = (struct blockdev){ .block_size = bs, .blocks = DISK, .read = ram_read,
				 .write = ram_write, .ctx = &ram };
	tf = (struct tracefile){ .verified = TRACEFILE_VERIFIED, .dev = &dev, .block_size = bs,
				 .file_lba = HDR_LBA, .data_lba = DATA,
				 .data_blocks = data_blocks };
}

/* Bytes of save k: a pattern no two saves share, never a whole zero block. */
static uint8_t pat(uint32_t k, uint64_t i)
{
	return (uint8_t)(k * 37 + i * 7 + (i >> 9) + 1);
}

static int save(uint32_t k, uint64_t bytes, struct tracesave_scan *before)
{
	struct tracesave s;
	uint8_t chunk[700];	/* odd size: puts straddle blocks and the staging */

	assert_int_equal(tracesave_scan(&tf, scratch, before), STICK_OK);
	tracesave_begin(&s, &tf, before, stage, sizeof(stage));
	for (uint64_t off = 0; off < bytes; off += sizeof(chunk)) {
		uint64_t n = bytes - off < sizeof(chunk) ? bytes - off : sizeof(chunk);
		for (uint64_t i = 0; i < n; i++)
			chunk[i] = pat(k, off + i);
		tracesave_put(&s, chunk, n);
	}
	return tracesave_end(&s, 100 + k);
}

/* Save k's frames as the disk holds them at lba. */
static void check_frames(uint32_t k, uint64_t lba, uint64_t bytes)
{
	const uint8_t *p = ram.d + lba * ram.bs;
	uint64_t padded = (bytes + ram.bs - 1) / ram.bs * ram.bs;

	for (uint64_t i = 0; i < bytes; i++)
		if (p[i] != pat(k, i))
			fail_msg("save %u byte %llu differs", k, (unsigned long long)i);
	for (uint64_t i = bytes; i < padded; i++)
		assert_int_equal(p[i], 0);
}

/* Mutations caught: the scan not advancing by the mark's blocks (the next
 * save written over the last), the mark not counted, seq not following,
 * the frames written before lba + 1 (over the mark). */
static void saves_follow(uint32_t bs)
{
	static const uint64_t sizes[] = { 1, 5000, 512, 12289 };
	struct tracesave_scan sc;
	uint64_t lba = DATA;
	struct tracesave_mark m;

	setup_disk(bs, NDATA);
	for (uint32_t k = 0; k < 4; k++) {
		assert_int_equal(save(k, sizes[k], &sc), 0);
		assert_int_equal(sc.next_lba, lba);
		assert_int_equal(sc.saves, k);
		assert_int_equal(sc.next_seq, k + 1);
		assert_int_equal(tracesave_mark_parse(ram.d + lba * bs, &m), 0);
		assert_int_equal(m.seq, k + 1);
		assert_int_equal(m.dump_id, 100 + k);
		assert_int_equal(m.bytes, sizes[k]);
		lba += tracesave_blocks(bs, sizes[k]);
	}
	/* Every save still whole after the later ones. */
	lba = DATA;
	for (uint32_t k = 0; k < 4; k++) {
		check_frames(k, lba + 1, sizes[k]);
		lba += tracesave_blocks(bs, sizes[k]);
	}
	assert_int_equal(tracesave_scan(&tf, scratch, &sc), STICK_OK);
	assert_int_equal(sc.saves, 4);
	assert_int_equal(sc.next_lba, lba);
	assert_int_equal(sc.used_bytes, 1 + 5000 + 512 + 12289);
	assert_int_equal(sc.free_blocks, DATA + NDATA - lba);
	assert_int_equal(ram.outside, 0);
	free(ram.d);
}

static void test_saves_follow_512(void **state)
{
	(void)state;
	saves_follow(512);
}

/* At 4096 bytes a block: the staging holds 3 blocks, the mark is a block. */
static void test_saves_follow_4096(void **state)
{
	(void)state;
	saves_follow(4096);
}

/* Mutations caught: the room check in ts_flush dropped (EREFUSED from the
 * write path instead of EFULL), the mark written although the frames did
 * not fit, a full save's frames written over the saves before it. */
static void test_full(void **state)
{
	struct tracesave_scan sc, after;
	uint64_t first = 20 * 512 - 100;	/* 20 blocks of frames + mark */
	uint8_t *before;

	(void)state;
	setup_disk(512, 40);
	assert_int_equal(save(0, first, &sc), 0);
	before = malloc((size_t)DISK * 512);
	memcpy(before, ram.d, (size_t)DISK * 512);
	/* 19 blocks are left: a save of 18 blocks of frames + mark fits, 19 do not. */
	assert_int_equal(save(1, 19 * 512, &sc), TRACESAVE_EFULL);
	assert_int_equal(sc.free_blocks, 19);
	assert_int_equal(tracesave_scan(&tf, scratch, &after), STICK_OK);
	assert_int_equal(after.saves, 1);
	assert_int_equal(after.next_lba, sc.next_lba);
	assert_memory_equal(ram.d, before, (size_t)(DATA + 21) * 512);	/* save 0, mark 1 */
	check_frames(0, DATA + 1, first);
	assert_int_equal(save(1, 18 * 512, &sc), 0);	/* exactly fills */
	assert_int_equal(tracesave_scan(&tf, scratch, &after), STICK_OK);
	assert_int_equal(after.saves, 2);
	assert_int_equal(after.free_blocks, 0);
	assert_int_equal(save(2, 1, &sc), TRACESAVE_EFULL);	/* no block at all */
	assert_int_equal(ram.outside, 0);
	free(before);
	free(ram.d);
}

/* A save cut short (the device fails in the middle) leaves no mark; the
 * next save goes in its place.  Mutations caught: the mark written first
 * (the cut save would count), Z not written (the cut save's stale block
 * after the new one is read as a mark: here a forged one). */
static void test_cut_short(void **state)
{
	struct tracesave_scan sc, after;
	struct tracesave_mark forged = { .seq = 9, .block_size = 512, .blocks = 1, .bytes = 1 };

	(void)state;
	setup_disk(512, NDATA);
	assert_int_equal(save(0, 3000, &sc), 0);
	ram.fail_after = 2;	/* 3 staged flushes + Z + mark: fails in the frames */
	assert_int_equal(save(1, 30000, &sc), TRACEFILE_EIO);
	ram.fail_after = -1;
	/* Something in the cut save's frames looks like a mark. */
	tracesave_mark_make(ram.d + (sc.next_lba + 5) * 512, 512, &forged);
	assert_int_equal(tracesave_scan(&tf, scratch, &after), STICK_OK);
	assert_int_equal(after.saves, 1);
	assert_int_equal(after.next_lba, sc.next_lba);
	assert_int_equal(save(2, 2000, &sc), 0);	/* 4 blocks + mark: Z at +5 */
	assert_int_equal(tracesave_scan(&tf, scratch, &after), STICK_OK);
	assert_int_equal(after.saves, 2);
	assert_int_equal(after.next_lba, sc.next_lba + 5);
	check_frames(0, DATA + 1, 3000);
	check_frames(2, sc.next_lba + 1, 2000);
	free(ram.d);
}

/* Mutations caught: the CRC not checked, a mark whose blocks run past the
 * data area followed (the next save's place outside the file), a mark of
 * another block size taken. */
static void test_bad_marks(void **state)
{
	struct tracesave_scan sc;
	struct tracesave_mark m = { .seq = 1, .block_size = 512, .blocks = NDATA,
				    .bytes = NDATA * 512 };
	uint8_t *b;

	(void)state;
	setup_disk(512, NDATA);
	b = ram.d + DATA * 512;
	tracesave_mark_make(b, 512, &m);	/* one block too many */
	assert_int_equal(tracesave_scan(&tf, scratch, &sc), STICK_OK);
	assert_int_equal(sc.saves, 0);
	assert_int_equal(sc.next_lba, DATA);
	m.blocks = NDATA - 1;
	m.bytes = m.blocks * 512;
	tracesave_mark_make(b, 512, &m);	/* exactly fits */
	assert_int_equal(tracesave_scan(&tf, scratch, &sc), STICK_OK);
	assert_int_equal(sc.saves, 1);
	assert_int_equal(sc.free_blocks, 0);
	b[TSM_SEQ] ^= 1;			/* CRC now wrong */
	assert_int_equal(tracesave_scan(&tf, scratch, &sc), STICK_OK);
	assert_int_equal(sc.saves, 0);
	m.block_size = 4096;
	m.blocks = 2;
	m.bytes = 8000;
	tracesave_mark_make(b, 512, &m);
	assert_int_equal(tracesave_scan(&tf, scratch, &sc), STICK_OK);
	assert_int_equal(sc.saves, 0);
	m.block_size = 512;
	m.bytes = 512;				/* 2 blocks holding 1 block of bytes */
	tracesave_mark_make(b, 512, &m);
	assert_int_equal(tracesave_scan(&tf, scratch, &sc), STICK_OK);
	assert_int_equal(sc.saves, 0);
	free(ram.d);
}

/* The one write path.  Mutations caught: tracefile_write() not asking
 * tracefile_write_ok() (the header, the block before and after the area
 * reach the device), or asking with another count. */
static void test_write_refused(void **state)
{
	uint8_t b[2 * 512] = { 1 };

	(void)state;
	setup_disk(512, NDATA);
	assert_int_equal(tracefile_write(&tf, HDR_LBA, 1, b), TRACEFILE_EREFUSED);
	assert_int_equal(tracefile_write(&tf, DATA - 1, 1, b), TRACEFILE_EREFUSED);
	assert_int_equal(tracefile_write(&tf, DATA - 1, 2, b), TRACEFILE_EREFUSED);
	assert_int_equal(tracefile_write(&tf, DATA + NDATA, 1, b), TRACEFILE_EREFUSED);
	assert_int_equal(tracefile_write(&tf, DATA + NDATA - 1, 2, b), TRACEFILE_EREFUSED);
	assert_int_equal(tracefile_write(&tf, DATA, 0, b), TRACEFILE_EREFUSED);
	assert_int_equal(ram.writes, 0);
	assert_int_equal(tracefile_write(&tf, DATA + NDATA - 2, 2, b), 0);
	assert_int_equal(ram.writes, 1);
	tf.verified = 0;
	assert_int_equal(tracefile_write(&tf, DATA, 1, b), TRACEFILE_EREFUSED);
	assert_int_equal(ram.writes, 1);
	tf.verified = TRACEFILE_VERIFIED;
	dev.write = NULL;
	assert_int_equal(tracefile_write(&tf, DATA, 1, b), TRACEFILE_EREFUSED);
	assert_int_equal(ram.outside, 0);
	free(ram.d);
}

/* Stale marks in every block from lba on: what a save must not be taken for. */
static void forge_marks(uint64_t lba)
{
	struct tracesave_mark forged = { .seq = 50, .block_size = 512, .blocks = 1, .bytes = 1 };

	for (uint64_t b = lba; b + 1 < DATA + NDATA; b++)
		tracesave_mark_make(ram.d + b * 512, 512, &forged);
}

/* The mark after a scan found exactly saves saves, the last one at lba. */
static void last_save(uint32_t saves, uint64_t lba, struct tracesave_mark *m)
{
	struct tracesave_scan sc;

	assert_int_equal(tracesave_scan(&tf, scratch, &sc), STICK_OK);
	assert_int_equal(sc.saves, saves);
	assert_int_equal(tracesave_mark_parse(ram.d + lba * 512, m), 0);
	assert_int_equal(sc.next_lba, lba + 1 + m->blocks);
}

/* A streaming save: a checkpoint after each flush, a cut stream kept up to
 * its last one, the next save after it, an end with the exact count.
 * Mutations caught: no checkpoint (the stream is no save until its end),
 * no Z in the flush's write (the stale mark after a checkpoint counts as a
 * save), the stream's staging not keeping Z's block (the frames run into
 * Z), tracesave_free_bytes() larger than what tracesave_end() can write. */
static void test_stream(void **state)
{
	uint32_t cap = (sizeof(stage) / 512 - 1) * 512;	/* a stream's staged bytes */
	uint8_t chunk[700];
	struct tracesave_scan sc;
	struct tracesave_mark m;
	struct tracesave s;
	uint64_t at, put = 0;

	(void)state;
	setup_disk(512, NDATA);
	assert_int_equal(save(0, 3000, &sc), 0);
	at = DATA + tracesave_blocks(512, 3000);
	forge_marks(at + 1);		/* stale, behind the Z of save 0 */
	assert_int_equal(tracesave_scan(&tf, scratch, &sc), STICK_OK);
	tracesave_begin_stream(&s, &tf, &sc, stage, sizeof(stage), 7);
	while (put < 2 * cap + 100) {
		for (uint32_t i = 0; i < sizeof(chunk); i++)
			chunk[i] = pat(1, put + i);
		tracesave_put(&s, chunk, sizeof(chunk));
		put += sizeof(chunk);
	}
	assert_int_equal(s.err, 0);
	last_save(2, at, &m);				/* two checkpoints */
	assert_int_equal(m.seq, 2);
	assert_int_equal(m.dump_id, 7);
	assert_int_equal(m.blocks, 2 * cap / 512);
	assert_int_equal(m.bytes, 2 * cap);
	check_frames(1, at + 1, 2 * cap);
	/* Cut: the device fails in the next flush; the last checkpoint stands. */
	ram.fail_after = 0;
	for (uint32_t i = 0; i < cap / sizeof(chunk) + 1; i++)
		tracesave_put(&s, chunk, sizeof(chunk));
	assert_int_equal(s.err, TRACEFILE_EIO);
	assert_int_equal(tracesave_free_bytes(&s), 0);
	last_save(2, at, &m);
	assert_int_equal(m.blocks, 2 * cap / 512);
	/* The next save goes after it; a stream that ends gets its exact count. */
	assert_int_equal(save(2, 1000, &sc), 0);
	assert_int_equal(sc.next_lba, at + 1 + m.blocks);
	at = sc.next_lba + tracesave_blocks(512, 1000);
	assert_int_equal(tracesave_scan(&tf, scratch, &sc), STICK_OK);
	tracesave_begin_stream(&s, &tf, &sc, stage, sizeof(stage), 8);
	tracesave_put(&s, chunk, 5);
	assert_int_equal(tracesave_end(&s, 8), 0);
	last_save(4, at, &m);
	assert_int_equal(m.bytes, 5);
	assert_int_equal(m.blocks, 1);
	/* Filled to its last free byte, it still ends. */
	assert_int_equal(tracesave_scan(&tf, scratch, &sc), STICK_OK);
	tracesave_begin_stream(&s, &tf, &sc, stage, sizeof(stage), 9);
	assert_int_equal(tracesave_free_bytes(&s), (sc.free_blocks - 1) * 512);
	while (tracesave_free_bytes(&s)) {
		uint64_t n = tracesave_free_bytes(&s);
		tracesave_put(&s, chunk, n < sizeof(chunk) ? n : sizeof(chunk));
	}
	assert_int_equal(tracesave_end(&s, 9), 0);
	assert_int_equal(tracesave_scan(&tf, scratch, &sc), STICK_OK);
	assert_int_equal(sc.saves, 5);
	assert_int_equal(sc.free_blocks, 0);
	assert_int_equal(ram.outside, 0);
	free(ram.d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_saves_follow_512),
		cmocka_unit_test(test_saves_follow_4096),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_cut_short),
		cmocka_unit_test(test_bad_marks),
		cmocka_unit_test(test_write_refused),
		cmocka_unit_test(test_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
