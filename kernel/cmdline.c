/*
 * Command line parser: tokens separated by spaces, each "key" or
 * "key=value"; double quotes group a value with spaces ("a b"). Generic
 * code, tested on the host.
 */
#include "kernel/cmdline.h"
#include "lib/format.h"
#include "kernel/kstring.h"

#define TOKEN_MAX	256
#define MSG_MAX		384

extern const struct cmdline_opt __start_cmdline_opts[];
extern const struct cmdline_opt __stop_cmdline_opts[];

static const struct cmdline_opt *find(const char *key)
{
	for (const struct cmdline_opt *o = __start_cmdline_opts; o < __stop_cmdline_opts; o++)
		if (!strcmp(o->name, key))
			return o;
	return NULL;
}

/* Parse s[0 .. len) as an unsigned decimal or 0x-hex number; false if not exactly that. */
static bool parse_u64n(const char *s, size_t len, uint64_t *out)
{
	const char *end = s + len;
	uint64_t v = 0;
	unsigned base = 10;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (s == end)
		return false;
	for (; s < end; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;	/* overflow */
		v = v * base + d;
	}
	*out = v;
	return true;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	return parse_u64n(s, strlen(s), out);
}

bool cmdline_parse_size(const char *s, size_t len, uint64_t *out)
{
	unsigned shift = 0;
	uint64_t v;

	if (len && (s[len - 1] == 'K' || s[len - 1] == 'M' || s[len - 1] == 'G')) {
		shift = s[len - 1] == 'K' ? 10 : s[len - 1] == 'M' ? 20 : 30;
		len--;
	}
	if (!parse_u64n(s, len, &v) || v > UINT64_MAX >> shift)
		return false;
	*out = v << shift;
	return true;
}

static int choice_index(const char *const *choices, const char *s, size_t len)
{
	for (int i = 0; choices[i]; i++)
		if (strlen(choices[i]) == len && !strncmp(choices[i], s, len))
			return i;
	return -1;
}

static void list_choices(char *buf, size_t cap, const char *const *choices)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; choices[i] && n < cap; i++)
		n += ksnprintf(buf + n, cap - n, "%s%s", i ? "|" : "", choices[i]);
}

/* Apply value to o; on failure write what was wrong into why. */
/*
 * One parser per option kind.  Each sets *o->var from value and returns
 * true, or writes why it refused (what is accepted) and leaves the
 * variable as it was.
 */
static bool apply_flag(const struct cmdline_opt *o, const char *value, char *why, size_t cap)
{
	static const char *const yes[] = { "yes", "on", "1", "true", NULL };
	static const char *const no[] = { "no", "off", "0", "false", NULL };

	if (!value || choice_index(yes, value, strlen(value)) >= 0) {
		*(bool *)o->var = true;
		return true;
	}
	if (choice_index(no, value, strlen(value)) >= 0) {
		*(bool *)o->var = false;
		return true;
	}
	ksnprintf(why, cap, "accepted: %s, %s=yes|no", o->name, o->name);
	return false;
}

/* OPT_UINT and OPT_INT: decimal or 0x hex, a sign for INT, within bounds. */
static bool apply_number(const struct cmdline_opt *o, const char *value, char *why, size_t cap)
{
	uint64_t v;
	int64_t sv;
	bool neg = false;
	const char *s = value;

	if (!value || !*value) {
		ksnprintf(why, cap, "a number is required");
		return false;
	}
	if (*s == '-') {		/* for OPT_UINT, out of range (not "not a number") */
		neg = true;
		s++;
	}
	if (!parse_u64(s, &v)) {
		ksnprintf(why, cap, "not a number; accepted: integer %s%llu..%llu",
			  o->type == OPT_INT ? "(signed) " : "",
			  (unsigned long long)o->min, (unsigned long long)o->max);
		return false;
	}
	if (o->type == OPT_UINT) {
		if (neg || v < o->min || v > o->max) {
			ksnprintf(why, cap, "out of range; accepted: %llu..%llu",
				  (unsigned long long)o->min, (unsigned long long)o->max);
			return false;
		}
		*(uint64_t *)o->var = v;
		return true;
	}
	/* Magnitudes reach 2^63 when negative: INT64_MIN is valid. */
	if (v > (uint64_t)INT64_MAX + neg) {
		ksnprintf(why, cap, "out of range");
		return false;
	}
	sv = neg ? (int64_t)(0 - v) : (int64_t)v;
	if (sv < (int64_t)o->min || sv > (int64_t)o->max) {
		ksnprintf(why, cap, "out of range; accepted: %lld..%lld",
			  (long long)(int64_t)o->min, (long long)(int64_t)o->max);
		return false;
	}
	*(int64_t *)o->var = sv;
	return true;
}

static bool apply_enum(const struct cmdline_opt *o, const char *value, char *why, size_t cap)
{
	int i = value ? choice_index(o->choices, value, strlen(value)) : -1;
	char accepted[160];

	if (i < 0) {
		list_choices(accepted, sizeof(accepted), o->choices);
		ksnprintf(why, cap, "accepted: %s", accepted);
		return false;
	}
	*(int *)o->var = i;
	return true;
}

/* OPT_LIST and OPT_STRING: fits the buffer; a list's items among its choices. */
static bool apply_text(const struct cmdline_opt *o, const char *value, char *why, size_t cap)
{
	size_t len = value ? strlen(value) : 0;
	char accepted[160];

	if (!value || !len) {
		ksnprintf(why, cap, "a value is required");
		return false;
	}
	if (len >= o->size) {
		ksnprintf(why, cap, "longer than %zu characters", o->size - 1);
		return false;
	}
	if (o->type == OPT_LIST && o->choices) {
		/* Unknown items are named and left out; the known ones apply. */
		char *out = o->var, kept[TOKEN_MAX];
		const char *bad = value;
		size_t at = 0, bad_len = 0;
		int unknown = 0;

		if (len >= sizeof(kept)) {
			ksnprintf(why, cap, "longer than %zu characters", sizeof(kept) - 1);
			return false;
		}
		for (const char *item = value;;) {	/* empty items too: "a,,b", "a," */
			const char *end = strchr(item, ',');
			size_t n = end ? (size_t)(end - item) : strlen(item);
			if (choice_index(o->choices, item, n) < 0) {
				if (!unknown++) {
					bad = item;
					bad_len = n;
				}
			} else {
				if (at)
					kept[at++] = ',';
				memcpy(kept + at, item, n);
				at += n;
			}
			if (!end)
				break;
			item = end + 1;
		}
		kept[at] = '\0';
		if (unknown) {
			list_choices(accepted, sizeof(accepted), o->choices);
			ksnprintf(why, cap, "'%.*s'%s is not known; accepted: comma-separated %s",
				  (int)bad_len, bad, unknown > 1 ? " (and more)" : "", accepted);
			if (!at)
				return false;
			ksnprintf(why + strlen(why), cap - strlen(why), "; left out: using %s=%s",
				  o->name, kept);
		}
		memcpy(out, kept, at + 1);
		return true;
	}
	if (o->check && !o->check(value, why, cap))
		return false;
	memcpy(o->var, value, len + 1);
	return true;
}

static bool apply(const struct cmdline_opt *o, const char *value, char *why, size_t cap)
{
	switch (o->type) {
	case OPT_FLAG:
		return apply_flag(o, value, why, cap);
	case OPT_UINT:
	case OPT_INT:
		return apply_number(o, value, why, cap);
	case OPT_ENUM:
		return apply_enum(o, value, why, cap);
	case OPT_LIST:
	case OPT_STRING:
		return apply_text(o, value, why, cap);
	}
	ksnprintf(why, cap, "option has no parser");
	return false;
}

int cmdline_parse(const char *line, void (*report)(const char *msg))
{
	char tok[TOKEN_MAX], why[256], msg[MSG_MAX];
	int problems = 0;
	const char *p = line ? line : "";

	for (;;) {
		size_t n = 0;
		bool quoted = false, too_long = false;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		while (*p && (quoted || (*p != ' ' && *p != '\t'))) {
			if (*p == '"') {
				quoted = !quoted;
			} else if (n + 1 < sizeof(tok)) {
				tok[n++] = *p;
			} else {
				too_long = true;
			}
			p++;
		}
		tok[n] = '\0';
		if (too_long) {
			ksnprintf(msg, sizeof(msg), "cmdline: option '%.32s...' is longer "
				  "than %d characters; ignored", tok, TOKEN_MAX - 1);
			report(msg);
			problems++;
			continue;
		}

		char *eq = strchr(tok, '=');
		const char *value = NULL;
		if (eq) {
			*eq = '\0';
			value = eq + 1;
		}
		const struct cmdline_opt *o = find(tok);
		if (!o) {
			ksnprintf(msg, sizeof(msg), "cmdline: unknown option '%s'; "
				  "ignored (docs/options.md lists the options)", tok);
			report(msg);
			problems++;
			continue;
		}
		why[0] = '\0';
		if (!apply(o, value, why, sizeof(why))) {
			ksnprintf(msg, sizeof(msg), "cmdline: %s=%s: invalid value: %s; "
				  "left unchanged", tok, value ? value : "", why);
			report(msg);
			problems++;
		} else if (why[0]) {	/* applied in part: why names what was left out */
			ksnprintf(msg, sizeof(msg), "cmdline: %s=%s: %s", tok, value, why);
			report(msg);
			problems++;
		}
	}
	return problems;
}

bool cmdline_list_has(const char *list, const char *item)
{
	size_t len = strlen(item);

	while (list && *list) {
		const char *end = strchr(list, ',');
		size_t n = end ? (size_t)(end - list) : strlen(list);
		if (n == len && !strncmp(list, item, n))
			return true;
		list += n + (end ? 1 : 0);
	}
	return false;
}
