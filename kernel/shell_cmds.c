/* Shell commands about the machine: clock, cpus, ktest, poweroff, reboot. */
#include <stddef.h>
#include <arch/clockwd.h>
#include <arch/exit.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/tsc.h>
#include "kernel/console.h"
#include "kernel/ktest.h"
#include "kernel/persist.h"
#include "kernel/shell.h"
#include "kernel/tracing.h"
#include "trace/persist.h"

#define PPM(ppb) (unsigned long long)((ppb) / 1000), (unsigned long long)((ppb) % 1000)

static int cmd_clock(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		cprintf("error: clock takes no arguments\n");
		return 1;
	}
	cprintf("tsc: freq_hz=%llu ref=%s err_ppm=%llu.%03llu tol_ppm=%llu.%03llu invariant=%s\n",
		(unsigned long long)tsc.hz, tsc.ref ? tsc.ref : "none", PPM(tsc.err_ppb),
		PPM(tsc.tol_ppb), tsc.invariant ? "yes" : "no");
	for (unsigned c = 0; c < cpu_count; c++) {
		struct percpu *pc = cpus[c];
		struct clock_conv conv;
		if (!pc || !pc->online)
			continue;
		if (clock_latch_read(per_cpu_ptr(tsc_clock, c), &conv)) {
			cprintf("clock: cpu=%u unreadable (writer storm)\n", c);
			continue;
		}
		cprintf("clock: cpu=%u " CLOCK_CONV_FMT " tsc_skew_cycles=%lld "
			"uncertainty_cycles=%lld trusted=%s\n", c, CLOCK_CONV_ARGS(conv),
			(long long)per_cpu_ptr(tsc_skew, c)->skew,
			(long long)per_cpu_ptr(tsc_skew, c)->uncert,
			per_cpu_ptr(tsc_skew, c)->trusted ? "yes" : "no");
	}
	clock_watchdog_print();
	return 0;
}
SHELL_COMMAND(clock, .name = "clock", .usage = "",
	      .help = "calibration and per-CPU mult/shift/offset/skew", .fn = cmd_clock);

static int cmd_cpus(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		cprintf("error: cpus takes no arguments\n");
		return 1;
	}
	for (unsigned c = 0; c < cpu_count; c++) {
		struct percpu *pc = cpus[c];
		if (!pc)
			continue;
		cprintf("cpu: cpu=%u apic_id=%u online=%s irqs=%llu nmis=%llu timer_ticks=%llu "
			"ipis=%llu\n", c, pc->apic_id, pc->online ? "yes" : "no",
			(unsigned long long)pc->irq_count, (unsigned long long)pc->nmi_count,
			(unsigned long long)pc->timer_ticks, (unsigned long long)pc->ipi_count);
	}
	cprintf("cpus: online=%u lapic=%s timer_hz=%llu\n", cpus_online,
		lapic_x2apic ? "x2apic" : "xapic", (unsigned long long)lapic_timer_hz);
	return 0;
}
SHELL_COMMAND(cpus, .name = "cpus", .usage = "", .help = "CPUs, APIC ids, interrupt counts",
	      .fn = cmd_cpus);

static int ktest_unknown_said;

/* The first unknown name only: a refused command answers one error line. */
static void ktest_say_unknown(const char *name, int len)
{
	if (!ktest_unknown_said++)
		cprintf("error: ktest: no test named '%.*s'; nothing run\n", len > 64 ? 64 : len,
			name);
}

static int cmd_ktest(int argc, char **argv)
{
	if (argc > 2) {
		cprintf("error: usage: ktest [name[,name...]]\n");
		return 1;
	}
	/* A name that matches no test is refused whole: zero tests run is no pass. */
	ktest_unknown_said = 0;
	if (argc == 2 && ktest_unknown(argv[1], ktest_say_unknown))
		return 1;
	return ktest_run(argc == 2 ? argv[1] : "all") ? 0 : 1;
}
SHELL_COMMAND(ktest, .name = "ktest", .usage = "[name,...]", .help = "run in-kernel tests (KTAP)",
	      .fn = cmd_ktest);

static int cmd_poweroff(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		cprintf("error: poweroff takes no arguments\n");
		return 1;
	}
	cprintf("poweroff: bye\n");
	machine_exit(true);
}
SHELL_COMMAND(poweroff, .name = "poweroff", .usage = "", .help = "leave (QEMU exits with success)",
	      .fn = cmd_poweroff);

/* Recording stops first, so that the buffers hold what was there at the command. */
static int cmd_reboot(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		cprintf("error: reboot takes no arguments\n");
		return 1;
	}
	tracing_stop();
	cprintf("reboot: recording stopped; resetting the machine\n");
	persist_quiesce();
	persist_mark_end(PERSIST_END_RESET);	/* trace.persist=: the next boot reads it */
	machine_reset();
}
SHELL_COMMAND(reboot, .name = "reboot", .usage = "",
	      .help = "reset the machine (ACPI reset register, keyboard controller, triple fault)",
	      .fn = cmd_reboot);
