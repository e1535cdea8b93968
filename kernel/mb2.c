/*
 * Multiboot2 boot information parser (Multiboot2 specification, section 3.6).
 *
 *   +0  u32 total_size      +4 u32 reserved
 *   +8  tag: u32 type, u32 size, payload...   (each tag 8-byte aligned)
 *   ... end tag: type 0, size 8
 *
 * Everything is bounds-checked against total_size: a malformed block is
 * reported, never trusted past the damage. Generic code, tested on the host.
 */
#include <stddef.h>
#include "kernel/bootinfo.h"
#include "kernel/kstring.h"

#define TAG_END			0
#define TAG_CMDLINE		1
#define TAG_LOADER		2
#define TAG_MODULE		3
#define TAG_MMAP		6
#define TAG_FRAMEBUFFER		8
#define TAG_EFI64		12
#define TAG_ACPI_OLD		14
#define TAG_ACPI_NEW		15
#define TAG_EFI_MMAP		17

#define EFI_CONVENTIONAL	7
#define EFI_PAGE		4096
#define MBI_MAX_SIZE		(1u << 20)

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static void copy_str(char *dst, size_t cap, const uint8_t *src, size_t len,
		     bool *truncated)
{
	size_t n = strnlen((const char *)src, len);

	if (n >= cap) {
		n = cap - 1;
		if (truncated)
			*truncated = true;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static const char *parse_mmap(const uint8_t *p, uint32_t size, struct boot_info *bi)
{
	uint32_t esize, off;

	if (size < 16)
		return "memory map tag too short";
	esize = rd32(p + 8);
	if (esize < 24 || esize % 8)
		return "memory map entry size invalid";
	/* size - off, not off + esize: a huge esize must not wrap around. */
	for (off = 16; esize <= size - off; off += esize) {
		if (bi->mmap_count == BOOT_MMAP_MAX) {
			bi->mmap_truncated = true;
			break;
		}
		struct mem_region *r = &bi->mmap[bi->mmap_count++];
		r->base = rd64(p + off);
		r->len = rd64(p + off + 8);
		r->type = rd32(p + off + 16);
	}
	return NULL;
}

static const char *parse_efi_mmap(const uint8_t *p, uint32_t size, struct boot_info *bi)
{
	uint32_t dsize, off;

	if (size < 16)
		return "EFI memory map tag too short";
	dsize = rd32(p + 8);
	if (dsize < 40)
		return "EFI memory descriptor size invalid";
	for (off = 16; dsize <= size - off; off += dsize) {	/* no wrap, as above */
		bi->efi_mmap_count++;
		if (rd32(p + off) == EFI_CONVENTIONAL)
			bi->efi_conventional_bytes += rd64(p + off + 24) * EFI_PAGE;
	}
	return NULL;
}

const char *mb2_parse(const void *mbi, struct boot_info *bi)
{
	const uint8_t *base = mbi;
	uint32_t total, off;
	const char *err = NULL;
	bool saw_end = false;

	memset(bi, 0, sizeof(*bi));
	if (!mbi)
		return "no boot information";
	total = rd32(base);
	if (total < 16 || total > MBI_MAX_SIZE)
		return "boot information total_size is implausible";
	bi->mbi.start = (uintptr_t)mbi;
	bi->mbi.end = (uintptr_t)mbi + total;

	for (off = 8; off + 8 <= total; ) {
		const uint8_t *t = base + off;
		uint32_t type = rd32(t), size = rd32(t + 4);

		if (size < 8 || size > total - off)
			return "tag size runs past the end of the boot information";
		switch (type) {
		case TAG_END:
			saw_end = true;
			break;
		case TAG_CMDLINE:
			copy_str(bi->cmdline, sizeof(bi->cmdline), t + 8, size - 8,
				 &bi->cmdline_truncated);
			break;
		case TAG_LOADER:
			copy_str(bi->loader, sizeof(bi->loader), t + 8, size - 8, NULL);
			break;
		case TAG_MODULE:
			if (size < 16)
				return "module tag too short";
			if (bi->module_count < BOOT_MODULES_MAX) {
				bi->modules[bi->module_count].start = rd32(t + 8);
				bi->modules[bi->module_count].end = rd32(t + 12);
				bi->module_count++;
			}
			break;
		case TAG_MMAP:
			err = parse_mmap(t, size, bi);
			break;
		case TAG_FRAMEBUFFER:
			if (size < 30)
				return "framebuffer tag too short";
			bi->has_fb = true;
			bi->fb.addr = rd64(t + 8);
			bi->fb.pitch = rd32(t + 16);
			bi->fb.width = rd32(t + 20);
			bi->fb.height = rd32(t + 24);
			bi->fb.bpp = t[28];
			bi->fb.type = t[29];
			/* RGB colour info follows a u16 reserved field (GRUB's layout). */
			if (bi->fb.type == BOOT_FB_RGB && size >= 38) {
				bi->fb.red_pos = t[32];
				bi->fb.red_size = t[33];
				bi->fb.green_pos = t[34];
				bi->fb.green_size = t[35];
				bi->fb.blue_pos = t[36];
				bi->fb.blue_size = t[37];
			}
			break;
		case TAG_EFI64:
			if (size < 16)
				return "EFI64 tag too short";
			bi->efi = true;
			bi->efi_systab = rd64(t + 8);
			break;
		case TAG_ACPI_OLD:
		case TAG_ACPI_NEW: {
			uint32_t len = size - 8;
			if (len < 20)
				return "ACPI RSDP tag too short";
			if (len > sizeof(bi->rsdp))
				len = sizeof(bi->rsdp);
			/* Prefer the 2.0+ copy (it has the XSDT) when both exist. */
			if (type == TAG_ACPI_NEW || !bi->rsdp_new_tag) {
				memcpy(bi->rsdp, t + 8, len);
				bi->rsdp_len = len;
			}
			if (type == TAG_ACPI_NEW)
				bi->rsdp_new_tag = true;
			else
				bi->rsdp_old_tag = true;
			break;
		}
		case TAG_EFI_MMAP:
			bi->efi = true;
			err = parse_efi_mmap(t, size, bi);
			break;
		default:
			bi->unknown_tags++;
			break;
		}
		if (err)
			return err;
		if (saw_end)
			break;
		off = (off + size + 7) & ~7u;	/* tags are 8-byte aligned */
	}
	if (!saw_end)
		return "no end tag";
	return NULL;
}
