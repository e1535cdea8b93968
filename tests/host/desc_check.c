/*
 * The rules of tests/host/desc_check.h, one function a part.  Each
 * returns the first rule broken, or NULL.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <trace/dump_format.h>
#include <trace/event_fmt.h>
#include <trace/trace_event.h>

#include "desc_check.h"

static bool ident(const char *s)
{
	size_t n;

	if (!s || !s[0] || strlen(s) > DUMP_NAME_MAX)
		return false;
	for (n = 0; s[n]; n++) {
		char c = s[n];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';

		if (!alpha && (n == 0 || c < '0' || c > '9'))
			return false;
	}
	return true;
}

/* Printable ASCII, at most max bytes; tab and newline too if lines. */
static bool text(const char *s, size_t max, bool lines)
{
	size_t n;

	if (!s)
		return false;
	for (n = 0; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];

		if ((c < 0x20 || c >= 0x7f) && !(lines && (c == '\n' || c == '\t')))
			return false;
	}
	return n <= max;
}

static const char *field_broken(const struct trace_event_def *d, const struct trace_field_def *f)
{
	if (!ident(f->name))
		return "a field name is not an identifier";
	if (f->offset < 4 || (uint32_t)f->offset + f->size > d->fixed)
		return "a field lies outside the fixed part";
	if (f->kind != TRACE_FIELD_ENUM && f->nenums)
		return "enum entries on a field that is no enum";
	switch (f->kind) {
	case TRACE_FIELD_INT:
		if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
			return "an integer of another size than 1, 2, 4, 8";
		return f->display > TRACE_DISPLAY_BOOL ? "an unknown display" : NULL;
	case TRACE_FIELD_SYM:
		return f->size == 8 ? NULL : "a code address not of 8 bytes";
	case TRACE_FIELD_CHARS:
		return f->size >= 1 ? NULL : "a char array of no bytes";
	case TRACE_FIELD_STR:
		return f->size == 4 && f->max >= 1 && f->max <= TRACE_STR_MAX ? NULL :
		       "a string's slot or bound";
	case TRACE_FIELD_ENUM:
		if (f->size != 4)
			return "an enum not of 4 bytes";
		if (f->nenums && !f->enums)
			return "enum entries missing";
		for (uint32_t k = 0; k < f->nenums; k++)
			if (!text(f->enums[k].name, DUMP_NAME_MAX, false))
				return "an enum name is not plain text";
		return NULL;
	case TRACE_FIELD_BPRINT:
		return f->size == 4 && f->max <= TRACE_BPRINT_ARGS_MAX ? NULL :
		       "a trace_printk argument slot or bound";
	}
	return "an unknown field kind";
}

static const char *def_broken(const struct trace_event_def *d, uint32_t id)
{
	if (d->id != id || id == 0 || id == 0xffffu)
		return "an id that is not its index, or 0 or 65535";
	if (!ident(d->system) || !ident(d->name))
		return "a system or event name that is not an identifier";
	if (!text(d->fmt, DUMP_FMT_MAX, false))
		return "a print format that is not plain text";
	if (d->fixed < 4 || d->fixed % 4 || d->fixed > TRACE_EVENT_PAYLOAD_MAX)
		return "a fixed part not a multiple of 4 in 4..1024";
	if (d->nfields > TRACE_EVENT_FIELDS_MAX || (d->nfields && !d->fields))
		return "more than 8 fields, or none there";
	for (uint32_t i = 0; i < d->nfields; i++) {
		const char *why = field_broken(d, &d->fields[i]);

		if (why)
			return why;
	}
	return NULL;
}

static const char *tables_broken(const struct dump_result *r)
{
	const struct trace_symtab *t = r->syms;

	if (t) {
		if (!t->count || !t->addrs || !t->names)
			return "an empty symbol table";
		for (uint32_t i = 0; i < t->count; i++) {
			if (!text(t->names[i], DUMP_SYM_NAME_MAX, false) || !t->names[i][0])
				return "a symbol name that is not plain text";
			if (t->addrs[i] >= t->end || (i && t->addrs[i] < t->addrs[i - 1]))
				return "symbol addresses out of order or past the end";
		}
	}
	for (uint32_t i = 0; i < r->nr_fmts; i++)
		if (!text(r->fmt_texts[i], DUMP_PRINTK_FMT_MAX, true) || !r->fmt_texts[i][0])
			return "a trace_printk format that is not plain text";
	return NULL;
}

/* An event the parser accepted: every field and string inside its payload. */
static const char *view_broken(const struct trace_event_view *v, uint32_t len)
{
	const struct trace_event_def *d = v->def;
	uint32_t end = d->fixed;

	if (v->bytes != len || d->fixed > len)
		return "an accepted event shorter than its fixed part";
	for (uint32_t i = 0; i < d->nfields; i++) {
		const struct trace_field_def *f = &d->fields[i];
		uint32_t loc, off, n;

		if ((uint32_t)f->offset + f->size > len)
			return "an accepted field past its payload";
		if (f->kind != TRACE_FIELD_STR && f->kind != TRACE_FIELD_BPRINT)
			continue;
		memcpy(&loc, v->data + f->offset, 4);
		off = loc & 0xffffu;
		n = (loc >> 16) & 0x7fffu;
		if (off != end || off + n > len || n > f->max ||
		    (f->kind == TRACE_FIELD_STR && (n < 1 || v->data[off + n - 1])))
			return "an accepted string outside its payload, or without its NUL";
		end = off + n;
	}
	return NULL;
}

static const char *pages_broken(const struct dump_result *r)
{
	const struct trace_catalog *cat = dump_catalog(r);
	struct trace_symbols syms = dump_symbols(r);
	char line[2048], kind[32];

	for (uint32_t c = 0; c < r->nr_cpus; c++) {
		const struct dump_cpu *dc = &r->cpus[c];

		for (uint32_t p = 0; p < dc->nr_pages; p++) {
			struct rb_page_iter it;
			struct rb_event ev;

			if (rb_page_iter_init(&it, dc->pages[p], r->page_size) != RB_ITER_END)
				continue;
			while (rb_page_iter_next(&it, &ev) == RB_ITER_EVENT) {
				struct trace_event_view v;
				const char *why;
				int n;

				if (!trace_event_parse(cat, ev.data, ev.len, &v))
					continue;
				if (v.def != trace_catalog_get(cat, v.id))
					return "an event parsed with another id's description";
				if ((why = view_broken(&v, ev.len)))
					return why;
				n = trace_event_format(&v, &syms, line, sizeof(line));
				if (n < 0 || strlen(line) != ((size_t)n < sizeof(line) ? (size_t)n :
							     sizeof(line) - 1))
					return "an event's text and its length disagree";
				for (uint32_t i = 0; i < v.def->nfields; i++)
					trace_field_kind_name(&v.def->fields[i], kind, sizeof(kind));
			}
		}
	}
	return NULL;
}

int desc_check(const struct dump_result *r, char *why, size_t n)
{
	const struct trace_catalog *cat = r->catalog;
	const char *broken = NULL;
	uint32_t id, bad_id = UINT32_MAX;

	if (cat) {
		if (!cat->by_id || cat->nr_ids > 0x10000u)
			broken = "a catalog without entries";
		for (id = 0; !broken && id < cat->nr_ids; id++)
			if (cat->by_id[id] && (broken = def_broken(cat->by_id[id], id)))
				bad_id = id;
	}
	if (!broken)
		broken = tables_broken(r);
	if (!broken)
		broken = pages_broken(r);
	if (!broken)
		return 0;
	if (bad_id != UINT32_MAX)
		snprintf(why, n, "event id %u: %s", bad_id, broken);
	else
		snprintf(why, n, "%s", broken);
	return -1;
}
