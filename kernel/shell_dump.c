/* Shell command: dump text|bin [cpu=N] [last=N]. */
#include <stddef.h>
#include <arch/percpu.h>
#include "kernel/console.h"
#include "kernel/dump.h"
#include "kernel/kstring.h"
#include "kernel/shell.h"

static bool number(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (max - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

static int cmd_dump(int argc, char **argv)
{
	uint64_t cpu = DUMP_ALL_CPUS, last = 0, v;
	bool text;

	if (argc < 2 || (strcmp(argv[1], "text") && strcmp(argv[1], "bin"))) {
		cprintf("error: usage: dump text|bin [cpu=N] [last=N]\n");
		return 1;
	}
	text = !strcmp(argv[1], "text");
	for (int i = 2; i < argc; i++) {
		if (!strncmp(argv[i], "cpu=", 4) && number(argv[i] + 4, MAX_CPUS, &v) &&
		    v < cpu_count && cpus[v]) {
			cpu = v;
		} else if (!strncmp(argv[i], "last=", 5) && number(argv[i] + 5, 100000000, &v)) {
			last = v;
		} else {
			cprintf("error: dump: '%.32s' is not accepted (cpu=0..%u, last=0..100000000)\n",
				argv[i], cpu_count - 1);
			return 1;
		}
	}
	if (!text && last) {
		cprintf("error: dump bin carries whole pages: last= is for dump text\n");
		return 1;
	}
	return (text ? dump_text((uint32_t)cpu, last) : dump_bin((uint32_t)cpu)) ? 0 : 1;
}
SHELL_COMMAND(dump, .name = "dump", .usage = "text|bin [cpu=N] [last=N]",
	      .help = "print the trace (text) or send it framed (bin)", .fn = cmd_dump);
