/*
 * kvsnprintf: the only formatter, shared by the kernel's printk and shell
 * and by the portable core's text and dump reader (so it lives in trace/,
 * which includes nothing from kernel/); compiled for the host too and
 * checked there against libc.
 */
#include <stdint.h>
#include <stdbool.h>
#include "lib/format.h"

struct out {
	char *buf;		/* destination, may be NULL when size is 0 */
	size_t size;		/* capacity including the NUL */
	size_t len;		/* characters produced so far (may exceed size) */
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void pad(struct out *o, char c, int n)
{
	while (n-- > 0)
		put(o, c);
}

enum {
	F_LEFT = 1,	/* '-' */
	F_ZERO = 2,	/* '0' */
	F_PLUS = 4,	/* '+' */
	F_SPACE = 8,	/* ' ' */
	F_ALT = 16,	/* '#' */
};

/* Print an unsigned magnitude with sign/prefix, width and precision. */
static void put_number(struct out *o, uint64_t v, bool neg, unsigned base,
		       bool upper, int flags, int width, int prec)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0;
	const char *prefix = "";
	int plen, zeros, total;
	/* Decided before '#' raises prec below: "%#08o" still pads with zeros. */
	bool zero_pad = prec < 0 && (flags & F_ZERO) && !(flags & F_LEFT);

	if (v == 0 && prec == 0) {
		n = 0;		/* "%.0d" of 0 prints no digits */
	} else {
		do {
			tmp[n++] = digits[v % base];
			v /= base;
		} while (v);
	}

	if (neg)
		prefix = "-";
	else if (flags & F_PLUS)
		prefix = "+";
	else if (flags & F_SPACE)
		prefix = " ";
	if ((flags & F_ALT) && base == 16 && n > 0 && !(n == 1 && tmp[0] == '0'))
		prefix = upper ? "0X" : "0x";
	if ((flags & F_ALT) && base == 8 && (n == 0 || tmp[n - 1] != '0') && prec <= n)
		prec = n + 1;
	plen = 0;
	while (prefix[plen])
		plen++;

	zeros = prec > n ? prec - n : 0;
	if (zero_pad && width - plen - n > zeros)
		zeros = width - plen - n;
	total = plen + zeros + n;

	if (!(flags & F_LEFT))
		pad(o, ' ', width - total);
	for (int i = 0; i < plen; i++)
		put(o, prefix[i]);
	pad(o, '0', zeros);
	while (n)
		put(o, tmp[--n]);
	if (flags & F_LEFT)
		pad(o, ' ', width - total);
}

static void put_string(struct out *o, const char *s, int flags, int width, int prec)
{
	int n = 0;

	if (!s)
		s = "(null)";
	while ((prec < 0 || n < prec) && s[n])
		n++;
	if (!(flags & F_LEFT))
		pad(o, ' ', width - n);
	for (int i = 0; i < n; i++)
		put(o, s[i]);
	if (flags & F_LEFT)
		pad(o, ' ', width - n);
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		int flags = 0, width = 0, prec = -1, lmod = 0;
		unsigned base = 10;
		bool is_signed = false, upper = false;
		uint64_t uv;
		int64_t sv;

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '-') flags |= F_LEFT;
			else if (*fmt == '0') flags |= F_ZERO;
			else if (*fmt == '+') flags |= F_PLUS;
			else if (*fmt == ' ') flags |= F_SPACE;
			else if (*fmt == '#') flags |= F_ALT;
			else break;
		}
		if (*fmt == '*') {
			width = va_arg(ap, int);
			if (width < 0) {
				flags |= F_LEFT;
				width = -width;
			}
			fmt++;
		} else {
			while (*fmt >= '0' && *fmt <= '9')
				width = width * 10 + (*fmt++ - '0');
		}
		if (*fmt == '.') {
			fmt++;
			prec = 0;
			if (*fmt == '*') {
				prec = va_arg(ap, int);
				if (prec < 0)
					prec = -1;
				fmt++;
			} else {
				while (*fmt >= '0' && *fmt <= '9')
					prec = prec * 10 + (*fmt++ - '0');
			}
		}
		/* lmod: 0 int, 1 char, 2 short, 3 long, 4 long long/size_t/intmax */
		if (*fmt == 'h') {
			lmod = 2;
			if (*++fmt == 'h') {
				lmod = 1;
				fmt++;
			}
		} else if (*fmt == 'l') {
			lmod = 3;
			if (*++fmt == 'l') {
				lmod = 4;
				fmt++;
			}
		} else if (*fmt == 'z' || *fmt == 'j' || *fmt == 't') {
			lmod = 4;
			fmt++;
		}

		switch (*fmt) {
		case 'd':
		case 'i':
			is_signed = true;
			break;
		case 'u':
			break;
		case 'x':
			base = 16;
			break;
		case 'X':
			base = 16;
			upper = true;
			break;
		case 'o':
			base = 8;
			break;
		case 'p':
			put_number(&o, (uintptr_t)va_arg(ap, void *), false, 16,
				   false, flags | F_ALT, width, prec);
			continue;
		case 'c':
			if (!(flags & F_LEFT))
				pad(&o, ' ', width - 1);
			put(&o, (char)va_arg(ap, int));
			if (flags & F_LEFT)
				pad(&o, ' ', width - 1);
			continue;
		case 's':
			put_string(&o, va_arg(ap, const char *), flags, width, prec);
			continue;
		case '%':
			put(&o, '%');
			continue;
		case '\0':
			fmt--;	/* lone '%' at the end: print nothing more */
			continue;
		default:
			/* Unknown conversion: print it verbatim so the bug shows. */
			put(&o, '%');
			put(&o, *fmt);
			continue;
		}

		if (is_signed) {
			switch (lmod) {
			case 1: sv = (signed char)va_arg(ap, int); break;
			case 2: sv = (short)va_arg(ap, int); break;
			case 3: sv = va_arg(ap, long); break;
			case 4: sv = va_arg(ap, long long); break;
			default: sv = va_arg(ap, int); break;
			}
			uv = sv < 0 ? (uint64_t)0 - (uint64_t)sv : (uint64_t)sv;
			put_number(&o, uv, sv < 0, base, upper, flags & ~F_ALT, width, prec);
		} else {
			switch (lmod) {
			case 1: uv = (unsigned char)va_arg(ap, unsigned int); break;
			case 2: uv = (unsigned short)va_arg(ap, unsigned int); break;
			case 3: uv = va_arg(ap, unsigned long); break;
			case 4: uv = va_arg(ap, unsigned long long); break;
			default: uv = va_arg(ap, unsigned int); break;
			}
			put_number(&o, uv, false, base, upper,
				   flags & ~(F_PLUS | F_SPACE), width, prec);
		}
	}
	if (o.size)
		o.buf[o.len < o.size ? o.len : o.size - 1] = '\0';
	return (int)o.len;
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void kbuf_printf(struct kbuf *b, const char *fmt, ...)
{
	va_list ap;
	size_t room = b->len < b->size ? b->size - b->len : 0;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(room ? b->buf + b->len : 0, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n;
}
