/*
 * acpi.dump: the ACPI tables the kernel found, printed as Linux's acpidump
 * prints them, so `baretrace-acpi` reads a machine's tables from a serial
 * capture where no Linux runs (docs/real-hardware.md). The format
 * (ACPICA's acpidump): a "SIG @ 0x<16 hex>" line, then lines of an offset,
 * up to 16 bytes in hex and their ASCII, then a blank line.
 *
 * Printed with cprintf (no timestamps, not kept in the log): the RSDP as
 * the boot loader copied it, the XSDT or RSDT, and every table that root
 * lists that is mapped, as long as its length field says (at most
 * DUMP_MAX_LEN; a longer or unmapped one as its header only, for the tool
 * to see why the kernel refused it).
 */
#include <stdbool.h>
#include <stdint.h>
#include <arch/acpi.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"

#define DUMP_MAX_LEN	(1u << 20)
#define HDR_LEN		36

static bool dump_on;
CMDLINE_OPTION(acpi_dump, .name = "acpi.dump", .type = OPT_FLAG, .var = &dump_on,
	       .help = "print the ACPI tables as acpidump text (for baretrace-acpi)");

static void dump_bytes(const char *sig, uint64_t phys, const uint8_t *p, uint32_t len)
{
	static const char hex[] = "0123456789ABCDEF";

	cprintf("%.4s @ 0x%016llX\n", sig, (unsigned long long)phys);
	for (uint32_t off = 0; off < len; off += 16) {
		char line[96], *q = line, digits[8];
		uint32_t v = off;
		int n = 0;

		do {			/* "%8.4X": at least 4 digits, right-aligned in 8 */
			digits[n++] = hex[v & 15];
			v >>= 4;
		} while (v || n < 4);
		for (int s = 0; s < 8 - n; s++)
			*q++ = ' ';
		while (n)
			*q++ = digits[--n];
		*q++ = ':';
		*q++ = ' ';
		for (uint32_t i = 0; i < 16; i++) {
			if (off + i < len) {
				*q++ = hex[p[off + i] >> 4];
				*q++ = hex[p[off + i] & 15];
			} else {
				*q++ = ' ';
				*q++ = ' ';
			}
			*q++ = ' ';
		}
		*q++ = ' ';
		for (uint32_t i = 0; i < 16 && off + i < len; i++) {
			uint8_t c = p[off + i];
			*q++ = c >= ' ' && c <= '~' ? (char)c : '.';
		}
		*q = 0;
		cprintf("%s\n", line);
	}
	cprintf("\n");
}

static void dump_table(uint64_t phys)
{
	const uint8_t *p = acpi_map(phys, HDR_LEN);
	uint32_t len;

	if (!p)
		return;
	len = ((const struct acpi_sdt_header *)p)->length;
	if (len < HDR_LEN || len > DUMP_MAX_LEN || !acpi_map(phys, len))
		len = HDR_LEN;
	dump_bytes((const char *)p, phys, p, len);
}

void acpi_dump(void)
{
	if (!dump_on)
		return;
	if (!acpi.found) {
		cprintf("acpi.dump: no ACPI tables to print\n");
		return;
	}
	dump_bytes("RSDP", (uint64_t)(uintptr_t)acpi.rsdp, acpi.rsdp,
		   acpi.rsdp_revision >= 2 ? 36 : 20);
	dump_table(acpi.root_phys);
	for (unsigned i = 0; i < acpi.table_count; i++)
		dump_table(acpi.tables[i].phys);
}
