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
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trace/dump_read.h>
#include <trace/text.h>

#include "ctf.h"
#include "damage.h"
#include "lab_summary.h"
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
	"usage: baretrace-decode [OPTION]... CAPTURE [last=N] [cpu=N]\n"
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
	"Options (a long option's value also as --opt=VALUE):\n"
	"  -o, --text FILE   write the text to FILE instead of stdout\n"
	"  -C, --ctf DIR     also write a CTF trace into DIR (created if missing)\n"
	"  -T, --trace-dat FILE  also write a trace.dat to FILE; untrusted clocks\n"
	"                    and shifted times are noted on stderr and in the file\n"
	"  -e, --events      list the events the capture describes instead of the\n"
	"                    text (one per line: <system>:<name> id=<n>\n"
	"                    fields=<name>:<kind>,...; kinds u8..u64, s8..s64,\n"
	"                    x8..x64 (hex), bool, sym, char[N], str[N], enum); text\n"
	"                    still goes to FILE with --text FILE\n"
	"  -q, --quiet       no text on stdout (unless --text) and no summary;\n"
	"                    damage is still reported on stderr\n"
	"  -m, --mark-order  text: before each event whose order with the one\n"
	"                    before it, of another CPU, the skew bounds do not\n"
	"                    decide (their times lie within the pair's '# order:'\n"
	"                    figure), a line 'CPU:<b> [ORDER UNDECIDED: <d> ns after\n"
	"                    CPU:<a>, within <w> ns]'; without it such pairs are\n"
	"                    only counted (stderr, 'order:')\n"
	"  -n, --last N      text: only the N most recent events (merged order);\n"
	"                    0: all\n"
	"  -c, --cpu N       text: only CPU N (an error if the dump has no CPU N)\n"
	"  last=N cpu=N      the same, spelt as the kernel's `dump text` takes them\n"
	"  -d, --dump K      the K-th dump of the capture (1 = first; default: the last)\n"
	"      --lab         instead of the text: the summaries of run=hwlat,\n"
	"                    run=c2c and run=timerlat computed from the capture's\n"
	"                    lab events, in the kernel's line forms\n"
	"                    (docs/output.md); status 3 if it holds none, 1 if the\n"
	"                    dump is damaged or lost events\n"
	"      --lab-plot DIR  --lab, and its pictures as SVG files in DIR\n"
	"                    (hwlat_gaps.svg, timerlat.svg, c2c.svg)\n"
	"  -h, --help        this text\n"
	"A rejected command line prints one 'error:' line and exits with status 2.\n"
	"\n"
	"Damage (bad CRCs, missing or repeated frames, truncation, bytes that are no\n"
	"frame inside the dump, no END frame) is reported on stderr, one line each,\n"
	"with byte offsets into the capture; everything that checks out is decoded.\n"
	"Lines of console text between two good frames of a dump (what other CPUs\n"
	"printed during a trace.record=serial stream) are not damage: each is shown\n"
	"on stderr as 'console text at byte offset N: <line>' (not with --quiet).\n"
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
	bool lab;		/* --lab or --lab-plot */
	const char *lab_plot;	/* --lab-plot DIR, or NULL */
	struct trace_text_opts sel; /* --last N, --cpu N */
	int32_t dump;		/* --dump K - 1, or -1 for the last */
};

/* One line for any rejected command line: what, and where to read more. */
static int bad_usage(const char *why, const char *arg)
{
	fprintf(stderr, "baretrace-decode: error: %s%s%s; try 'baretrace-decode --help'\n", why,
		arg ? ": " : "", arg ? arg : "");
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

/* Each long option and its short form (getopt_long: --text=FILE and --text FILE). */
enum { OPT_LAB = 256, OPT_LAB_PLOT };	/* long only */
static const struct option long_opts[] = {
	{ "text", required_argument, NULL, 'o' },
	{ "ctf", required_argument, NULL, 'C' },
	{ "trace-dat", required_argument, NULL, 'T' },
	{ "events", no_argument, NULL, 'e' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "mark-order", no_argument, NULL, 'm' },
	{ "last", required_argument, NULL, 'n' },
	{ "cpu", required_argument, NULL, 'c' },
	{ "dump", required_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ "lab", no_argument, NULL, OPT_LAB },
	{ "lab-plot", required_argument, NULL, OPT_LAB_PLOT },
	{ NULL, 0, NULL, 0 },
};

/* The option getopt_long just turned down, as the user typed it. */
static const char *rejected(char **argv, char *buf, size_t len)
{
	const char *w = argv[optind - 1];

	if (!strncmp(w, "--", 2))
		return w;	/* a long option: the whole word */
	snprintf(buf, len, "-%c", optopt);
	return buf;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	char sel[64], opt[3];
	uint64_t v;
	int c, i;

	*a = (struct args){ .sel = { .cpu = TRACE_TEXT_ALL_CPUS }, .dump = -1 };
	opterr = 0;		/* its messages are ours, one line */
	while ((c = getopt_long(argc, argv, ":o:C:T:eqmn:c:d:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage, stdout);
			exit(EXIT_OK);
		case 'e':
			a->events = true;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'm':
			a->mark_order = true;
			break;
		case OPT_LAB_PLOT:
			a->lab_plot = optarg;
			/* fall through */
		case OPT_LAB:
			a->lab = true;
			break;
		case 'o':
			a->text = optarg;
			break;
		case 'C':
			a->ctf = optarg;
			break;
		case 'T':
			a->trace_dat = optarg;
			break;
		case 'n':
		case 'c':
			/* The kernel's spelling, through the same parser. */
			i = snprintf(sel, sizeof(sel), "%s=%s", c == 'n' ? "last" : "cpu", optarg);
			if (i >= (int)sizeof(sel) || trace_text_parse_arg(sel, &a->sel))
				return bad_usage(c == 'n' ? "--last needs a number (0: all)" :
						 "--cpu needs a CPU number", optarg);
			break;
		case 'd':
			if (!number(optarg, INT32_MAX, &v) || v == 0)
				return bad_usage("--dump needs a number from 1", optarg);
			a->dump = (int32_t)(v - 1);
			break;
		case ':':
			return bad_usage("missing value for", rejected(argv, opt, sizeof(opt)));
		default:
			return bad_usage("unknown option", rejected(argv, opt, sizeof(opt)));
		}
	}
	for (i = optind; i < argc; i++) {
		const char *o = argv[i];

		if (trace_text_parse_arg(o, &a->sel) == 0)
			continue;	/* last=N or cpu=N, as `dump text` takes them */
		if (!strncmp(o, "last=", 5) || !strncmp(o, "cpu=", 4))
			return bad_usage("bad selection", o);
		if (a->capture)
			return bad_usage("more than one capture", o);
		a->capture = o;
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

/* Console text between the dump's frames (a stream's): passed through, said to be text. */
static void console_line(void *ctx, size_t off, const char *line, size_t len)
{
	if (*(const bool *)ctx)
		return;
	fprintf(stderr, "baretrace-decode: console text at byte offset %zu: %.*s\n", off,
		(int)len, line);
}

static void file_write(void *ctx, const void *buf, size_t len)
{
	fwrite(buf, 1, len, ctx);
}

static size_t total_pages(const struct dump_result *r)
{
	size_t n = 0;

	for (uint32_t c = 0; c < r->nr_cpus; c++)
		n += r->cpus[c].nr_pages;
	return n;
}

static int write_text(const struct args *a, const struct dump_result *r,
		      struct trace_text_summary *sum)
{
	struct trace_text_opts o = a->sel;
	struct trace_symbols syms = dump_symbols(r);
	struct trace_text_cpu *tc = calloc(r->nr_cpus + 1, sizeof(*tc));
	uint64_t *transit = calloc(total_pages(r) + 1, sizeof(*transit)), *t = transit;
	char damaged[512];
	void *scratch = calloc(1, trace_text_scratch_size(r->nr_cpus) + 8);
	FILE *f = a->text ? fopen(a->text, "w") : stdout;
	struct trace_sink sink = { file_write, f };
	int rc = 0;

	if (!f) {
		fprintf(stderr, "baretrace-decode: %s: %s\n", a->text, strerror(errno));
		rc = -1;
	} else if (!tc || !scratch || !transit) {
		fprintf(stderr, "baretrace-decode: out of memory\n");
		rc = -1;
	} else {
		dump_text_cpus(r, tc);
		for (uint32_t c = 0; c < r->nr_cpus; c++) {
			tc[c].transit = t;
			for (uint32_t k = 0; k < r->cpus[c].nr_pages; k++)
				*t++ = dump_transit_lost(&r->cpus[c], k);
		}
		if (dump_damage_note(r, damaged, sizeof(damaged)))
			o.damaged = damaged;
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
	free(transit);
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
		r->end_off - r->start_off - r->console_bytes,
		r->nr_cpus, r->pages, (unsigned long long)r->events, (unsigned long long)lost,
		untrusted, r->bad_clocks, rc == DUMP_READ_OK ? "complete (verified by END)" :
		"DAMAGED (see above)");
}

int main(int argc, char **argv)
{
	struct dump_read_opts ro = { .report = report_line, .console = console_line };
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
	ro.report_ctx = &a.quiet;
	rc = dump_read(cap, len, &ro, NULL, 0, &r);
	if (rc == DUMP_READ_NOTHING) {
		fprintf(stderr, "baretrace-decode: %s: no trace dump frame found (%zu bytes "
			"searched)\n", a.capture, len);
		free(cap);
		return EXIT_NOTHING;
	}
	if (rc == DUMP_READ_NO_SUCH_DUMP) {
		fprintf(stderr, "baretrace-decode: error: %s holds %u dumps; there is no dump %d\n",
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
	if (a.sel.cpu != TRACE_TEXT_ALL_CPUS && a.sel.cpu >= r.nr_cpus) {
		fprintf(stderr, "baretrace-decode: error: no cpu %u: dump id %u has %u CPUs\n",
			a.sel.cpu, r.dump_id, r.nr_cpus);
		free(arena);
		free(cap);
		return EXIT_USAGE;
	}
	report_clocks(&r);
	if (r.has_end && (r.end.flags & DUMP_END_CUT))
		fprintf(stderr, "baretrace-decode: dump id %u was cut short in the kernel "
			"(Ctrl-C): it ends after %u pages, %llu events; the rest was not sent\n",
			r.dump_id, r.end.pages, (unsigned long long)r.end.events);
	status = rc != DUMP_READ_OK ? EXIT_DAMAGED : r.bad_clocks ? EXIT_CLOCK : EXIT_OK;
	if (a.lab) {	/* tools/lab_summary.c: the lab's summaries instead of the text */
		status = lab_summary_main(&r, rc, a.capture, a.lab_plot);
		a.quiet = true;
	}

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
	if (!a.quiet && r.console_lines)
		fprintf(stderr, "baretrace-decode: console: %u lines of console text between the "
			"dump's frames (the lines above: what the console printed, no fault)\n",
			r.console_lines);
	if (!a.quiet && texted)
		fprintf(stderr, "baretrace-decode: order: %llu adjacent pairs of events of two "
			"CPUs lie within their skew bounds: their order is not decided\n",
			(unsigned long long)sum.undecided);
	free(arena);
	free(cap);
	return status;
}
