/*
 * CTF 1.8 writer for decoded dumps (Common Trace Format, diamon.org).
 *
 * Layout:
 *   metadata     TSDL text: trace (little-endian, packet header magic +
 *                stream id), one clock, one stream class, one event class
 *                per event of <trace/events.h> plus "unknown".
 *   stream_<c>   CPU c's packets, one per ring page received, in order.
 *
 *   packet:  header { u32 magic 0xC1FC1FC1; u32 stream_id = 0 }
 *            context { u64 timestamp_begin, timestamp_end (clock);
 *                      u64 content_size, packet_size (bits);
 *                      u64 events_discarded; u32 cpu_id; u64 page_pos;
 *                      u8 clock_trusted }   (a page whose CPU's trust
 *                                        ended within it is two packets)
 *            events:  header { u16 id; u64 timestamp (clock) }
 *                     context { u8 ctx }   payload { u32 fields... }
 *   A code address (a SYM field, e.g. ftrace:function's ip and parent_ip)
 *   is followed by a string field of the same name plus "_sym": the
 *   symbol+0xoff the text prints, from the capture's symbol table, or ""
 *   where the table has none, so babeltrace2 shows the function's name.
 *   Every integer is byte-aligned, so nothing is padded.
 *
 * Clock: nanoseconds (freq 1 GHz), the same per-CPU conversion the text
 * uses, so babeltrace2 shows the same times.  Converted times may be
 * negative (events before the epoch, or a CPU with a negative offset);
 * CTF timestamps are unsigned, so every value is stored plus K seconds and
 * the clock's offset_s is -K, with K the smallest that makes all values
 * non-negative (0 for a normal dump).  Times that span more than a reader
 * can hold (int64 ns from the origin) are refused with a message, rather
 * than written as a trace babeltrace2 rejects; a CPU whose clock frame is
 * invalid has a stand-in conversion by then (trace/dump_read.c), so only
 * valid clocks with offsets of centuries get there.
 *
 * Loss: events_discarded is the stream's running count of lost events,
 * the page's LOST count added in the packet of that page; babeltrace2
 * reports the difference between consecutive packets as discarded events.
 * When a CPU's first page already reports loss, an empty packet at that
 * page's base time comes first, so that the loss has a packet before it
 * to be measured against.
 *
 * Order: packets of a stream must not go back in time.  A sound dump never
 * does (each CPU's stamps never decrease, docs/ring-buffer.md section 4);
 * for a damaged one, a time that would go back is raised to the previous
 * one and counted in a warning.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf.h"
#include "damage.h"

#define CTF_MAGIC		0xc1fc1fc1u
#define CTF_UNKNOWN_ID		65535u	/* event class of unknown events */
#define CTF_SYM_SUFFIX		"_sym"	/* a code address's name field: ip, ip_sym */

/* A packet being built. */
struct packet {
	uint8_t *p;		/* bytes */
	size_t len;		/* used */
	size_t cap;		/* allocated */
};

/*
 * Trust: clock_trusted is per packet, so a CPU trusted until an instant
 * (a TRUST frame) has its page that holds the instant cut in two packets
 * there, and babeltrace2 shows each event with the text's U or not.  The
 * env block carries the instants and a disputed calibration.
 */

/* State of one CPU's stream. */
struct stream {
	FILE *f;		/* its file */
	uint32_t cpu;		/* its CPU */
	bool trusted;		/* clock trusted */
	uint64_t discarded;	/* running lost count */
	uint64_t last;		/* last timestamp written (biased) */
	uint64_t raised;	/* timestamps raised to keep order */
};

static int put(struct packet *pk, const void *v, size_t n)
{
	if (pk->len + n > pk->cap) {
		size_t cap = pk->cap ? pk->cap * 2 : 8192;
		uint8_t *p;

		while (cap < pk->len + n)
			cap *= 2;
		p = realloc(pk->p, cap);
		if (!p)
			return -1;
		pk->p = p;
		pk->cap = cap;
	}
	memcpy(pk->p + pk->len, v, n);
	pk->len += n;
	return 0;
}

static int put8(struct packet *pk, uint8_t v) { return put(pk, &v, 1); }
static int put16(struct packet *pk, uint16_t v) { return put(pk, &v, 2); }
static int put32(struct packet *pk, uint32_t v) { return put(pk, &v, 4); }
static int put64(struct packet *pk, uint64_t v) { return put(pk, &v, 8); }

/* ns shifted by bias seconds, as stored. */
static uint64_t biased(int64_t ns, uint64_t bias_s)
{
	return (uint64_t)ns + bias_s * CLOCK_NSEC_PER_SEC;
}

/*
 * The smallest whole number of seconds that makes every time >= 0, or -1
 * if the times cannot be stored.  babeltrace2 turns a stored value v into
 * ns from the clock's origin in int64 (bt_util_clock_cycles_to_ns_from_
 * origin()) and rejects the trace when that fails: v must be below
 * INT64_MAX, and offset_s * 10^9 must fit, leaving a second to spare
 * (offset_s >= -9223372036).  So with offset_s = -bias:
 *   bias * 10^9 <= 2^63      (bias <= 9223372036, as 2^63 = 9223372036.85 s)
 *   max + bias * 10^9 < INT64_MAX
 */
static int64_t find_bias(int64_t min, int64_t max)
{
	/* -min <= 2^63, so the sum cannot overflow. */
	uint64_t bias = min < 0 ? ((uint64_t)0 - (uint64_t)min + CLOCK_NSEC_PER_SEC - 1) /
					  CLOCK_NSEC_PER_SEC : 0;
	__int128 top = (__int128)max + (__int128)bias * CLOCK_NSEC_PER_SEC;

	if ((__int128)bias * CLOCK_NSEC_PER_SEC > (__int128)INT64_MAX + 1 || top >= INT64_MAX)
		return -1;
	return (int64_t)bias;
}

/* One field's TSDL declaration: its real size, signedness and base. */
static void put_field_type(FILE *f, const struct trace_field_def *fd)
{
	uint32_t i;

	switch (fd->kind) {
	case TRACE_FIELD_INT:
	case TRACE_FIELD_SYM:
		fprintf(f, "\t\tinteger { size = %u; align = 8; signed = %s; base = %u; } %s;\n",
			8u * fd->size, fd->is_signed ? "true" : "false",
			fd->display == TRACE_DISPLAY_HEX ? 16u : 10u, fd->name);
		if (fd->kind == TRACE_FIELD_SYM)	/* the address's name, as the text has it */
			fprintf(f, "\t\tstring %s%s;\n", fd->name, CTF_SYM_SUFFIX);
		break;
	case TRACE_FIELD_ENUM:
		fprintf(f, "\t\tenum : integer { size = 32; align = 8; signed = false; } {");
		for (i = 0; i < fd->nenums; i++)
			fprintf(f, "%s \"%s\" = %llu", i ? "," : "", fd->enums[i].name,
				(unsigned long long)fd->enums[i].value);
		fprintf(f, " } %s;\n", fd->name);
		break;
	default:		/* CHARS, STR: NUL-terminated in the stream */
		fprintf(f, "\t\tstring %s;\n", fd->name);
		break;
	}
}

/* FNV-1a, 64 bits, continued from h. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

/*
 * The trace's UUID: the same dump always gets the same one (decoding a
 * capture twice makes the same trace), and two dumps differ in BEGIN's
 * counter reading and END's chain of every frame's CRC.  Two FNV-1a
 * hashes of those, different seeds, laid out as an RFC 9562 version 8
 * (custom) UUID.
 */
static void trace_uuid(const struct dump_result *r, char out[37])
{
	uint64_t h[2] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull };
	uint8_t u[16];

	for (int i = 0; i < 2; i++) {
		h[i] = fnv1a(h[i], &r->dump_id, sizeof(r->dump_id));
		h[i] = fnv1a(h[i], &r->begin, sizeof(r->begin));
		h[i] = fnv1a(h[i], &r->end, sizeof(r->end));
		h[i] = fnv1a(h[i], &r->events, sizeof(r->events));
		memcpy(u + 8 * i, &h[i], 8);
	}
	u[6] = (u[6] & 0x0f) | 0x80;	/* version 8 */
	u[8] = (u[8] & 0x3f) | 0x80;	/* variant 10 */
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

static int write_metadata(const char *dir, const struct dump_result *r, uint64_t bias)
{
	const struct trace_catalog *cat = dump_catalog(r);
	char path[4096], uuid[37], damaged[512];
	FILE *f;
	uint32_t id, i;

	trace_uuid(r, uuid);
	snprintf(path, sizeof(path), "%s/metadata", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "/* CTF 1.8 */\n\n"
		"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
		"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
		"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
		"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n\n"
		"trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
		"\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint32_t stream_id;\n"
		"\t};\n};\n\n", uuid);
	/* babeltrace2 names a trace after env.hostname; LTTng also sets trace_name. */
	fprintf(f, "env {\n\ttracer_name = \"baretrace\";\n\thostname = \"baretrace\";\n"
		"\ttrace_name = \"baretrace-dump-%u\";\n\tdump_id = %u;\n"
		"\tnr_cpus = %u;\n\tpage_size = %u;\n\ttsc_hz = %llu;\n\ttsc_err_ppb = %llu;\n"
		"\tcomplete = %d;\n", r->dump_id, r->dump_id, r->nr_cpus, r->page_size,
		(unsigned long long)r->begin.tsc_hz, (unsigned long long)r->begin.tsc_err_ppb,
		r->complete ? 1 : 0);
	if (r->has_calib)	/* the vote was disputed: dump_format.h, struct dump_calib */
		fprintf(f, "\tcalib_disputed = 1;\n\tcalib_ref = \"%s\";\n\tcalib_used = \"%s\";\n"
			"\tcalib_left_out = \"%s\";\n\tcalib_vote_err_ppb = %llu;\n"
			"\tcalib_spread_ppb = %llu;\n", r->calib.ref, r->calib.used,
			r->calib.left_out, (unsigned long long)r->calib.vote_err_ppb,
			(unsigned long long)r->calib.spread_ppb);
	if (dump_damage_note(r, damaged, sizeof(damaged)))	/* the text's "# damaged:" */
		fprintf(f, "\tdamaged = \"%s\";\n", damaged);
	for (i = 0; i < r->nr_cpus; i++) {
		uint64_t transit = 0;

		for (uint32_t k = 0; k < r->cpus[i].nr_pages; k++)
			transit += dump_transit_lost(&r->cpus[i], k);
		if (transit)	/* of the discarded events, those the capture lost */
			fprintf(f, "\tcpu%u_lost_in_transit = %llu;\n", i,
				(unsigned long long)transit);
	}
	for (i = 0; i < r->nr_cpus; i++)
		if (r->cpus[i].has_trust)
			fprintf(f, "\tcpu%u_untrusted_from_ns = %lld;\n", i,
				(long long)r->cpus[i].trust.from_ns);
	fprintf(f, "};\n\n");
	fprintf(f, "clock {\n\tname = \"baretrace_ns\";\n"
		"\tdescription = \"TSC cycles converted per CPU to ns since calibration\";\n"
		"\tfreq = 1000000000;\n\tprecision = 1;\n\toffset_s = %lld;\n\toffset = 0;\n"
		"\tabsolute = false;\n};\n\n"
		"typealias integer { size = 64; align = 8; signed = false; "
		"map = clock.baretrace_ns.value; } := uint64_clock_t;\n\n",
		-(long long)bias);	/* 0, not -0, for a normal dump */
	fprintf(f, "stream {\n\tid = 0;\n\tpacket.context := struct {\n"
		"\t\tuint64_clock_t timestamp_begin;\n\t\tuint64_clock_t timestamp_end;\n"
		"\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
		"\t\tuint64_t events_discarded;\n\t\tuint32_t cpu_id;\n\t\tuint64_t page_pos;\n"
		"\t\tuint8_t clock_trusted;\n\t};\n"
		"\tevent.header := struct {\n\t\tuint16_t id;\n\t\tuint64_clock_t timestamp;\n"
		"\t};\n\tevent.context := struct {\n\t\tuint8_t ctx;\n\t};\n};\n\n");
	for (id = TEV_INVALID + 1; id < cat->nr_ids; id++) {
		const struct trace_event_def *d = trace_catalog_get(cat, id);

		if (!d || id == CTF_UNKNOWN_ID)
			continue;
		fprintf(f, "event {\n\tname = \"%s\";\n\tid = %u;\n\tstream_id = 0;\n"
			"\tfields := struct {\n", d->name, id);
		for (i = 0; i < d->nfields; i++)
			put_field_type(f, &d->fields[i]);
		fprintf(f, "\t};\n};\n\n");
	}
	fprintf(f, "event {\n\tname = \"unknown\";\n\tid = %u;\n\tstream_id = 0;\n"
		"\tfields := struct {\n\t\tuint16_t event_id;\n\t\tuint32_t bytes;\n"
		"\t};\n};\n", CTF_UNKNOWN_ID);
	return fclose(f) ? -1 : 0;
}

/* A time for this stream that does not go back. */
static uint64_t in_order(struct stream *s, uint64_t t)
{
	if (t < s->last) {
		s->raised++;
		return s->last;
	}
	s->last = t;
	return t;
}

/* Header and context of a packet; sizes and end time patched later. */
static int packet_start(struct packet *pk, const struct stream *s, uint64_t begin,
			uint64_t pos)
{
	pk->len = 0;
	/* || runs left to right and stops at the first failure. */
	return put32(pk, CTF_MAGIC) || put32(pk, 0) || put64(pk, begin) ||
	       put64(pk, begin) || put64(pk, 0) || put64(pk, 0) ||
	       put64(pk, s->discarded) || put32(pk, s->cpu) || put64(pk, pos) ||
	       put8(pk, s->trusted) ? -1 : 0;
}

static int packet_finish(struct packet *pk, struct stream *s, uint64_t end)
{
	uint64_t bits = (uint64_t)pk->len * 8u;

	memcpy(pk->p + 16, &end, 8);
	memcpy(pk->p + 24, &bits, 8);
	memcpy(pk->p + 32, &bits, 8);
	return fwrite(pk->p, 1, pk->len, s->f) == pk->len ? 0 : -1;
}

/* One field as its declaration says: integers as stored, strings with a NUL. */
static int put_field(struct packet *pk, const struct trace_event_view *v,
		     const struct trace_field_def *fd, const struct trace_symbols *syms)
{
	const char *s;
	uint32_t n;
	bool cut;
	uint8_t zero = 0;

	if (fd->kind == TRACE_FIELD_BPRINT) {	/* the message, formatted */
		char msg[TRACE_BPRINT_MSG_MAX];
		int k = trace_event_bprint_message(v, syms, msg, sizeof(msg));
		if (k >= (int)sizeof(msg))
			k = (int)sizeof(msg) - 1;
		return put(pk, msg, k > 0 ? (size_t)k : 0) || put(pk, &zero, 1);
	}
	if (fd->kind == TRACE_FIELD_CHARS || fd->kind == TRACE_FIELD_STR) {
		s = trace_field_string(v, fd, &n, &cut);
		return put(pk, s, n) || (cut && put(pk, "...", 3)) || put(pk, &zero, 1);
	}
	if (fd->kind == TRACE_FIELD_SYM) {	/* the address, then "name+0xoff" or "" */
		uint64_t off = 0, x = trace_field_value(v, fd);
		const char *name = syms->lookup ? syms->lookup(syms->ctx, x, &off) : NULL;
		char sym[256];
		int k = name ? snprintf(sym, sizeof(sym), "%s+0x%llx", name,
					(unsigned long long)off) : 0;

		if (k >= (int)sizeof(sym))
			k = (int)sizeof(sym) - 1;
		return put(pk, v->data + fd->offset, fd->size) ||
		       put(pk, sym, k > 0 ? (size_t)k : 0) || put(pk, &zero, 1);
	}
	return put(pk, v->data + fd->offset, fd->size);
}

static int write_event(struct packet *pk, const struct trace_catalog *cat,
		       const struct trace_symbols *syms, const struct rb_event *ev, uint64_t t)
{
	struct trace_event_view v;
	uint32_t i;
	int rc;

	if (trace_event_parse(cat, ev->data, ev->len, &v) && v.id != CTF_UNKNOWN_ID) {
		rc = put16(pk, (uint16_t)v.id) || put64(pk, t) || put8(pk, (uint8_t)v.ctx);
		for (i = 0; i < v.def->nfields && !rc; i++)
			rc = put_field(pk, &v, &v.def->fields[i], syms);
		return rc ? -1 : 0;
	}
	return put16(pk, CTF_UNKNOWN_ID) || put64(pk, t) || put8(pk, (uint8_t)v.ctx) ||
	       put16(pk, (uint16_t)v.id) || put32(pk, v.bytes) ? -1 : 0;
}

/* Is dc's clock trusted at converted time ns? (The text's U, per event.) */
static bool trusted_at(const struct dump_cpu *dc, int64_t ns)
{
	return dc->clock_state == TRACE_CLOCK_TRUSTED ||
	       (dc->clock_state == TRACE_CLOCK_UNTRUSTED && dc->has_trust &&
		ns < dc->trust.from_ns);
}

static int write_stream(const char *dir, const struct dump_result *r,
			const struct dump_cpu *dc, uint64_t bias, struct packet *pk,
			FILE *err)
{
	struct stream s = { .cpu = dc->cpu };
	struct trace_symbols syms = dump_symbols(r);
	char path[4096];
	uint32_t i;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/stream_%u", dir, dc->cpu);
	s.f = fopen(path, "wb");
	if (!s.f)
		return -1;
	for (i = 0; i < dc->nr_pages && !rc; i++) {
		const struct rb_page_header *h = dc->pages[i];
		const struct clock_conv *conv = &dc->clock.conv;
		int64_t base_ns = clock_cycles_to_ns(conv, h->base_ts);
		uint64_t begin = in_order(&s, biased(base_ns, bias));
		uint64_t end = begin, t;
		struct rb_page_iter it;
		struct rb_event ev;

		s.trusted = trusted_at(dc, base_ns);
		if (i == 0 && dc->lost[0]) {
			/* An empty packet to measure the first loss against. */
			rc |= packet_start(pk, &s, begin, h->pos);
			rc |= packet_finish(pk, &s, begin);
		}
		s.discarded += dc->lost[i];
		rc |= packet_start(pk, &s, begin, h->pos);
		if (rb_page_iter_init(&it, h, r->page_size) == RB_ITER_END) {
			while (rb_page_iter_next(&it, &ev) == RB_ITER_EVENT) {
				int64_t ns = clock_cycles_to_ns(conv, ev.ts);

				t = in_order(&s, biased(ns, bias));
				if (trusted_at(dc, ns) != s.trusted) {	/* trust ends here */
					rc |= packet_finish(pk, &s, end);
					s.trusted = !s.trusted;
					rc |= packet_start(pk, &s, t, h->pos);
				}
				end = t;
				rc |= write_event(pk, dump_catalog(r), &syms, &ev, end);
			}
		}
		rc |= packet_finish(pk, &s, end);
	}
	if (fclose(s.f))
		rc = -1;
	if (s.raised)
		fprintf(err, "ctf: cpu %u: %llu timestamps went back in time and were raised "
			"to the previous one\n", dc->cpu, (unsigned long long)s.raised);
	return rc ? -1 : 0;
}

/*
 * A directory that held an earlier trace may have streams this one does
 * not write (more CPUs then): babeltrace2 would read them as part of this
 * trace and fail. Only our own stream_<n> names are removed, with a line each.
 */
static void remove_stale_streams(const char *dir, const struct dump_result *r, FILE *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		unsigned cpu;
		char tail, path[4096];

		if (sscanf(e->d_name, "stream_%u%c", &cpu, &tail) != 1)
			continue;
		if (cpu < r->nr_cpus && r->cpus[cpu].nr_pages)
			continue;	/* rewritten below */
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (unlink(path) == 0)
			fprintf(err, "ctf: %s: removed, a stream of an earlier trace\n", path);
	}
	closedir(d);
}

int ctf_write(const char *dir, const struct dump_result *r, FILE *err)
{
	struct packet pk = { 0 };
	int64_t min, max, bias;
	uint32_t c;
	int rc = 0;

	dump_time_range(r, true, &min, &max);	/* page bases too: packets begin there */
	bias = find_bias(min, max);
	if (bias < 0) {
		fprintf(err, "ctf: times run from %lld to %lld ns, more than one CTF clock "
			"holds (2^63 ns, as babeltrace2 reads it); no CTF trace written\n",
			(long long)min, (long long)max);
		return -1;
	}
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(err, "ctf: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	remove_stale_streams(dir, r, err);
	if (write_metadata(dir, r, (uint64_t)bias)) {
		fprintf(err, "ctf: %s/metadata: %s\n", dir, strerror(errno));
		return -1;
	}
	for (c = 0; c < r->nr_cpus && !rc; c++) {
		if (r->cpus[c].nr_pages == 0)
			continue;	/* no packets, no stream */
		rc = write_stream(dir, r, &r->cpus[c], (uint64_t)bias, &pk, err);
		if (rc)
			fprintf(err, "ctf: %s/stream_%u: %s\n", dir, c, strerror(errno));
	}
	free(pk.p);
	return rc;
}
