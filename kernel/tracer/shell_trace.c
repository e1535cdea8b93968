/*
 * Shell commands for tracing: status, start, stop, reset, mode.  With
 * trace.record=, `start` also opens a stream and `stop` ends it; the
 * shell's idle loop drains it in between (kernel/tracer/record.c).
 */
#include <stddef.h>
#include <arch/percpu.h>
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/persist.h"
#include "kernel/record.h"
#include "kernel/shell.h"
#include "kernel/trace_ctl.h"
#include "kernel/tracing.h"

static const char *const mode_names[] = { "overwrite", "discard" };

static int no_args(int argc, char **argv)
{
	if (argc > 1) {
		cprintf("error: %s takes no arguments\n", argv[0]);
		return 1;
	}
	return 0;
}

static int cmd_status(int argc, char **argv)
{
	uint64_t entries = 0, written = 0;
	char events[256];

	if (no_args(argc, argv))
		return 1;
	arch_trace_report_stops();
	cprintf("trace: recording=%s mode=%s pages_per_cpu=%u page_size=%u cpus=%u\n",
		tracing_on() ? "on" : "off", mode_names[trace_mode & 1], trace_pages,
		RB_PAGE_SIZE_DEFAULT, cpu_count);
	for (unsigned c = 0; c < cpu_count; c++) {
		struct rb_stats st;
		ring_buffer_stats(ring_buffer_cpu(&trace_rb, c), &st);
		/* entries: unread, as ftrace's per_cpu/stats; stored: ever kept. */
		cprintf("cpu=%u entries=%llu overrun=%llu dropped=%llu commit_overrun=%llu "
			"read=%llu bytes=%llu stored=%llu written=%llu rejected=%llu "
			"refused=%llu%s%s\n", c, (unsigned long long)st.in_buffer,
			(unsigned long long)st.overrun, (unsigned long long)st.dropped,
			(unsigned long long)st.commit_overrun, (unsigned long long)st.read,
			(unsigned long long)st.bytes, (unsigned long long)st.entries,
			(unsigned long long)st.written, (unsigned long long)st.rejected,
			(unsigned long long)st.refused, st.stop_reason ? " stopped: " : "",
			st.stop_reason ? st.stop_reason : "");
		entries += st.in_buffer;
		written += st.written;
	}
	cprintf("trace: entries-in-buffer/entries-written: %llu/%llu\n",
		(unsigned long long)entries, (unsigned long long)written);
	cprintf("events: %s\n", trace_events_summary_now(events, sizeof(events)));
	persist_status();
	return 0;
}
SHELL_COMMAND(status, .name = "status", .usage = "",
	      .help = "per-CPU ring buffer statistics", .fn = cmd_status);

static int cmd_start(int argc, char **argv)
{
	if (no_args(argc, argv))
		return 1;
	tracing_start();
	cprintf("trace: recording=on\n");
	/* After the line: over the console, no line inside the stream's head. */
	if (record_enabled() && !record_active() && !record_begin())
		return 1;	/* its line says why; recording is on in memory */
	return 0;
}
SHELL_COMMAND(start, .name = "start", .usage = "",
	      .help = "start recording (trace.record=: and streaming)", .fn = cmd_start);

static int cmd_stop(int argc, char **argv)
{
	if (no_args(argc, argv))
		return 1;
	tracing_stop();
	/* The stream's rest, STATS and END: its `record: saved` line. */
	if (record_active())
		record_end(NULL);
	cprintf("trace: recording=off\n");
	return 0;
}
SHELL_COMMAND(stop, .name = "stop", .usage = "",
	      .help = "stop recording (trace.record=: and end the stream)", .fn = cmd_stop);

static int cmd_reset(int argc, char **argv)
{
	if (no_args(argc, argv))
		return 1;
	if (!tracing_reconfigure(trace_pages, trace_mode)) {
		cprintf("error: the buffers were not rebuilt (the line above says why)\n");
		return 1;
	}
	cprintf("trace: buffers emptied; recording=%s\n", tracing_on() ? "on" : "off");
	return 0;
}
SHELL_COMMAND(reset, .name = "reset", .usage = "", .help = "empty every buffer", .fn = cmd_reset);

static int cmd_mode(int argc, char **argv)
{
	int mode;

	if (argc != 2) {
		cprintf("error: usage: mode overwrite|discard\n");
		return 1;
	}
	if (!strcmp(argv[1], "overwrite")) {
		mode = RB_MODE_OVERWRITE;
	} else if (!strcmp(argv[1], "discard")) {
		mode = RB_MODE_DISCARD;
	} else {
		cprintf("error: mode '%.32s' is not known; accepted: overwrite|discard\n", argv[1]);
		return 1;
	}
	if (!tracing_reconfigure(trace_pages, mode)) {
		cprintf("error: the buffers were not rebuilt (the line above says why); mode unchanged\n");
		return 1;
	}
	cprintf("trace: mode=%s (buffers emptied)\n", mode_names[mode]);
	return 0;
}
SHELL_COMMAND(mode, .name = "mode", .usage = "overwrite|discard",
	      .help = "set the buffer mode (empties the buffers)", .fn = cmd_mode);
