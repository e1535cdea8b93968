/*
 * baretrace-decode: find the binary trace dump in a serial-console capture
 * and turn it into the kernel's trace text and a CTF trace.
 *
 * The capture is the raw byte stream of the console: text, and the frames
 * of `dump` written raw in between.  The decoding is the kernel's own
 * code compiled for the host (trace/dump_read.c for the frames,
 * trace/text.c for the text), so the text is byte for byte what the
 * kernel's `dump text` prints for the same buffers.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trace/dump_read.h>
#include <trace/text.h>

#include "ctf.h"
#include "trace_dat.h"

#define MAX_CAPTURE	(1ull << 31)	/* 2 GiB: more than any serial line carries */

enum {
	EXIT_OK = 0,		/* the whole dump, verified */
	EXIT_DAMAGED = 1,	/* decoded as far as valid; damage reported */
	EXIT_USAGE = 2,		/* bad arguments or an I/O error */
	EXIT_NOTHING = 3,	/* nothing decodable in the capture */
	EXIT_CLOCK = 4,		/* frames intact, but a CPU's clock is invalid */
};

static const char usage[] =
	"usage: baretrace-decode CAPTURE [--text FILE] [--ctf DIR] [--trace-dat FILE]\n"
	"                        [--events] [--quiet] [--mark-order]\n"
	"                        [--last N] [--cpu N] [--dump K] [last=N] [cpu=N]\n"
	"\n"
	"Find the binary trace dump (frames written by the kernel's `dump` command)\n"
	"in CAPTURE, a raw capture of the serial console ('-' reads stdin), check it\n"
	"and write:\n"
	"  the trace as text, exactly as the kernel's `dump text` prints it: to\n"
	"  stdout, or to FILE with --text FILE;\n"
	"  with --ctf DIR, a CTF 1.8 trace (DIR/metadata and DIR/stream_<cpu>) for\n"
	"  babeltrace2, with the same nanosecond times and the lost events as\n"
	"  discarded-event counts;\n"
	"  with --trace-dat FILE, a trace-cmd trace.dat (file version 6) for\n"
	"  `trace-cmd report` and KernelShark, with the same nanosecond times (see\n"
	"  trace-cmd report -t) and the lost events as [N EVENTS DROPPED].\n"
	"\n"
	"  --text FILE  write the text to FILE instead of stdout\n"
	"  --ctf DIR    also write a CTF trace into DIR (created if missing)\n"
	"  --trace-dat FILE  also write a trace.dat to FILE; untrusted clocks and\n"
	"               shifted times are noted on stderr and in the file\n"
	"  --events     list the events the capture describes instead of the text\n"
	"               (one per line: <system>:<name> id=<n> fields=<name>:<kind>,...;\n"
	"               kinds u8..u64, s8..s64, x8..x64 (hex), bool, sym, char[N],\n"
	"               str[N], enum); text still goes to FILE with --text FILE\n"
	"  --quiet      no text on stdout (unless --text) and no summary; damage\n"
	"               is still reported on stderr\n"
	"  --mark-order text: before each event whose order with the one before it,\n"
	"               of another CPU, the skew bounds do not decide (their times\n"
	"               lie within the pair's '# order:' figure), a line\n"
	"               'CPU:<b> [ORDER UNDECIDED: <d> ns after CPU:<a>, within <w> ns]';\n"
	"               without it such pairs are only counted (stderr, 'order:')\n"
	"  --last N     text: only the N most recent events (merged order); 0: all\n"
	"  --cpu N      text: only CPU N\n"
	"  last=N cpu=N the same, spelt as the kernel's `dump text` takes them\n"
	"  --dump K     the K-th dump of the capture (1 = first; default: the last)\n"
	"  --help       this text\n"
	"\n"
	"Damage (bad CRCs, missing or repeated frames, truncation, bytes that are no\n"
	"frame inside the dump, no END frame) is reported on stderr, one line each,\n"
	"with byte offsets into the capture; everything that checks out is decoded.\n"
	"\n"
	"The text's header says, per pair of CPUs, within how many ns their\n"
	"events' order is not decided ('# order:'), when a CPU's clock stopped\n"
	"being trusted ('untrusted_from=': 'U' only on its events from then on),\n"
	"and whether the calibration's references disagreed ('# clock:').\n"
	"\n"
	"A CPU whose CLOCK frame is invalid (a conversion the kernel cannot have\n"
	"made: mult 0 or all zero, shift or ns_frac out of range, hz 0 or mult not\n"
	"derived from it; or an offset its measured skew does not explain) is\n"
	"marked untrusted: 'U' on its lines, clock=invalid and the reason in the\n"
	"text's header, one line on stderr; its times use a stand-in clock (another\n"
	"CPU's conversion without offset, else cycles at the dump's frequency, else\n"
	"raw cycles), so that the merge still follows its stamps.\n"
	"\n"
	"Exit status: 0 the whole dump, verified by its END frame, every clock\n"
	"valid; 1 damaged but decoded as far as valid (clocks may be invalid too);\n"
	"2 usage or I/O error, or a CTF trace or trace.dat that cannot be written;\n"
	"3 nothing decodable; 4 the whole dump, verified, but some CPU's clock is\n"
	"invalid.\n"
	"A dump cut short in the kernel (Ctrl-C) ends properly, its END frame\n"
	"flagged: it decodes as complete (status 0) and one stderr line says so.\n";

struct args {
	const char *capture;	/* input path, "-" for stdin */
	const char *text;	/* --text FILE, or NULL */
	const char *ctf;	/* --ctf DIR, or NULL */
	const char *trace_dat;	/* --trace-dat FILE, or NULL */
	bool quiet;		/* --quiet */
	bool events;		/* --events */
	bool mark_order;	/* --mark-order */
	struct trace_text_opts sel; /* --last N, --cpu N */
	int32_t dump;		/* --dump K - 1, or -1 for the last */
};

static int bad_usage(const char *why, const char *arg)
{
	fprintf(stderr, "baretrace-decode: %s%s%s\n%s", why, arg ? ": " : "", arg ? arg : "",
		usage);
	return EXIT_USAGE;
}

static bool number(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	uint64_t v;
	int i;

	*a = (struct args){ .sel = { .cpu = TRACE_TEXT_ALL_CPUS }, .dump = -1 };
	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
			fputs(usage, stdout);
			exit(EXIT_OK);
		} else if (!strcmp(o, "--events")) {
			a->events = true;
		} else if (!strcmp(o, "--quiet")) {
			a->quiet = true;
		} else if (!strcmp(o, "--mark-order")) {
			a->mark_order = true;
		} else if (!strcmp(o, "--text") || !strcmp(o, "--ctf") || !strcmp(o, "--trace-dat")) {
			if (!val)
				return bad_usage("missing value for", o);
			*(!strcmp(o, "--text") ? &a->text : !strcmp(o, "--ctf") ? &a->ctf
									: &a->trace_dat) = val;
			i++;
		} else if (!strcmp(o, "--last") || !strcmp(o, "--cpu")) {
			/* The kernel's spelling, through the same parser. */
			char sel[64];

			snprintf(sel, sizeof(sel), "%s=%s", o + 2, val ? val : "");
			if (strlen(o + 2) + 1 + strlen(val ? val : "") >= sizeof(sel) ||
			    trace_text_parse_arg(sel, &a->sel))
				return bad_usage(!strcmp(o, "--last") ?
						 "--last needs a number (0: all)" :
						 "--cpu needs a CPU number", val);
			i++;
		} else if (trace_text_parse_arg(o, &a->sel) == 0) {
			continue;	/* last=N or cpu=N, as `dump text` takes them */
		} else if (strchr(o, '=') && (!strncmp(o, "last=", 5) || !strncmp(o, "cpu=", 4))) {
			return bad_usage("bad selection", o);
		} else if (!strcmp(o, "--dump")) {
			if (!number(val, INT32_MAX, &v) || v == 0)
				return bad_usage("--dump needs a number from 1", val);
			a->dump = (int32_t)(v - 1);
			i++;
		} else if (o[0] == '-' && o[1]) {
			return bad_usage("unknown option", o);
		} else if (a->capture) {
			return bad_usage("more than one capture", o);
		} else {
			a->capture = o;
		}
	}
	if (!a->capture)
		return bad_usage("no capture given", NULL);
	return -1;
}

/* The whole file (or stdin) in memory. */
static uint8_t *read_capture(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	uint8_t *buf = NULL, *nb;
	size_t cap = 0, n;

	*len = 0;
	if (!f) {
		fprintf(stderr, "baretrace-decode: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	do {
		if (*len == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			if (cap > MAX_CAPTURE || !(nb = realloc(buf, cap))) {
				fprintf(stderr, "baretrace-decode: %s: too large\n", path);
				goto fail;
			}
			buf = nb;
		}
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n > 0);
	if (ferror(f)) {
		fprintf(stderr, "baretrace-decode: %s: read error\n", path);
		goto fail;
	}
	if (f != stdin)
		fclose(f);
	return buf ? buf : malloc(1);
fail:
	if (f != stdin)
		fclose(f);
	free(buf);
	return NULL;
}

static void report_line(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "baretrace-decode: damage: %s\n", line);
}

static void file_write(void *ctx, const void *buf, size_t len)
{
	fwrite(buf, 1, len, ctx);
}

static int write_text(const struct args *a, const struct dump_result *r,
		      struct trace_text_summary *sum)
{
	struct trace_text_opts o = a->sel;
	struct trace_symbols syms = dump_symbols(r);
	struct trace_text_cpu *tc = calloc(r->nr_cpus + 1, sizeof(*tc));
	void *scratch = calloc(1, trace_text_scratch_size(r->nr_cpus) + 8);
	FILE *f = a->text ? fopen(a->text, "w") : stdout;
	struct trace_sink sink = { file_write, f };
	int rc = 0;

	if (!f) {
		fprintf(stderr, "baretrace-decode: %s: %s\n", a->text, strerror(errno));
		rc = -1;
	} else if (!tc || !scratch) {
		fprintf(stderr, "baretrace-decode: out of memory\n");
		rc = -1;
	} else {
		dump_text_cpus(r, tc);
		o.catalog = dump_catalog(r);
		o.syms = &syms;
		o.calib = dump_calib(r);
		o.mark_order = a->mark_order;
		if (trace_text_write(tc, r->nr_cpus, &o, scratch,
				     trace_text_scratch_size(r->nr_cpus), &sink, sum))
			rc = -1;
	}
	if (f && (ferror(f) || (f != stdout ? fclose(f) : fflush(f)))) {
		fprintf(stderr, "baretrace-decode: %s: write error\n", a->text ? a->text : "stdout");
		rc = -1;
	}
	free(tc);
	free(scratch);
	return rc;
}

/* --events: the capture's descriptions (else the built-in ones), by id. */
static int list_events(const struct dump_result *r)
{
	const struct trace_catalog *cat = dump_catalog(r);
	char kind[32];

	for (uint32_t id = 1; id < cat->nr_ids; id++) {
		const struct trace_event_def *d = trace_catalog_get(cat, id);

		if (!d)
			continue;
		printf("%s:%s id=%u fields=", d->system, d->name, d->id);
		for (uint32_t i = 0; i < d->nfields; i++) {
			trace_field_kind_name(&d->fields[i], kind, sizeof(kind));
			printf("%s%s:%s", i ? "," : "", d->fields[i].name, kind);
		}
		printf("\n");
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "baretrace-decode: stdout: write error\n");
		return -1;
	}
	return 0;
}

/* One stderr line per CPU whose clock could not be used as sent. */
static void report_clocks(const struct dump_result *r)
{
	uint32_t c;

	for (c = 0; c < r->nr_cpus; c++)
		if (r->cpus[c].clock_state == TRACE_CLOCK_INVALID)
			fprintf(stderr, "baretrace-decode: clock: cpu %u: %s and are marked "
				"untrusted (U)\n", c, r->cpus[c].clock_note);
}

static void summary(const struct dump_result *r, int rc)
{
	uint64_t lost = 0;
	uint32_t c, i, untrusted = 0;

	for (c = 0; c < r->nr_cpus; c++) {
		for (i = 0; i < r->cpus[c].nr_pages; i++)
			lost += r->cpus[c].lost[i];
		untrusted += r->cpus[c].clock_state != TRACE_CLOCK_TRUSTED;
	}
	fprintf(stderr, "baretrace-decode: dump %u of %u (id %u) at byte offsets %zu..%zu "
		"bytes=%zu: %u CPUs, %u pages, %llu events, %llu lost, untrusted clocks: %u "
		"(invalid: %u); %s\n",
		r->index + 1, r->nr_dumps, r->dump_id, r->start_off, r->end_off ? r->end_off - 1 : 0,
		r->end_off - r->start_off,
		r->nr_cpus, r->pages, (unsigned long long)r->events, (unsigned long long)lost,
		untrusted, r->bad_clocks, rc == DUMP_READ_OK ? "complete (verified by END)" :
		"DAMAGED (see above)");
}

int main(int argc, char **argv)
{
	struct dump_read_opts ro = { .report = report_line };
	struct trace_text_summary sum = { 0 };
	bool texted = false;
	struct dump_result r;
	struct args a;
	uint8_t *cap;
	void *arena;
	size_t len;
	int rc, status;

	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	cap = read_capture(a.capture, &len);
	if (!cap)
		return EXIT_USAGE;
	ro.which = a.dump;
	rc = dump_read(cap, len, &ro, NULL, 0, &r);
	if (rc == DUMP_READ_NOTHING) {
		fprintf(stderr, "baretrace-decode: %s: no trace dump frame found (%zu bytes "
			"searched)\n", a.capture, len);
		free(cap);
		return EXIT_NOTHING;
	}
	if (rc == DUMP_READ_NO_SUCH_DUMP) {
		fprintf(stderr, "baretrace-decode: %s holds %u dumps; there is no dump %d\n",
			a.capture, r.nr_dumps, a.dump + 1);
		free(cap);
		return EXIT_USAGE;
	}
	arena = aligned_alloc(8, (r.arena_needed + 8) & ~(size_t)7);
	if (!arena) {
		fprintf(stderr, "baretrace-decode: out of memory (%zu bytes)\n", r.arena_needed);
		free(cap);
		return EXIT_USAGE;
	}
	rc = dump_read(cap, len, &ro, arena, r.arena_needed, &r);
	report_clocks(&r);
	if (r.has_end && (r.end.flags & DUMP_END_CUT))
		fprintf(stderr, "baretrace-decode: dump id %u was cut short in the kernel "
			"(Ctrl-C): it ends after %u pages, %llu events; the rest was not sent\n",
			r.dump_id, r.end.pages, (unsigned long long)r.end.events);
	status = rc != DUMP_READ_OK ? EXIT_DAMAGED : r.bad_clocks ? EXIT_CLOCK : EXIT_OK;

	if (a.events && list_events(&r))
		status = EXIT_USAGE;
	if (a.text || (!a.quiet && !a.events)) {
		texted = true;
		if (write_text(&a, &r, &sum))
			status = EXIT_USAGE;
	}
	if (a.ctf && ctf_write(a.ctf, &r, stderr))
		status = EXIT_USAGE;
	if (a.trace_dat && trace_dat_write(a.trace_dat, &r, stderr))
		status = EXIT_USAGE;
	if (!a.quiet)
		summary(&r, rc);
	if (!a.quiet && texted)
		fprintf(stderr, "baretrace-decode: order: %llu adjacent pairs of events of two "
			"CPUs lie within their skew bounds: their order is not decided\n",
			(unsigned long long)sum.undecided);
	free(arena);
	free(cap);
	return status;
}
