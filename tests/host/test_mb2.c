/*
 * Host tests of the Multiboot2 parser (kernel/mb2.c), built from the
 * kernel's own source under ASan and UBSan.
 *
 * Blocks are built in memory the way the loaders lay them out (GRUB under
 * SeaBIOS: cmdline, loader, basic meminfo, bootdev, E820 memory map, the
 * ACPI 1.0 RSDP tag; GRUB under OVMF adds the ACPI 2.0 tag, EFI64 system
 * table, the EFI memory map and other EFI tags), then handed to mb2_parse()
 * in a heap buffer of exactly total_size bytes, so any read past the block
 * is an ASan report.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/bootinfo.h"

/* Tag types (Multiboot2 specification 3.6). */
#define T_END		0
#define T_CMDLINE	1
#define T_LOADER	2
#define T_MODULE	3
#define T_MEMINFO	4
#define T_BOOTDEV	5
#define T_MMAP		6
#define T_FRAMEBUFFER	8
#define T_EFI64		12
#define T_ACPI_OLD	14
#define T_ACPI_NEW	15
#define T_EFI_MMAP	17
#define T_EFI_BS	18
#define T_EFI64_IH	20
#define T_LOAD_BASE	21

#define BUILD_MAX	(64 * 1024)
#define EFI_DESC_SIZE	48

/* ---- block builder ---------------------------------------------------------- */

struct mbi {
	uint8_t buf[BUILD_MAX];	/* the block being built */
	uint32_t len;		/* bytes used, always 8-aligned between tags */
};

static struct mbi mb;
static struct boot_info bi;

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static void mb_init(void)
{
	memset(mb.buf, 0, sizeof(mb.buf));
	mb.len = 8;
}

/* Append a tag of payload_len bytes; returns the payload to fill in. */
static uint8_t *mb_tag(uint32_t type, uint32_t payload_len)
{
	uint8_t *t = mb.buf + mb.len;

	assert_true(mb.len + 8 + payload_len + 8 <= BUILD_MAX);
	put32(t, type);
	put32(t + 4, 8 + payload_len);
	mb.len = (mb.len + 8 + payload_len + 7) & ~7u;
	return t + 8;
}

static void mb_string(uint32_t type, const char *s)
{
	size_t n = strlen(s) + 1;

	memcpy(mb_tag(type, n), s, n);
}

struct e820 {
	uint64_t base, len;
	uint32_t type;
};

static void mb_mmap(const struct e820 *e, unsigned n, uint32_t esize)
{
	uint8_t *p = mb_tag(T_MMAP, 8 + n * esize);

	put32(p, esize);
	put32(p + 4, 0);	/* entry_version */
	for (unsigned i = 0; i < n; i++) {
		uint8_t *q = p + 8 + i * esize;
		put64(q, e[i].base);
		put64(q + 8, e[i].len);
		put32(q + 16, e[i].type);
		put32(q + 20, 0);
	}
}

/* A checksummed RSDP, revision 0 (20 bytes) or 2 (36 bytes). */
static void make_rsdp(uint8_t *r, bool v2, uint32_t rsdt, uint64_t xsdt)
{
	uint8_t sum = 0;

	memset(r, 0, v2 ? 36 : 20);
	memcpy(r, "RSD PTR ", 8);
	memcpy(r + 9, v2 ? "OVMFOE" : "BOCHS ", 6);
	r[15] = v2 ? 2 : 0;
	put32(r + 16, rsdt);
	for (int i = 0; i < 20; i++)
		sum += r[i];
	r[8] = -sum;
	if (v2) {
		put32(r + 20, 36);
		put64(r + 24, xsdt);
		sum = 0;
		for (int i = 0; i < 36; i++)
			sum += r[i];
		r[32] = -sum;
	}
}

static void mb_acpi(bool v2)
{
	make_rsdp(mb_tag(v2 ? T_ACPI_NEW : T_ACPI_OLD, v2 ? 36 : 20), v2,
		  0x7fe0000 + v2, 0x7fe1000);
}

struct efi_desc {
	uint32_t type;
	uint64_t phys, pages;
};

static void mb_efi_mmap(const struct efi_desc *d, unsigned n, uint32_t dsize)
{
	uint8_t *p = mb_tag(T_EFI_MMAP, 8 + n * dsize);

	put32(p, dsize);
	put32(p + 4, 1);	/* descriptor version */
	for (unsigned i = 0; i < n; i++) {
		uint8_t *q = p + 8 + i * dsize;
		memset(q, 0, dsize);
		put32(q, d[i].type);
		put64(q + 8, d[i].phys);
		put64(q + 16, 0);		/* virtual start */
		put64(q + 24, d[i].pages);
		put64(q + 32, 0xf);		/* attributes */
	}
}

/* End tag and total_size; returns a heap copy of exactly the block. */
static uint8_t *mb_finish_noend(void)
{
	uint8_t *copy;

	put32(mb.buf, mb.len);
	copy = malloc(mb.len);
	assert_non_null(copy);
	memcpy(copy, mb.buf, mb.len);
	return copy;
}

static uint8_t *mb_finish(void)
{
	mb_tag(T_END, 0);
	return mb_finish_noend();
}

/* Parse a heap block and free it; returns the error (a static string). */
static const char *parse_block(uint8_t *block)
{
	const char *err = mb2_parse(block, &bi);

	if (!err) {
		assert_int_equal(bi.mbi.start, (uintptr_t)block);
		assert_int_equal(bi.mbi.end - bi.mbi.start, get32(block));
	}
	free(block);
	return err;
}

static void expect_error(uint8_t *block, const char *fragment)
{
	const char *err = parse_block(block);

	if (!err)
		fail_msg("malformed block accepted (want an error with \"%s\")", fragment);
	if (!strstr(err, fragment))
		fail_msg("error \"%s\" lacks \"%s\"", err, fragment);
}

/* ---- the two firmware shapes ------------------------------------------------- */

static const struct e820 seabios_map[] = {
	{ 0x0, 0x9fc00, 1 },
	{ 0x9fc00, 0x400, 2 },
	{ 0xf0000, 0x10000, 2 },
	{ 0x100000, 0x7ee0000, 1 },
	{ 0x7fe0000, 0x20000, 2 },
	{ 0xfeffc000, 0x4000, 2 },
	{ 0xfffc0000, 0x40000, 2 },
	{ 0x100000000ull, 0x40000000ull, 1 },
};
#define SEABIOS_N	(sizeof(seabios_map) / sizeof(seabios_map[0]))

static void build_seabios(void)
{
	uint8_t *p;

	mb_init();
	mb_string(T_CMDLINE, "console=ttyS0 ktest=all");
	mb_string(T_LOADER, "GRUB 2.06-13+deb12u1");
	p = mb_tag(T_MEMINFO, 8);
	put32(p, 639);
	put32(p + 4, 130048);
	p = mb_tag(T_BOOTDEV, 12);
	put32(p, 0xe0);
	put32(p + 4, 0xffffffff);
	put32(p + 8, 0xffffffff);
	mb_mmap(seabios_map, SEABIOS_N, 24);
	mb_acpi(false);
}

static void check_seabios_map(void)
{
	assert_int_equal(bi.mmap_count, SEABIOS_N);
	for (unsigned i = 0; i < SEABIOS_N; i++) {
		assert_int_equal(bi.mmap[i].base, seabios_map[i].base);
		assert_int_equal(bi.mmap[i].len, seabios_map[i].len);
		assert_int_equal(bi.mmap[i].type, seabios_map[i].type);
	}
	assert_false(bi.mmap_truncated);
}

static void test_seabios_block(void **state)
{
	uint8_t want_rsdp[20];

	(void)state;
	build_seabios();
	assert_null(parse_block(mb_finish()));

	assert_string_equal(bi.cmdline, "console=ttyS0 ktest=all");
	assert_false(bi.cmdline_truncated);
	assert_string_equal(bi.loader, "GRUB 2.06-13+deb12u1");
	check_seabios_map();
	make_rsdp(want_rsdp, false, 0x7fe0000, 0);
	assert_int_equal(bi.rsdp_len, 20);
	assert_memory_equal(bi.rsdp, want_rsdp, 20);
	assert_true(bi.rsdp_old_tag);
	assert_false(bi.rsdp_new_tag);
	assert_false(bi.efi);
	assert_int_equal(bi.efi_systab, 0);
	assert_int_equal(bi.efi_mmap_count, 0);
	assert_false(bi.has_fb);
	assert_int_equal(bi.module_count, 0);
	assert_int_equal(bi.unknown_tags, 2);	/* meminfo, bootdev */
}

static const struct efi_desc ovmf_efi[] = {
	{ 3, 0x0, 1 },			/* boot services code */
	{ 7, 0x1000, 0x9f },		/* conventional */
	{ 7, 0x100000, 0x700 },		/* conventional */
	{ 10, 0x800000, 8 },		/* ACPI NVS */
	{ 7, 0x808000, 0x7f7f8 },	/* conventional, ~2 GiB */
	{ 6, 0xff000000, 0x1000 },	/* runtime services data */
};
#define OVMF_EFI_N	(sizeof(ovmf_efi) / sizeof(ovmf_efi[0]))

static void build_ovmf(void)
{
	uint8_t *p;

	mb_init();
	mb_string(T_CMDLINE, "console=ttyS0,115200 run=bench exit");
	mb_string(T_LOADER, "GRUB 2.12");
	mb_mmap(seabios_map, SEABIOS_N, 24);
	p = mb_tag(T_FRAMEBUFFER, 24);
	put64(p, 0x80000000ull);
	put32(p + 8, 1280 * 4);
	put32(p + 12, 1280);
	put32(p + 16, 800);
	p[20] = 32;
	p[21] = 1;
	p = mb_tag(T_EFI64, 8);
	put64(p, 0x7f9ee018ull);
	mb_acpi(false);
	mb_acpi(true);
	mb_efi_mmap(ovmf_efi, OVMF_EFI_N, EFI_DESC_SIZE);
	mb_tag(T_EFI_BS, 0);
	p = mb_tag(T_EFI64_IH, 8);
	put64(p, 0x7e4f0a18ull);
	p = mb_tag(T_LOAD_BASE, 4);
	put32(p, 0x200000);
}

static void test_ovmf_block(void **state)
{
	uint8_t want_rsdp[36];
	uint64_t conv = 0;

	(void)state;
	build_ovmf();
	assert_null(parse_block(mb_finish()));

	assert_string_equal(bi.cmdline, "console=ttyS0,115200 run=bench exit");
	assert_string_equal(bi.loader, "GRUB 2.12");
	check_seabios_map();
	assert_true(bi.has_fb);
	assert_int_equal(bi.fb.addr, 0x80000000ull);
	assert_int_equal(bi.fb.pitch, 1280 * 4);
	assert_int_equal(bi.fb.width, 1280);
	assert_int_equal(bi.fb.height, 800);
	assert_int_equal(bi.fb.bpp, 32);
	assert_int_equal(bi.fb.type, 1);
	assert_true(bi.efi);
	assert_int_equal(bi.efi_systab, 0x7f9ee018ull);
	/* Both ACPI tags: the 2.0 copy (with the XSDT) is kept. */
	make_rsdp(want_rsdp, true, 0x7fe0001, 0x7fe1000);
	assert_true(bi.rsdp_old_tag);
	assert_true(bi.rsdp_new_tag);
	assert_int_equal(bi.rsdp_len, 36);
	assert_memory_equal(bi.rsdp, want_rsdp, 36);
	assert_int_equal(bi.efi_mmap_count, OVMF_EFI_N);
	for (unsigned i = 0; i < OVMF_EFI_N; i++)
		if (ovmf_efi[i].type == 7)
			conv += ovmf_efi[i].pages * 4096;
	assert_int_equal(bi.efi_conventional_bytes, conv);
	assert_int_equal(bi.unknown_tags, 3);	/* EFI BS, image handle, load base */
}

/* The 2.0 copy wins whichever order the tags come in. */
static void test_acpi_tag_order(void **state)
{
	uint8_t want_rsdp[36];

	(void)state;
	make_rsdp(want_rsdp, true, 0x7fe0001, 0x7fe1000);
	mb_init();
	mb_acpi(true);
	mb_acpi(false);
	assert_null(parse_block(mb_finish()));
	assert_int_equal(bi.rsdp_len, 36);
	assert_memory_equal(bi.rsdp, want_rsdp, 36);
	assert_true(bi.rsdp_old_tag && bi.rsdp_new_tag);

	/* Only the 2.0 tag. */
	mb_init();
	mb_acpi(true);
	assert_null(parse_block(mb_finish()));
	assert_int_equal(bi.rsdp_len, 36);
	assert_false(bi.rsdp_old_tag);
	assert_true(bi.rsdp_new_tag);

	/* A longer-than-36 RSDP tag (some loaders pad it): 36 bytes kept. */
	mb_init();
	make_rsdp(mb_tag(T_ACPI_NEW, 40), true, 0x7fe0001, 0x7fe1000);
	assert_null(parse_block(mb_finish()));
	assert_int_equal(bi.rsdp_len, 36);
	assert_memory_equal(bi.rsdp, want_rsdp, 36);

	/* No ACPI tag at all. */
	mb_init();
	mb_string(T_CMDLINE, "x");
	assert_null(parse_block(mb_finish()));
	assert_int_equal(bi.rsdp_len, 0);
	assert_false(bi.rsdp_old_tag || bi.rsdp_new_tag);
}

static void test_modules(void **state)
{
	uint8_t *p;

	(void)state;
	mb_init();
	for (uint32_t i = 0; i < BOOT_MODULES_MAX + 2; i++) {
		p = mb_tag(T_MODULE, 8 + 6);
		put32(p, 0x1000000 + i * 0x10000);
		put32(p + 4, 0x1000000 + i * 0x10000 + 0x1234);
		memcpy(p + 8, "mod.x", 6);
	}
	assert_null(parse_block(mb_finish()));
	assert_int_equal(bi.module_count, BOOT_MODULES_MAX);	/* the rest are dropped */
	for (uint32_t i = 0; i < BOOT_MODULES_MAX; i++) {
		assert_int_equal(bi.modules[i].start, 0x1000000 + i * 0x10000);
		assert_int_equal(bi.modules[i].end, 0x1000000 + i * 0x10000 + 0x1234);
	}

	mb_init();
	mb_tag(T_MODULE, 4);
	expect_error(mb_finish(), "module tag too short");
}

/* Empty block: just the end tag. */
static void test_minimal_block(void **state)
{
	(void)state;
	mb_init();
	assert_null(parse_block(mb_finish()));
	assert_int_equal(bi.cmdline[0], '\0');
	assert_int_equal(bi.loader[0], '\0');
	assert_int_equal(bi.mmap_count, 0);
	assert_int_equal(bi.unknown_tags, 0);

	assert_non_null(mb2_parse(NULL, &bi));
}

static void test_cmdline_truncated(void **state)
{
	char longline[3000];

	(void)state;
	memset(longline, 'c', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	mb_init();
	mb_string(T_CMDLINE, longline);
	mb_mmap(seabios_map, SEABIOS_N, 24);
	assert_null(parse_block(mb_finish()));
	assert_true(bi.cmdline_truncated);
	assert_int_equal(strlen(bi.cmdline), BOOT_CMDLINE_MAX - 1);
	assert_memory_equal(bi.cmdline, longline, BOOT_CMDLINE_MAX - 1);
	check_seabios_map();		/* later tags still parsed */

	/* Exactly BOOT_CMDLINE_MAX - 1 characters fit without the flag. */
	longline[BOOT_CMDLINE_MAX - 1] = '\0';
	mb_init();
	mb_string(T_CMDLINE, longline);
	assert_null(parse_block(mb_finish()));
	assert_false(bi.cmdline_truncated);
	assert_string_equal(bi.cmdline, longline);

	/* Loader names are cut to fit, silently. */
	mb_init();
	mb_string(T_LOADER, longline);
	assert_null(parse_block(mb_finish()));
	assert_int_equal(strlen(bi.loader), sizeof(bi.loader) - 1);

	/* No NUL inside the tag: the copy stops at the tag's end. */
	mb_init();
	memcpy(mb_tag(T_CMDLINE, 5), "abcde", 5);
	mb.buf[mb.len - 3] = 'Z';	/* padding after the tag is not read */
	assert_null(parse_block(mb_finish()));
	assert_string_equal(bi.cmdline, "abcde");
}

static void test_mmap_truncated(void **state)
{
	static struct e820 many[BOOT_MMAP_MAX + 40];

	(void)state;
	for (unsigned i = 0; i < BOOT_MMAP_MAX + 40; i++)
		many[i] = (struct e820){ 0x100000ull * i, 0x1000, 1 + i % 5 };
	mb_init();
	mb_mmap(many, BOOT_MMAP_MAX + 40, 24);
	mb_string(T_CMDLINE, "after");
	assert_null(parse_block(mb_finish()));
	assert_true(bi.mmap_truncated);
	assert_int_equal(bi.mmap_count, BOOT_MMAP_MAX);
	for (unsigned i = 0; i < BOOT_MMAP_MAX; i++) {
		assert_int_equal(bi.mmap[i].base, many[i].base);
		assert_int_equal(bi.mmap[i].type, many[i].type);
	}
	assert_string_equal(bi.cmdline, "after");

	/* Exactly BOOT_MMAP_MAX entries is not truncation. */
	mb_init();
	mb_mmap(many, BOOT_MMAP_MAX, 24);
	assert_null(parse_block(mb_finish()));
	assert_false(bi.mmap_truncated);
	assert_int_equal(bi.mmap_count, BOOT_MMAP_MAX);

	/* Larger entries (a newer spec version) are stepped over by entry_size. */
	mb_init();
	mb_mmap(seabios_map, SEABIOS_N, 32);
	assert_null(parse_block(mb_finish()));
	check_seabios_map();

	/* Two mmap tags: entries accumulate. */
	mb_init();
	mb_mmap(seabios_map, 3, 24);
	mb_mmap(seabios_map + 3, SEABIOS_N - 3, 24);
	assert_null(parse_block(mb_finish()));
	check_seabios_map();
}

static void test_bad_total_size(void **state)
{
	uint8_t *b;

	(void)state;
	for (uint32_t total = 0; total < 16; total += 4) {
		b = malloc(total < 4 ? 4 : total);
		memset(b, 0, total < 4 ? 4 : total);
		put32(b, total);
		expect_error(b, "total_size");
	}
	/* Implausibly large (more than 1 MiB): refused before any read. */
	b = calloc(1, 16);
	put32(b, 0x80000000u);
	expect_error(b, "total_size");
	b = calloc(1, 16);
	put32(b, 0xffffffffu);
	expect_error(b, "total_size");
}

static void test_bad_tag_sizes(void **state)
{
	uint8_t *p;

	(void)state;
	/* Tag size < 8, after a good cmdline tag. */
	for (uint32_t bad = 0; bad < 8; bad++) {
		mb_init();
		mb_string(T_CMDLINE, "kept");
		p = mb_tag(T_LOADER, 8);
		put32(p - 4, bad);
		expect_error(mb_finish(), "tag size");
		assert_string_equal(bi.cmdline, "kept");
		assert_int_equal(bi.loader[0], '\0');
	}

	/* A tag running past total_size, by one byte and by far. */
	static const uint32_t over[] = { 1, 8, 4096, 0x7fffffff, 0xffff0000 };
	for (unsigned i = 0; i < sizeof(over) / sizeof(over[0]); i++) {
		mb_init();
		mb_string(T_CMDLINE, "kept");
		p = mb_tag(T_LOADER, 8);
		mb_tag(T_END, 0);
		put32(p - 4, (mb.len - (uint32_t)(p - 8 - mb.buf)) + over[i]);
		expect_error(mb_finish_noend(), "tag size");
		assert_string_equal(bi.cmdline, "kept");
	}

	/* The end tag itself claims more than is there. */
	mb_init();
	mb_string(T_CMDLINE, "kept");
	p = mb_tag(T_END, 0);
	put32(p - 4, 16);
	expect_error(mb_finish_noend(), "tag size");
	assert_string_equal(bi.cmdline, "kept");
}

static void test_missing_end_tag(void **state)
{
	(void)state;
	mb_init();
	mb_string(T_CMDLINE, "kept");
	mb_mmap(seabios_map, SEABIOS_N, 24);
	expect_error(mb_finish_noend(), "end tag");
	assert_string_equal(bi.cmdline, "kept");
	check_seabios_map();

	/* total_size stops in the middle of the last tag's header. */
	mb_init();
	mb_string(T_CMDLINE, "kept");
	mb.len += 4;
	expect_error(mb_finish_noend(), "end tag");
	assert_string_equal(bi.cmdline, "kept");

	/* Tags after the end tag are not looked at. */
	mb_init();
	mb_string(T_CMDLINE, "before");
	mb_tag(T_END, 0);
	mb_string(T_LOADER, "after");
	assert_null(parse_block(mb_finish()));
	assert_string_equal(bi.cmdline, "before");
	assert_int_equal(bi.loader[0], '\0');
}

static void test_bad_mmap(void **state)
{
	static const uint32_t bad_esize[] = { 0, 8, 16, 20, 23, 28, 36 };
	uint8_t *p;

	(void)state;
	for (unsigned i = 0; i < sizeof(bad_esize) / sizeof(bad_esize[0]); i++) {
		mb_init();
		mb_string(T_CMDLINE, "kept");
		mb_mmap(seabios_map, SEABIOS_N, 24);
		p = mb.buf + mb.len;
		mb_mmap(seabios_map, 2, 24);
		put32(p + 8, bad_esize[i]);
		expect_error(mb_finish(), "entry size");
		assert_string_equal(bi.cmdline, "kept");
		check_seabios_map();	/* the first, good map is kept */
	}

	/*
	 * An entry size so large that offset + entry_size wraps around 2^32
	 * must stop the walk, not read an entry past the tag.
	 */
	static const uint32_t huge[] = { 0xfffffff0u, 0xfffffff8u, 0x80000000u };
	for (unsigned i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		mb_init();
		p = mb_tag(T_MMAP, 8);		/* header only, no entries */
		put32(p, huge[i]);
		const char *err = parse_block(mb_finish());
		assert_null(err);
		assert_int_equal(bi.mmap_count, 0);
	}

	/* A tag too short to hold even the entry header. */
	mb_init();
	mb_tag(T_MMAP, 4);
	expect_error(mb_finish(), "memory map tag too short");

	/* A partial trailing entry is not read. */
	mb_init();
	p = mb_tag(T_MMAP, 8 + 24 + 16);
	put32(p, 24);
	put64(p + 8, 0x100000);
	put64(p + 16, 0x1000);
	put32(p + 24, 1);
	assert_null(parse_block(mb_finish()));
	assert_int_equal(bi.mmap_count, 1);
}

static void test_bad_efi_mmap(void **state)
{
	uint8_t *p;

	(void)state;
	mb_init();
	mb_efi_mmap(ovmf_efi, OVMF_EFI_N, 32);	/* smaller than a descriptor */
	expect_error(mb_finish(), "descriptor size");

	mb_init();
	mb_tag(T_EFI_MMAP, 4);
	expect_error(mb_finish(), "EFI memory map tag too short");

	/* Larger descriptors (firmware pads them) are stepped over. */
	mb_init();
	mb_efi_mmap(ovmf_efi, OVMF_EFI_N, 56);
	assert_null(parse_block(mb_finish()));
	assert_int_equal(bi.efi_mmap_count, OVMF_EFI_N);

	/* A wrapping descriptor size must not walk past the tag. */
	static const uint32_t huge[] = { 0xfffffff0u, 0xffffffffu, 0xfffffff8u };
	for (unsigned i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		mb_init();
		p = mb_tag(T_EFI_MMAP, 8);
		put32(p, huge[i]);
		assert_null(parse_block(mb_finish()));
		assert_int_equal(bi.efi_mmap_count, 0);
	}
}

static void test_short_tags(void **state)
{
	static const struct { uint32_t type, payload; const char *err; } cases[] = {
		{ T_FRAMEBUFFER, 21, "framebuffer tag too short" },
		{ T_EFI64, 4, "EFI64 tag too short" },
		{ T_ACPI_OLD, 19, "ACPI RSDP tag too short" },
		{ T_ACPI_NEW, 0, "ACPI RSDP tag too short" },
		{ T_MODULE, 7, "module tag too short" },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mb_init();
		mb_string(T_CMDLINE, "kept");
		mb_tag(cases[i].type, cases[i].payload);
		expect_error(mb_finish(), cases[i].err);
		assert_string_equal(bi.cmdline, "kept");
	}
}

/* ---- fuzz ----------------------------------------------------------------------- */

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/*
 * Random damage to a valid OVMF-shaped block, 20000 times: mb2_parse must
 * never read outside the block (ASan), never overflow (UBSan), and always
 * leave a boot_info that respects its own bounds. total_size may be damaged
 * too, but the buffer handed over always has exactly total_size bytes: the
 * parser has no other way to know the block's extent.
 */
static void test_fuzz(void **state)
{
	static const uint32_t interesting[] = {
		0, 1, 7, 8, 9, 15, 16, 20, 23, 24, 36, 40, 48, 0x7fffffff, 0x80000000,
		0xfffffff0, 0xfffffff8, 0xffffffff, 0x100000, 0x100001,
	};
	uint8_t orig[4096];
	uint32_t orig_len, tags[64], ntags = 0;
	unsigned errors = 0, clean = 0;

	(void)state;
	build_ovmf();
	mb_tag(T_END, 0);
	put32(mb.buf, mb.len);
	orig_len = mb.len;
	assert_true(orig_len <= sizeof(orig));
	memcpy(orig, mb.buf, orig_len);
	/* Tag offsets, to aim some damage at headers and the first fields. */
	for (uint32_t off = 8; off < orig_len && ntags < 64;
	     off = (off + get32(orig + off + 4) + 7) & ~7u)
		tags[ntags++] = off;
	assert_true(ntags > 10);

	for (int iter = 0; iter < 20000; iter++) {
		uint8_t work[4096 + 64];
		uint32_t len = orig_len, total;
		int nmut = 1 + rng() % 4;

		memcpy(work, orig, orig_len);
		memset(work + orig_len, 0, sizeof(work) - orig_len);
		for (int m = 0; m < nmut; m++) {
			uint32_t at = rng() % len;
			switch (rng() % 6) {
			case 0:		/* flip a bit */
				work[at] ^= 1u << (rng() % 8);
				break;
			case 1:		/* random byte */
				work[at] = rng();
				break;
			case 2:		/* interesting u32 at a 4-aligned offset */
				at &= ~3u;
				if (at + 4 <= len)
					put32(work + at, interesting[rng() % 20]);
				break;
			case 3:		/* shorten or lengthen the block */
				len = 16 + rng() % (orig_len + 48);
				put32(work, len);
				break;
			case 4:		/* small delta on a u32 (sizes, counts) */
				at &= ~3u;
				if (at + 4 <= len)
					put32(work + at, get32(work + at) + (uint32_t)(rng() % 17) - 8);
				break;
			case 5:		/* interesting u32 in a tag's size or first fields */
				at = tags[rng() % ntags] + 4 * (1 + rng() % 3);
				if (at + 4 <= len)
					put32(work + at, interesting[rng() % 20]);
				break;
			}
		}
		total = get32(work);
		/* Hand over exactly total_size bytes (if plausible). */
		size_t alloc = total >= 16 && total <= sizeof(work) ? total : 16;
		uint8_t *b = malloc(alloc);
		assert_non_null(b);
		memcpy(b, work, alloc);
		if (alloc != total && total >= 16 && total <= (1u << 20))
			put32(b, alloc);	/* would claim memory we do not own */

		const char *err = mb2_parse(b, &bi);
		if (err)
			errors++;
		else
			clean++;
		assert_true(bi.mmap_count <= BOOT_MMAP_MAX);
		assert_true(bi.module_count <= BOOT_MODULES_MAX);
		assert_true(memchr(bi.cmdline, 0, sizeof(bi.cmdline)) != NULL);
		assert_true(memchr(bi.loader, 0, sizeof(bi.loader)) != NULL);
		assert_true(bi.rsdp_len == 0 || (bi.rsdp_len >= 20 && bi.rsdp_len <= 36));
		/* Each entry counted used up its own bytes of the block. */
		assert_true((uint64_t)bi.mmap_count * 24 <= alloc);
		assert_true((uint64_t)bi.efi_mmap_count * 40 <= alloc);
		free(b);
	}
	/* The mutations must exercise both outcomes. */
	assert_true(errors > 1000);
	assert_true(clean > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seabios_block),
		cmocka_unit_test(test_ovmf_block),
		cmocka_unit_test(test_acpi_tag_order),
		cmocka_unit_test(test_modules),
		cmocka_unit_test(test_minimal_block),
		cmocka_unit_test(test_cmdline_truncated),
		cmocka_unit_test(test_mmap_truncated),
		cmocka_unit_test(test_bad_total_size),
		cmocka_unit_test(test_bad_tag_sizes),
		cmocka_unit_test(test_missing_end_tag),
		cmocka_unit_test(test_bad_mmap),
		cmocka_unit_test(test_bad_efi_mmap),
		cmocka_unit_test(test_short_tags),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
