/* KTAP runner for the tests registered with KTEST(). */
#include <arch/watchdog.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/ktest.h"
#include "lib/format.h"
#include "kernel/kstring.h"

extern const struct ktest __start_ktests[];
extern const struct ktest __stop_ktests[];

static char selection[256] = "all";
CMDLINE_OPTION(ktest, .name = "ktest", .type = OPT_LIST, .var = selection,
	       .size = sizeof(selection),
	       .help = "in-kernel tests to run with run=ktest: all, or a comma list of names");

static bool selected(const char *sel, const char *name)
{
	return !strcmp(sel, "all") || cmdline_list_has(sel, name);
}

int ktest_unknown(const char *sel, void (*say)(const char *name, int len))
{
	int unknown = 0;

	for (const char *p = sel; *p && strcmp(sel, "all");) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		bool found = false;
		for (const struct ktest *t = __start_ktests; t < __stop_ktests; t++)
			if (strlen(t->name) == len && !strncmp(t->name, p, len))
				found = true;
		if (!found) {
			say(p, (int)len);
			unknown++;
		}
		p += len + (end ? 1 : 0);
	}
	return unknown;
}

static void say_unknown(const char *name, int len)
{
	printk("ktest: no test named '%.*s'\n", len, name);
}

bool ktest_run(const char *sel)
{
	int n = 0, i = 0, failed = 0, unknown;

	if (!sel)
		sel = selection;
	/* Names in the selection that match no test are an error, not a skip. */
	unknown = ktest_unknown(sel, say_unknown);

	for (const struct ktest *t = __start_ktests; t < __stop_ktests; t++)
		n += selected(sel, t->name);
	console_write("KTAP version 1\n", 15);
	printk("ktest: running %d of %d tests\n",
	       n, (int)(__stop_ktests - __start_ktests));
	{
		char plan[32];	/* the plan line is bare KTAP, without the printk prefix */
		int len = ksnprintf(plan, sizeof(plan), "1..%d\n", n);
		console_write(plan, len);
	}
	for (const struct ktest *t = __start_ktests; t < __stop_ktests; t++) {
		if (!selected(sel, t->name))
			continue;
		if (console_cancelled()) {	/* Ctrl-C: the plan stays unmet, so a fail */
			printk("ktest: cut by Ctrl-C after %d of %d tests\n", i, n);
			return false;
		}
		watchdog_touch();	/* each test is watched from its start */
		const char *why = t->fn();
		bool skip = why && !strncmp(why, "SKIP ", 5);
		i++;
		if (skip) {
			char line[160];
			int len = ksnprintf(line, sizeof(line), "ok %d %s # SKIP %s\n", i,
					    t->name, why + 5);
			console_write(line, len < (int)sizeof(line) ? len : (int)sizeof(line) - 1);
			continue;
		}
		if (why) {
			failed++;
			printk("ktest: %s failed: %s\n", t->name, why);
		}
		/* Result lines are bare KTAP too. */
		char line[256];
		int len = why ? ksnprintf(line, sizeof(line), "not ok %d %s # %s\n", i, t->name, why)
			      : ksnprintf(line, sizeof(line), "ok %d %s\n", i, t->name);
		if (len >= (int)sizeof(line)) {
			len = sizeof(line) - 1;
			line[len - 1] = '\n';
		}
		console_write(line, len);
	}
	printk("ktest: pass=%d fail=%d unknown=%d\n", n - failed, failed, unknown);
	return failed == 0 && unknown == 0;
}
