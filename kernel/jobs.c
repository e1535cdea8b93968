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
#include "kernel/record.h"
#include "kernel/lab.h"
#include "kernel/shell.h"

static bool job_ktest(void)
{
	return ktest_run(NULL);
}

static bool job_shell(void)
{
	shell_run();	/* leaves only through poweroff */
}

/* The jobs, listed once: X(name in run=, what runs it). */
#define JOBS(X)						\
	X("ktest", job_ktest)				\
	X("fault", job_fault)				\
	X("shell", job_shell)				\
	X("echo", job_echo)				\
	X("demo", demo_run)				\
	X("bench", bench_job)				\
	X("dump", dump_default)	/* what the buffers hold now, as dump= says */ \
	X("marks", job_marks)				\
	X("record", record_job)	/* trace.record=usb: a long trace streamed */ \
	X("record_bench", record_bench_job)		\
	X("triple", job_triple)				\
	X("hang", job_hang)				\
	X("hwlat", hwlat_job)				\
	X("c2c", c2c_job)				\
	X("timerlat", timerlat_job)

#define JOB_NAME(name, fn) name,
#define JOB_FN(name, fn) fn,
static const char *const job_names[] = { JOBS(JOB_NAME) NULL };
static bool (*const job_fns[])(void) = { JOBS(JOB_FN) };
#undef JOB_NAME
#undef JOB_FN

static char run_list[128] = "";
static bool exit_when_done;

CMDLINE_OPTION(run, .name = "run", .type = OPT_LIST, .var = run_list,
	       .size = sizeof(run_list), .choices = job_names,
	       .help = "jobs to run after boot, in order (comma list)");
CMDLINE_OPTION(exit, .name = "exit", .type = OPT_FLAG, .var = &exit_when_done,
	       .help = "leave QEMU with the jobs' result when they end");

static bool run_one(const char *name, size_t len)
{
	for (size_t i = 0; job_names[i]; i++)
		if (strlen(job_names[i]) == len && !strncmp(name, job_names[i], len))
			return job_fns[i]();
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
		console_cancel_clear();	/* a Ctrl-C from now on cancels this job's dump */
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
