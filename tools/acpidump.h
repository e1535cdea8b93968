/*
 * Reading the text Linux's acpidump writes, and running the kernel's ACPI
 * parser (arch/x86/acpi.c, the same source) on the tables it holds.
 *
 * The format (ACPICA's acpidump, one block a table, in any order):
 *
 *   FACP @ 0x00000000BFFE1234          signature, physical address
 *       0000: 46 41 43 50 F4 00 00 00 03 D1 42 4F 43 48 53 20  FACP......BOCHS
 *       0010: ...                       offset, up to 16 bytes, ASCII
 *                                       a blank line ends the block
 *
 * A line may carry a kernel log's "[   0.000000] " prefix, so a serial
 * capture of the kernel's acpi.dump output reads as it is.
 */
#ifndef TOOLS_ACPIDUMP_H
#define TOOLS_ACPIDUMP_H

#include <stddef.h>
#include <stdint.h>

#define ACPIDUMP_MAX_TABLES	128

struct acpidump_table {
	char sig[5];		/* from the block's first line, NUL-terminated */
	uint64_t addr;		/* where the parser sees it (the dump's, or assigned) */
	uint8_t *data;		/* its bytes (malloc) */
	uint32_t len;		/* bytes read */
};

struct acpidump {
	struct acpidump_table t[ACPIDUMP_MAX_TABLES]; /* in dump order */
	unsigned n;		/* tables in t */
	unsigned dropped;	/* blocks past ACPIDUMP_MAX_TABLES */
};

/*
 * Parse text[0..len). Returns 0, or 2 (not an acpidump: no table in it)
 * with the reason in err. Each damaged block is said once through emit.
 */
int acpidump_read(const char *text, size_t len, struct acpidump *d,
		  void (*emit)(const char *), char *err, size_t errlen);
void acpidump_free(struct acpidump *d);

/*
 * Run the kernel's parser on the dump and emit its acpi: lines, the
 * warning: lines, then the machine: and verdict: lines. Returns the exit
 * status: 0 boots, 1 will not.
 */
int acpidump_machine(struct acpidump *d, void (*emit)(const char *));

#endif
