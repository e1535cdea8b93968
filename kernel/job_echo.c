/*
 * run=echo: read one line from the consoles' input (serial or keyboard,
 * whichever has it) and print it back as "echo: <line>". It proves typed
 * characters arrive, before there is a shell. The wait is bounded
 * (echo.wait_s on the kernel clock) so an unattended run ends.
 */
#include <stdint.h>
#include <arch/cpu.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/jobs.h"

#define LINE_MAX		120
#define POLLS_PER_SECOND	1000000ull	/* nominal, only before the TSC is calibrated */

static uint64_t echo_wait_s = 30;
CMDLINE_OPTION(echo_wait, .name = "echo.wait_s", .type = OPT_UINT, .var = &echo_wait_s,
	       .min = 1, .max = 3600, .help = "how long run=echo waits for a line");

bool job_echo(void)
{
	char line[LINE_MAX + 1];
	size_t len = 0;
	long long start = tsc_now_ns(), limit = (long long)echo_wait_s * 1000000000ll;
	uint64_t polls = 0;
	bool paused;

	printk("echo: type a line and press Enter (waiting %llu s)\n",
	       (unsigned long long)echo_wait_s);
	paused = watchdog_pause();	/* waiting for a person, bounded by echo.wait_s */
	for (;;) {
		int ch = console_getc();
		if (ch < 0) {
			bool late = start >= 0 ? tsc_now_ns() - start > limit
					       : ++polls > echo_wait_s * POLLS_PER_SECOND;
			if (late) {
				if (len)
					console_write("\n", 1);
				printk("echo: no complete line within %llu s; giving up\n",
				       (unsigned long long)echo_wait_s);
				watchdog_resume(paused);
				return false;
			}
			cpu_relax();
			continue;
		}
		if (ch == '\r' || ch == '\n')
			break;
		if ((ch == '\b' || ch == 0x7F) && len) {
			len--;
			console_write("\b \b", 3);
		} else if (ch >= ' ' && ch < 0x7F && len < LINE_MAX) {
			char c = (char)ch;
			line[len++] = c;
			console_write(&c, 1);	/* what was typed, as typed */
		}
	}
	watchdog_resume(paused);
	line[len] = '\0';
	console_write("\n", 1);
	printk("echo: %s\n", line);
	return true;
}
