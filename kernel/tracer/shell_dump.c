/* Shell command: dump text|bin|usb [cpu=N] [last=N]; Ctrl-C cuts text and bin short. */
#include <stddef.h>
#include <arch/percpu.h>
#include "kernel/console.h"
#include "kernel/dump.h"
#include "kernel/kstring.h"
#include "kernel/record.h"
#include "kernel/shell.h"
#include "trace/text.h"

static int cmd_dump(int argc, char **argv)
{
	/* Without last=, dump.last= (200), as run=demo: a full buffer as text takes
	 * minutes on a serial line; last=0 prints every event. */
	struct trace_text_opts opts = { .last = dump_default_last(), .cpu = TRACE_TEXT_ALL_CPUS };
	bool text;

	if (argc < 2 || (strcmp(argv[1], "text") && strcmp(argv[1], "bin") &&
			 strcmp(argv[1], "usb"))) {
		cprintf("error: usage: dump text|bin|usb [cpu=N] [last=N]\n");
		return 1;
	}
	if (record_active()) {
		/* Two readers would each take pages from the other. */
		cprintf("error: dump: the stream of trace.record= is reading the buffers; "
			"'stop' ends it\n");
		return 1;
	}
	text = !strcmp(argv[1], "text");
	for (int i = 2; i < argc; i++) {
		/* The same selection syntax as baretrace-decode's (trace/text.c). */
		if (trace_text_parse_arg(argv[i], &opts) != 0 ||
		    (opts.cpu != TRACE_TEXT_ALL_CPUS && (opts.cpu >= cpu_count || !cpus[opts.cpu]))) {
			cprintf("error: dump: '%.32s' is not accepted (cpu=0..%u, last=0..; "
				"0: all)\n", argv[i], cpu_count - 1);
			return 1;
		}
	}
	for (int i = 2; i < argc && !text; i++) {
		if (!strncmp(argv[i], "last=", 5)) {
			cprintf("error: dump %s carries whole pages: last= is for dump text\n",
				argv[1]);
			return 1;
		}
	}
	if (!strcmp(argv[1], "usb"))
		return dump_usb(opts.cpu) ? 0 : 1;
	return (text ? dump_text(opts.cpu, opts.last) : dump_bin(opts.cpu)) ? 0 : 1;
}
SHELL_COMMAND(dump, .name = "dump",
	      .usage = "text [cpu=N] [last=N]\tthe last N events (default dump.last=), merged; "
		       "last=0: all; an idle shell records irq:lapic_tick 1000 times a second "
		       "('events disable irq:lapic_tick' stops it)\n"
		       "bin [cpu=N]\tthe whole buffers as frames for baretrace-decode\n"
		       "usb [cpu=N]\tthe same frames saved into TRACE.BIN on the stick",
	      .help = "print the trace (text), send it framed (bin) or save it to the stick (usb)",
	      .fn = cmd_dump);
