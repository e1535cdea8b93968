/*
 * baretrace-usb: the kernel's partition, FAT32 and trace-file code
 * (drivers/block/, the same source) on a disk image.
 *
 *   baretrace-usb header OUT BYTES BUILD_ID_HEX VERSION
 *       write TRACE.BIN's first TRACEFILE_HDR_BYTES for a file of BYTES
 *   baretrace-usb find IMAGE [--block-size N] [--write LBA COUNT]...
 *       find TRACE.BIN as the kernel would; say whether each write may go
 *
 * Lines (docs/output.md): "usb: trace file ..." or "usb: refused: REASON";
 * "write LBA COUNT: allowed|refused".  Exit 0 found, 1 refused, 2 usage or
 * I/O error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <block/stick_err.h>
#include <block/tracefile.h>

struct image {
	FILE *f;
	uint32_t bs;
};

static int image_read(void *ctx, uint64_t lba, uint32_t count, void *buf)
{
	struct image *im = ctx;

	if (fseeko(im->f, (off_t)(lba * im->bs), SEEK_SET))
		return -1;
	return fread(buf, im->bs, count, im->f) == count ? 0 : -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: baretrace-usb header OUT BYTES BUILD_ID_HEX VERSION\n"
			"       baretrace-usb find IMAGE [--block-size N] [--write LBA COUNT]...\n");
	return 2;
}

static int cmd_header(int argc, char **argv)
{
	static uint8_t buf[TRACEFILE_HDR_BYTES];
	struct tracefile_hdr h = { .version = TRACEFILE_VERSION,
				   .data_offset = TRACEFILE_HDR_BYTES };
	const char *hex;
	char *end;
	FILE *f;

	if (argc != 6)
		return usage();
	h.file_bytes = strtoull(argv[3], &end, 0);
	if (*end || h.file_bytes <= TRACEFILE_HDR_BYTES) {
		fprintf(stderr, "baretrace-usb: file size '%s' is not a number above %u\n", argv[3],
			TRACEFILE_HDR_BYTES);
		return 2;
	}
	hex = argv[4];
	if (strlen(hex) != 2 * TRACEFILE_BUILD_ID_LEN) {
		fprintf(stderr, "baretrace-usb: build id '%s' is not %u hex digits\n", hex,
			2 * TRACEFILE_BUILD_ID_LEN);
		return 2;
	}
	for (uint32_t i = 0; i < TRACEFILE_BUILD_ID_LEN; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
			fprintf(stderr, "baretrace-usb: build id '%s' is not hex\n", hex);
			return 2;
		}
		h.build_id[i] = (uint8_t)v;
	}
	snprintf(h.version_str, sizeof(h.version_str), "%s", argv[5]);
	tracefile_hdr_make(buf, &h);
	f = fopen(argv[2], "wb");
	if (!f || fwrite(buf, sizeof(buf), 1, f) != 1 || fclose(f)) {
		fprintf(stderr, "baretrace-usb: cannot write %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	return 0;
}

static int cmd_find(int argc, char **argv)
{
	static struct stick_scratch s;
	struct image im = { .bs = 512 };
	struct blockdev dev = { .read = image_read, .ctx = &im };
	struct tracefile tf;
	int first_write = 0, err;
	off_t size;

	if (argc < 3)
		return usage();
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--block-size") && i + 1 < argc) {
			im.bs = (uint32_t)strtoul(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--write") && i + 2 < argc) {
			if (!first_write)
				first_write = i;
			i += 2;
		} else {
			return usage();
		}
	}
	im.f = fopen(argv[2], "rb");
	if (!im.f || fseeko(im.f, 0, SEEK_END) || (size = ftello(im.f)) < 0) {
		fprintf(stderr, "baretrace-usb: cannot read %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	dev.block_size = im.bs;
	dev.blocks = im.bs ? (uint64_t)size / im.bs : 0;
	err = stick_find(&dev, &s, &tf);
	if (err)
		printf("usb: refused: %s\n", stick_strerror(err));
	else
		printf("usb: trace file: partition %" PRIu32 " (%s) blocks %" PRIu64 "+%" PRIu64
		       ", file at %" PRIu64 ", data at %" PRIu64 ", %" PRIu64 " blocks of %" PRIu32
		       ", image %s\n", tf.part_index, tf.part_gpt ? "gpt" : "mbr", tf.part_start,
		       tf.part_blocks, tf.file_lba, tf.data_lba, tf.data_blocks, tf.block_size,
		       tf.hdr.version_str);
	for (int i = first_write; first_write && i < argc; i++) {
		if (strcmp(argv[i], "--write"))
			continue;
		uint64_t lba = strtoull(argv[i + 1], NULL, 0), n = strtoull(argv[i + 2], NULL, 0);

		printf("write %" PRIu64 " %" PRIu64 ": %s\n", lba, n,
		       tracefile_write_ok(&tf, lba, n) ? "allowed" : "refused");
		i += 2;
	}
	fclose(im.f);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "header"))
		return cmd_header(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "find"))
		return cmd_find(argc, argv);
	return usage();
}
