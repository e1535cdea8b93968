/*
 * Reading and printing event payloads from their descriptions (see
 * <trace/event_fmt.h>).  Every check is made before a byte is read, so a
 * payload from a damaged capture can be rejected but never read past.
 */
#include "trace/event_fmt.h"
#include "lib/format.h"
#include "trace/ring_format.h"

static uint64_t load_le(const uint8_t *p, uint32_t size)
{
	uint64_t v = 0;

	for (uint32_t i = size; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/*
 * A STR or BPRINT field's loc, checked against the payload: end offset,
 * or 0 if bad.  A string keeps its NUL (len >= 1); arguments may be empty.
 */
static uint32_t str_end(const struct trace_event_view *v, const struct trace_field_def *f,
			uint32_t start)
{
	uint32_t loc = (uint32_t)load_le(v->data + f->offset, 4);
	uint32_t off = loc & 0xffffu, len = (loc >> 16) & 0x7fffu;
	bool str = f->kind == TRACE_FIELD_STR;

	if (f->size != 4 || off != start || (str && len < 1) || len > f->max ||
	    off + len > v->bytes || (str && v->data[off + len - 1] != 0) ||
	    (!str && (loc & TRACE_STR_CUT)))
		return 0;
	return off + len;
}

static bool field_ok(const struct trace_event_def *d, const struct trace_field_def *f)
{
	if (f->offset < 4 || f->offset + (uint32_t)f->size > d->fixed)
		return false;
	switch (f->kind) {
	case TRACE_FIELD_INT:
		return f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8;
	case TRACE_FIELD_SYM:
		return f->size == 8;
	case TRACE_FIELD_CHARS:
		return f->size >= 1;
	case TRACE_FIELD_STR:
		return f->size == 4 && f->max >= 1;
	case TRACE_FIELD_ENUM:
		return f->size == 4;
	case TRACE_FIELD_BPRINT:
		return f->size == 4 && f->max <= TRACE_BPRINT_ARGS_MAX;
	}
	return false;
}

bool trace_event_parse(const struct trace_catalog *cat, const uint8_t *data, uint32_t len,
		       struct trace_event_view *v)
{
	const struct trace_event_def *d;
	uint32_t words, end, i;

	v->def = 0;
	v->data = data;
	v->bytes = len;
	v->id = v->ctx = 0;
	if (len < 4)
		return false;
	v->id = data[0] | (uint32_t)data[1] << 8;
	v->ctx = data[2];
	words = data[3];
	d = trace_catalog_get(cat ? cat : &trace_builtin_catalog, v->id);
	if (!d || v->ctx >= 4 || d->fixed < 4 || d->fixed % 4 || words != (d->fixed - 4u) / 4u ||
	    len < d->fixed)
		return false;
	end = d->fixed;
	for (i = 0; i < d->nfields; i++) {
		const struct trace_field_def *f = &d->fields[i];
		if (!field_ok(d, f))
			return false;
		if ((f->kind == TRACE_FIELD_STR || f->kind == TRACE_FIELD_BPRINT) &&
		    !(end = str_end(v, f, end)))
			return false;
	}
	if (rb_payload_round(end) != len)
		return false;
	v->def = d;
	return true;
}

uint64_t trace_field_value(const struct trace_event_view *v, const struct trace_field_def *f)
{
	uint32_t size = f->size > 8 ? 8 : f->size;
	uint64_t x = load_le(v->data + f->offset, size);

	if (f->kind == TRACE_FIELD_INT && f->is_signed && size < 8 && (x >> (8 * size - 1)) & 1)
		x |= ~0ull << (8 * size);
	return x;
}

const char *trace_field_string(const struct trace_event_view *v, const struct trace_field_def *f,
			       uint32_t *len, bool *cut)
{
	const char *s = (const char *)v->data + f->offset;
	uint32_t n = 0, loc;

	*cut = false;
	if (f->kind == TRACE_FIELD_CHARS) {
		while (n < f->size && s[n])
			n++;
		*len = n;
		return s;
	}
	loc = (uint32_t)load_le(v->data + f->offset, 4);
	*cut = (loc & TRACE_STR_CUT) != 0;
	*len = ((loc >> 16) & 0x7fffu) - 1;	/* parse checked len >= 1 */
	return (const char *)v->data + (loc & 0xffffu);
}


static void out_text(struct kbuf *o, const char *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		char c = s[i];
		kbuf_printf(o, "%c", c >= 0x20 && c < 0x7f ? c : '?');
	}
}

static void put_field(struct kbuf *o, const struct trace_event_view *v,
		      const struct trace_field_def *f, const struct trace_symbols *syms)
{
	uint64_t x, off = 0;
	const char *s;
	uint32_t n;
	bool cut;

	switch (f->kind) {
	case TRACE_FIELD_INT:
		x = trace_field_value(v, f);
		if (f->display == TRACE_DISPLAY_HEX)
			kbuf_printf(o, "0x%llx", (unsigned long long)x);
		else if (f->is_signed)
			kbuf_printf(o, "%lld", (long long)x);
		else
			kbuf_printf(o, "%llu", (unsigned long long)x);
		break;
	case TRACE_FIELD_SYM:
		x = trace_field_value(v, f);
		s = syms && syms->lookup ? syms->lookup(syms->ctx, x, &off) : 0;
		if (s)
			kbuf_printf(o, "%s+0x%llx", s, (unsigned long long)off);
		else
			kbuf_printf(o, "0x%llx", (unsigned long long)x);
		break;
	case TRACE_FIELD_ENUM:
		x = trace_field_value(v, f);
		for (n = 0; n < f->nenums; n++)
			if (f->enums[n].value == x && f->enums[n].name)
				break;
		if (n < f->nenums)
			kbuf_printf(o, "%s", f->enums[n].name);
		else
			kbuf_printf(o, "%llu", (unsigned long long)x);
		break;
	case TRACE_FIELD_CHARS:
	case TRACE_FIELD_STR:
		s = trace_field_string(v, f, &n, &cut);
		out_text(o, s, n);
		if (cut)
			kbuf_printf(o, "...");
		break;
	case TRACE_FIELD_BPRINT:	/* outside a bprint event: its size only */
		kbuf_printf(o, "[%u bytes]", (unsigned)((load_le(v->data + f->offset, 4) >> 16) & 0x7fffu));
		break;
	}
}

/* The message of a trace_printk event: its format (from syms) with its arguments. */
static void put_bprint(struct kbuf *o, const struct trace_event_view *v,
		       const struct trace_field_def *args, uint64_t fmt_addr,
		       const struct trace_symbols *syms)
{
	const char *fmt = syms && syms->format ? syms->format(syms->ctx, fmt_addr) : 0;
	uint32_t loc = (uint32_t)load_le(v->data + args->offset, 4);
	char msg[TRACE_BPRINT_MSG_MAX];
	size_t n;

	if (!fmt) {
		kbuf_printf(o, "[format 0x%llx unknown]", (unsigned long long)fmt_addr);
		return;
	}
	trace_bprint_format(msg, sizeof(msg), fmt, v->data + (loc & 0xffffu), (loc >> 16) & 0x7fffu);
	n = __builtin_strlen(msg);
	if (n && msg[n - 1] == '\n')	/* a line's own newline, as ftrace prints it */
		msg[--n] = 0;
	out_text(o, msg, (uint32_t)n);
}

int trace_event_bprint_message(const struct trace_event_view *v, const struct trace_symbols *syms,
			       char *buf, size_t size)
{
	struct kbuf o = { buf, size, 0 };

	if (size)
		buf[0] = 0;
	if (trace_event_is_bprint(v->def))
		put_bprint(&o, v, &v->def->fields[2], trace_field_value(v, &v->def->fields[1]), syms);
	return (int)o.len;
}

bool trace_event_is_bprint(const struct trace_event_def *d)
{
	return d && d->nfields == 3 && d->fields[0].kind == TRACE_FIELD_SYM &&
	       d->fields[1].kind == TRACE_FIELD_INT && d->fields[1].size == 8 &&
	       d->fields[2].kind == TRACE_FIELD_BPRINT;
}

int trace_event_format(const struct trace_event_view *v, const struct trace_symbols *syms,
		       char *buf, size_t size)
{
	struct kbuf o = { buf, size, 0 };

	if (size)
		buf[0] = 0;
	if (trace_event_is_bprint(v->def)) {	/* "<function>: <message>" */
		uint64_t ip = trace_field_value(v, &v->def->fields[0]), off;
		const char *fn = syms && syms->lookup ? syms->lookup(syms->ctx, ip, &off) : 0;

		if (fn)
			kbuf_printf(&o, "%s: ", fn);
		else
			kbuf_printf(&o, "0x%llx: ", (unsigned long long)ip);
		put_bprint(&o, v, &v->def->fields[2], trace_field_value(v, &v->def->fields[1]), syms);
		return (int)o.len;
	}
	for (uint32_t i = 0; v->def && i < v->def->nfields; i++) {
		const struct trace_field_def *f = &v->def->fields[i];
		kbuf_printf(&o, "%s%s=", i ? " " : "", f->name);
		put_field(&o, v, f, syms);
	}
	return (int)o.len;
}

const char *trace_symtab_lookup(const void *ctx, uint64_t addr, uint64_t *offset)
{
	const struct trace_symtab *t = ctx;
	uint32_t lo = 0, hi;

	if (!t || !t->count || addr < t->addrs[0] || addr >= t->end)
		return 0;
	hi = t->count;
	while (hi - lo > 1) {	/* addrs[lo] <= addr < addrs[hi] */
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->addrs[mid] <= addr)
			lo = mid;
		else
			hi = mid;
	}
	*offset = addr - t->addrs[lo];
	return t->names[lo];
}

int trace_field_kind_name(const struct trace_field_def *f, char *buf, size_t size)
{
	switch (f->kind) {
	case TRACE_FIELD_INT:
		if (f->display == TRACE_DISPLAY_BOOL)
			return ksnprintf(buf, size, "bool");
		return ksnprintf(buf, size, "%c%u",
				 f->display == TRACE_DISPLAY_HEX ? 'x' : f->is_signed ? 's' : 'u',
				 8u * f->size);
	case TRACE_FIELD_SYM:
		return ksnprintf(buf, size, "sym");
	case TRACE_FIELD_CHARS:
		return ksnprintf(buf, size, "char[%u]", f->size);
	case TRACE_FIELD_STR:
		return ksnprintf(buf, size, "str[%u]", f->max);
	case TRACE_FIELD_ENUM:
		return ksnprintf(buf, size, "enum");
	case TRACE_FIELD_BPRINT:
		return ksnprintf(buf, size, "bprint");
	}
	return ksnprintf(buf, size, "kind%u", f->kind);
}
