/*
 * baretrace-acpi DUMP: what baretrace will find on a machine, from the
 * text `acpidump` writes there (or a capture of the kernel's acpi.dump
 * output). Prints the acpi: lines the kernel would print at boot, a
 * warning: line per problem, then one machine: and one verdict: line
 * (docs/output.md). Exit 0 boots, 1 will not, 2 not an acpidump, 3
 * unreadable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acpidump.h"

static void emit(const char *line)
{
	printf("%s\n", line);
}

int main(int argc, char **argv)
{
	static struct acpidump d;
	char err[200];
	char *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f;
	int rc;

	if (argc != 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(stderr, "usage: baretrace-acpi DUMP   (DUMP: `sudo acpidump > DUMP`, or - for stdin)\n");
		return argc == 2 ? 0 : 3;
	}
	f = strcmp(argv[1], "-") ? fopen(argv[1], "rb") : stdin;
	if (!f) {
		fprintf(stderr, "baretrace-acpi: %s: %s\n", argv[1], strerror(errno));
		return 3;
	}
	for (;;) {
		size_t n;
		if (len == cap) {
			char *b = realloc(text, cap = cap ? cap * 2 : 1 << 16);
			if (!b) {
				fprintf(stderr, "baretrace-acpi: out of memory\n");
				return 3;
			}
			text = b;
		}
		n = fread(text + len, 1, cap - len, f);
		if (!n)
			break;
		len += n;
	}
	if (ferror(f)) {
		fprintf(stderr, "baretrace-acpi: %s: %s\n", argv[1], strerror(errno));
		return 3;
	}
	if (f != stdin)
		fclose(f);
	rc = acpidump_read(text, len, &d, emit, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "baretrace-acpi: %s: %s\n", argv[1], err);
		free(text);
		return rc;
	}
	rc = acpidump_machine(&d, emit);
	acpidump_free(&d);
	free(text);
	return rc;
}
