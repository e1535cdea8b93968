/*
 * Binary printk: encoding the arguments (kernel) and formatting them
 * (readers), one format parser for both.  See <trace/bprint.h>.
 */
#include <stdbool.h>
#include "trace/bprint.h"
#include "lib/format.h"

/* One conversion of a format, as parsed. */
struct spec {
	const char *start;		/* its '%' */
	uint32_t len;			/* its length in the format */
	char conv;			/* d i u x X o c s p %, or 0: unknown */
	int lmod;			/* 0 int, 1 char (hh), 2 short (h), 3 long, 4 long long, 5 size_t, 6 intmax, 7 ptrdiff */
	bool star_width, star_prec;
};

/* Parse the conversion at *p (just past '%'); moves *p past it. */
static void parse_spec(const char **p, struct spec *s)
{
	const char *q = *p;

	s->start = q - 1;
	s->star_width = s->star_prec = false;
	s->lmod = 0;
	while (*q == '-' || *q == '+' || *q == ' ' || *q == '#' || *q == '0')
		q++;
	if (*q == '*') {
		s->star_width = true;
		q++;
	} else {
		while (*q >= '0' && *q <= '9')
			q++;
	}
	if (*q == '.') {
		q++;
		if (*q == '*') {
			s->star_prec = true;
			q++;
		} else {
			while (*q >= '0' && *q <= '9')
				q++;
		}
	}
	if (q[0] == 'h' && q[1] == 'h') {
		s->lmod = 1;
		q += 2;
	} else if (q[0] == 'l' && q[1] == 'l') {
		s->lmod = 4;
		q += 2;
	} else if (*q == 'h' || *q == 'l' || *q == 'z' || *q == 'j' || *q == 't') {
		s->lmod = *q == 'h' ? 2 : *q == 'l' ? 3 : *q == 'z' ? 5 : *q == 'j' ? 6 : 7;
		q++;
	}
	switch (*q) {
	case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c': case 's': case 'p':
	case '%':
		s->conv = *q++;
		break;
	default:
		s->conv = 0;
		break;
	}
	s->len = (uint32_t)(q - s->start);
	*p = q;
}

static bool is_signed_conv(char c)
{
	return c == 'd' || c == 'i';
}

/* An integer argument of s's length, from ap, widened to 64 bits. */
static uint64_t va_int(const struct spec *s, va_list *ap)
{
	bool sg = is_signed_conv(s->conv);

	switch (s->lmod) {
	case 1: return sg ? (uint64_t)(int64_t)(signed char)va_arg(*ap, int)
			  : (uint64_t)(unsigned char)va_arg(*ap, unsigned);
	case 2: return sg ? (uint64_t)(int64_t)(short)va_arg(*ap, int)
			  : (uint64_t)(unsigned short)va_arg(*ap, unsigned);
	case 3: return sg ? (uint64_t)(int64_t)va_arg(*ap, long) : (uint64_t)va_arg(*ap, unsigned long);
	case 4: return sg ? (uint64_t)va_arg(*ap, long long) : (uint64_t)va_arg(*ap, unsigned long long);
	case 5: return (uint64_t)va_arg(*ap, size_t);
	case 6: return sg ? (uint64_t)va_arg(*ap, long long) : (uint64_t)va_arg(*ap, unsigned long long);
	case 7: return (uint64_t)va_arg(*ap, long);
	default: return sg ? (uint64_t)(int64_t)va_arg(*ap, int) : (uint64_t)va_arg(*ap, unsigned);
	}
}

static bool put8b(uint8_t *buf, uint32_t cap, uint32_t *at, uint64_t v)
{
	if (cap - *at < 8)
		return false;
	for (int i = 0; i < 8; i++)
		buf[*at + i] = (uint8_t)(v >> (8 * i));
	*at += 8;
	return true;
}

uint32_t trace_bprint_encode(uint8_t *buf, uint32_t cap, const char *fmt, va_list ap0)
{
	va_list ap;
	uint32_t at = 0;
	const char *p = fmt;
	struct spec s;

	va_copy(ap, ap0);
	while (*p) {
		if (*p++ != '%')
			continue;
		parse_spec(&p, &s);
		if (!s.conv)
			break;
		if (s.conv == '%')
			continue;
		if (s.star_width && !put8b(buf, cap, &at, (uint64_t)(int64_t)va_arg(ap, int)))
			break;
		if (s.star_prec && !put8b(buf, cap, &at, (uint64_t)(int64_t)va_arg(ap, int)))
			break;
		if (s.conv == 's') {
			const char *str = va_arg(ap, const char *);
			uint32_t n = 0;

			if (!str)
				str = "(null)";
			while (n <= TRACE_BPRINT_STR_MAX && str[n])
				n++;
			bool cut = n > TRACE_BPRINT_STR_MAX;
			if (cut)
				n = TRACE_BPRINT_STR_MAX;
			if (cap - at < 2 + n)
				break;
			buf[at] = (uint8_t)n;
			buf[at + 1] = (uint8_t)(n >> 8 | (cut ? 0x80 : 0));
			for (uint32_t i = 0; i < n; i++)
				buf[at + 2 + i] = (uint8_t)str[i];
			at += 2 + n;
		} else if (s.conv == 'p') {
			if (!put8b(buf, cap, &at, (uint64_t)(uintptr_t)va_arg(ap, void *)))
				break;
		} else if (s.conv == 'c') {
			if (!put8b(buf, cap, &at, (uint64_t)(unsigned char)va_arg(ap, int)))
				break;
		} else if (!put8b(buf, cap, &at, va_int(&s, &ap))) {
			break;
		}
	}
	va_end(ap);
	return at;
}

/* ---- formatting ---- */


static bool get8b(const uint8_t *a, uint32_t len, uint32_t *at, uint64_t *v)
{
	if (len - *at < 8)
		return false;
	*v = 0;
	for (int i = 7; i >= 0; i--)
		*v = *v << 8 | a[*at + i];
	*at += 8;
	return true;
}

/* The spec with its length modifier and '*'s dropped: flags, width, precision, conv. */
static void plain_spec(const struct spec *s, int width, int prec, bool left, char *out,
		       size_t n, const char *lmod)
{
	char flags[8];
	uint32_t k = 0;
	const char *q = s->start + 1;

	if (left)
		flags[k++] = '-';
	while (k < sizeof(flags) - 1 && (*q == '-' || *q == '+' || *q == ' ' || *q == '#' || *q == '0'))
		flags[k++] = *q++;
	flags[k] = 0;
	if (prec >= 0)
		ksnprintf(out, n, "%%%s%d.%d%s%c", flags, width, prec, lmod, s->conv);
	else
		ksnprintf(out, n, "%%%s%d%s%c", flags, width, lmod, s->conv);
}

static int spec_number(const char **q);

/* Width and precision written in the format (not '*'): -1 if absent. */
static void spec_numbers(const struct spec *s, int *width, int *prec)
{
	const char *q = s->start + 1;

	*width = -1;
	*prec = -1;
	while (*q == '-' || *q == '+' || *q == ' ' || *q == '#' || *q == '0')
		q++;
	if (*q >= '0' && *q <= '9')
		*width = spec_number(&q);
	else if (*q == '*')
		q++;
	if (*q == '.') {
		q++;
		*prec = spec_number(&q);
	}
}

/* Digits at *q, moved past, as a number up to TRACE_BPRINT_WIDTH_MAX. */
static int spec_number(const char **q)
{
	int n = 0;

	for (; **q >= '0' && **q <= '9'; (*q)++)
		if (n <= TRACE_BPRINT_WIDTH_MAX)	/* n * 10 + 9 fits an int */
			n = n * 10 + (**q - '0');
	return n < TRACE_BPRINT_WIDTH_MAX ? n : TRACE_BPRINT_WIDTH_MAX;
}

/* A '*' argument (an int, sign-extended), its size at most TRACE_BPRINT_WIDTH_MAX. */
static int star_number(uint64_t v)
{
	int64_t n = (int32_t)(uint32_t)v;

	if (n > TRACE_BPRINT_WIDTH_MAX)
		return TRACE_BPRINT_WIDTH_MAX;
	return n < -TRACE_BPRINT_WIDTH_MAX ? -TRACE_BPRINT_WIDTH_MAX : (int)n;
}

int trace_bprint_format(char *buf, size_t size, const char *fmt, const uint8_t *a, uint32_t len)
{
	struct kbuf o = { buf, size, 0 };
	const char *p = fmt;
	uint32_t at = 0;
	struct spec s;
	char spec[48];

	if (size)
		buf[0] = 0;
	while (*p) {
		const char *lit = p;
		int width, prec;
		bool left = false;
		uint64_t v;

		while (*p && *p != '%')
			p++;
		if (p > lit)
			kbuf_printf(&o, "%.*s", (int)(p - lit), lit);
		if (!*p)
			break;
		p++;
		parse_spec(&p, &s);
		if (!s.conv) {
			kbuf_printf(&o, "%%?");
			break;
		}
		if (s.conv == '%') {
			kbuf_printf(&o, "%%");
			continue;
		}
		spec_numbers(&s, &width, &prec);
		if (s.star_width) {
			if (!get8b(a, len, &at, &v))
				goto short_args;
			width = star_number(v);
			if (width < 0) {	/* C: a negative '*' width is '-' and its size */
				width = -width;
				left = true;
			}
		}
		if (s.star_prec) {
			if (!get8b(a, len, &at, &v))
				goto short_args;
			prec = star_number(v);
			if (prec < 0)
				prec = -1;
		}
		if (width < 0)
			width = 0;
		if (s.conv == 's') {
			uint32_t n;
			bool cut;

			if (len - at < 2)
				goto short_args;
			n = a[at] | (uint32_t)(a[at + 1] & 0x7f) << 8;
			cut = (a[at + 1] & 0x80) != 0;
			if (len - at - 2 < n)
				goto short_args;
			{
				char str[TRACE_BPRINT_STR_MAX + 4];
				uint32_t k = n < TRACE_BPRINT_STR_MAX ? n : TRACE_BPRINT_STR_MAX;
				__builtin_memcpy(str, a + at + 2, k);
				if (cut) {
					str[k++] = '.';
					str[k++] = '.';
					str[k++] = '.';
				}
				str[k] = 0;
				plain_spec(&s, width, prec, left, spec, sizeof(spec), "");
				kbuf_printf(&o, spec, str);
			}
			at += 2 + n;
			continue;
		}
		if (!get8b(a, len, &at, &v))
			goto short_args;
		if (s.conv == 'p') {
			kbuf_printf(&o, "0x%llx", (unsigned long long)v);
		} else if (s.conv == 'c') {
			plain_spec(&s, width, -1, left, spec, sizeof(spec), "");
			kbuf_printf(&o, spec, (int)(unsigned char)v);
		} else {
			plain_spec(&s, width, prec, left, spec, sizeof(spec), "ll");
			if (is_signed_conv(s.conv))
				kbuf_printf(&o, spec, (long long)v);
			else
				kbuf_printf(&o, spec, (unsigned long long)v);
		}
	}
	return (int)o.len;
short_args:
	kbuf_printf(&o, "[...]");
	return (int)o.len;
}
