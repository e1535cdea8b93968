/*
 * libFuzzer on baretrace-acpi's whole path: the acpidump text reader, the
 * kernel's ACPI parser (arch/x86/acpi.c) on what it read, the summary.
 * Seeds: tests/tools/acpi/ (a real VM's dump and QEMU's).
 */
#include <stddef.h>
#include <stdint.h>

#include "../../tools/acpidump.h"

static void sink(const char *line)
{
	(void)line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct acpidump d;
	char err[200];

	if (!acpidump_read((const char *)data, size, &d, sink, err, sizeof(err)))
		acpidump_machine(&d, sink);
	acpidump_free(&d);
	return 0;
}
