/*
 * In-kernel tests. KTEST(name) { ... } defines a test in the "ktests" linker
 * section; it returns NULL on success or a string saying what failed
 * (KT_ASSERT builds one with the file and line). The runner prints KTAP:
 *
 *   KTAP version 1
 *   1..N
 *   ok 1 name
 *   not ok 2 name # reason
 */
#ifndef KERNEL_KTEST_H
#define KERNEL_KTEST_H

#include <stdbool.h>
#include "baretrace/compiler.h"

struct ktest {
	const char *name;		/* selected by ktest=NAME,... */
	const char *(*fn)(void);	/* NULL = pass, else the reason */
};

#define KTEST(id)							\
	static const char *ktest_fn_##id(void);				\
	static const struct ktest __ktest_##id				\
	__section("ktests") __used __aligned(8) = { #id, ktest_fn_##id }; \
	static const char *ktest_fn_##id(void)

#define KT_STR2(x) #x
#define KT_STR(x) KT_STR2(x)
#define KT_ASSERT(cond)							\
	do {								\
		if (!(cond))						\
			return __FILE__ ":" KT_STR(__LINE__) ": " #cond; \
	} while (0)

/* A test that cannot run here says why; KTAP prints it as "ok N name # SKIP why". */
#define KT_SKIP(why) ("SKIP " why)

/*
 * Run the tests named in selection ("all" or a comma list); true if all pass.
 * A Ctrl-C between two tests ends the run (false).
 */
bool ktest_run(const char *selection);
/* Names in selection that match no test: say(name, len) for each; their count. */
int ktest_unknown(const char *selection, void (*say)(const char *name, int len));

#endif
