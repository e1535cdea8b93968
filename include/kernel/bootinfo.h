/*
 * What the kernel keeps of the Multiboot2 boot information. The loader's
 * block lives in memory we will reuse (right after the image under SeaBIOS,
 * at 0x4000 under OVMF), so mb2_parse() copies everything needed here first.
 */
#ifndef KERNEL_BOOTINFO_H
#define KERNEL_BOOTINFO_H

#include <stdbool.h>
#include <stdint.h>

#define BOOT_CMDLINE_MAX	1024
#define BOOT_MMAP_MAX		128
#define BOOT_MODULES_MAX	8

/* Multiboot2 memory types (the same values as E820). */
enum mem_type {
	MEM_AVAILABLE = 1,
	MEM_RESERVED = 2,
	MEM_ACPI_RECLAIMABLE = 3,
	MEM_ACPI_NVS = 4,
	MEM_BAD = 5,
};

struct mem_region {
	uint64_t base;		/* physical start */
	uint64_t len;		/* bytes */
	uint32_t type;		/* enum mem_type */
};

struct phys_range {
	uint64_t start;		/* first byte */
	uint64_t end;		/* one past the last byte */
};

struct boot_framebuffer {
	uint64_t addr;		/* physical address */
	uint32_t pitch;		/* bytes per line */
	uint32_t width;		/* pixels, or characters in EGA text */
	uint32_t height;	/* pixels, or lines in EGA text */
	uint8_t bpp;		/* bits per pixel */
	uint8_t type;		/* 0 indexed, 1 RGB, 2 EGA text */
	uint8_t red_pos, red_size;	/* RGB: bit position and width of red */
	uint8_t green_pos, green_size;	/* ... of green */
	uint8_t blue_pos, blue_size;	/* ... of blue */
};

#define BOOT_FB_INDEXED	0
#define BOOT_FB_RGB	1
#define BOOT_FB_EGA	2

struct boot_info {
	char cmdline[BOOT_CMDLINE_MAX];		/* kernel command line, NUL-terminated */
	bool cmdline_truncated;			/* longer than BOOT_CMDLINE_MAX - 1 */
	char loader[64];			/* boot loader name */
	struct mem_region mmap[BOOT_MMAP_MAX];	/* Multiboot2 memory map */
	unsigned mmap_count;			/* entries in mmap */
	bool mmap_truncated;			/* more entries than BOOT_MMAP_MAX */
	uint8_t rsdp[36];			/* copy of the ACPI RSDP */
	unsigned rsdp_len;			/* 20 (ACPI 1.0) or 36; 0 = none */
	bool rsdp_old_tag;			/* loader gave the ACPI 1.0 tag */
	bool rsdp_new_tag;			/* loader gave the ACPI 2.0+ tag */
	bool has_fb;				/* framebuffer tag present */
	struct boot_framebuffer fb;		/* valid when has_fb */
	bool efi;				/* booted from EFI firmware */
	uint64_t efi_systab;			/* EFI64 system table, 0 if none */
	unsigned efi_mmap_count;		/* descriptors in the EFI memory map */
	uint64_t efi_conventional_bytes;	/* EfiConventionalMemory total */
	struct phys_range modules[BOOT_MODULES_MAX]; /* loaded modules */
	unsigned module_count;			/* entries in modules */
	struct phys_range mbi;			/* the boot information block itself */
	unsigned unknown_tags;			/* tags we do not use */
};

/*
 * Parse the block at mbi (physical == virtual here) into *bi.
 * Returns NULL on success or a message saying what is malformed; fields
 * parsed before the damage are kept.
 */
const char *mb2_parse(const void *mbi, struct boot_info *bi);

extern struct boot_info boot_info;	/* the kernel's copy */

#endif
