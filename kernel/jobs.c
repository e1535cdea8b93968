/*
 * Jobs: what the kernel does once booted, chosen with run= (comma list, in
 * order). With "exit" on the command line the kernel leaves QEMU when the
 * jobs end, with success only if every job succeeded; otherwise it idles.
 */
#include <stdbool.h>
#include <arch/cpu.h>
#include <arch/exit.h>
#include <arch/watchdog.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/bench.h"
#include "kernel/demo.h"
#include "kernel/dump.h"
#include "kernel/jobs.h"
#include "kernel/kstring.h"
#include "kernel/ktest.h"
#include "kernel/shell.h"

static const char *const job_names[] = { "ktest", "fault", "shell", "echo", "demo", "bench", "dump", "marks", "triple", "hang", NULL };

static char run_list[128] = "";
static bool exit_when_done;

CMDLINE_OPTION(run, .name = "run", .type = OPT_LIST, .var = run_list,
	       .size = sizeof(run_list), .choices = job_names,
	       .help = "jobs to run after boot, in order (comma list)");
CMDLINE_OPTION(exit, .name = "exit", .type = OPT_FLAG, .var = &exit_when_done,
	       .help = "leave QEMU with the jobs' result when they end");

static bool run_one(const char *name, size_t len)
{
	if (len == 5 && !strncmp(name, "ktest", 5))
		return ktest_run(NULL);
	if (len == 5 && !strncmp(name, "fault", 5))
		return job_fault();
	if (len == 5 && !strncmp(name, "shell", 5))
		shell_run();	/* leaves only through poweroff */
	if (len == 5 && !strncmp(name, "bench", 5))
		return bench_job();
	if (len == 4 && !strncmp(name, "demo", 4))
		return demo_run();
	if (len == 4 && !strncmp(name, "echo", 4))
		return job_echo();
	if (len == 5 && !strncmp(name, "marks", 5))
		return job_marks();
	if (len == 4 && !strncmp(name, "hang", 4))
		return job_hang();
	if (len == 6 && !strncmp(name, "triple", 6))
		return job_triple();
	if (len == 4 && !strncmp(name, "dump", 4))
		return dump_default();	/* what the buffers hold now, as dump= says */
	return false;
}

void jobs_run(void)
{
	bool ok = true;
	const char *p = run_list;

	watchdog_work_begin();	/* jobs are the boot CPU's watched work */
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		printk("run: job=%.*s\n", (int)len, p);
		watchdog_touch();
		bool r = run_one(p, len);
		printk("run: job=%.*s result=%s\n", (int)len, p, r ? "pass" : "fail");
		ok = ok && r;
		p += len + (end ? 1 : 0);
	}
	watchdog_work_end();
	if (exit_when_done) {
		printk("run: done result=%s; exiting\n", ok ? "pass" : "fail");
		machine_exit(ok);
	}
	printk("run: %s; idle. Quit QEMU with Ctrl-A X.\n",
	       run_list[0] ? "jobs done" : "no jobs given (run=)");
	for (;;) {
		irq_disable();
		cpu_halt();
	}
}
