/*
 * Cross-CPU calls and the IPIs that carry them: smp_call_async() posts
 * fn(arg) in the target's slot (struct percpu call_*) and sends VEC_CALL;
 * the target runs it from its idle loop (ap_idle()), never from the
 * interrupt, and counts it done. One call at a time per CPU: a busy slot
 * refuses. Expected NMIs (tests, benchmarks, the panic stop) are counted
 * and recorded here too.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include "kernel/tracing.h"	/* tracepoints: ipi_send, ipi_recv, nmi */
#include "smp_internal.h"

static void on_call_ipi(struct trap_frame *f)
{
	struct percpu *pc = this_cpu();

	(void)f;
	pc->ipi_count++;
	trace_ipi_recv(pc->call_from, VEC_CALL);
	lapic_eoi();	/* the work itself runs from the idle loop */
}

/* NMIs are expected (tests, benchmarks): count and record them. Never traced (NMI). */
static notrace void on_nmi(struct trap_frame *f)
{
	trap_fatal_nmi(f);	/* another CPU panics: stop here for good */
	trace_nmi((uint32_t)this_cpu()->nmi_count);
}

void ap_idle(struct percpu *pc)
{
	for (;;) {
		irq_disable();
		void (*fn)(void *) = __atomic_load_n(&pc->call_fn, __ATOMIC_ACQUIRE);
		if (!fn) {
			cpu_sleep_until_irq();
			continue;
		}
		irq_enable();
		watchdog_work_begin();	/* a call is watched work; idle is not */
		fn(pc->call_arg);
		watchdog_work_end();
		__atomic_store_n(&pc->call_done, pc->call_done + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&pc->call_fn, NULL, __ATOMIC_RELEASE);
	}
}

void ipi_handlers_init(void)
{
	trap_set_handler(VEC_CALL, on_call_ipi);
	trap_set_handler(VEC_NMI, on_nmi);
}

bool smp_call_async(unsigned cpu, void (*fn)(void *), void *arg)
{
	struct percpu *pc = cpu < cpu_count ? cpus[cpu] : NULL;

	if (!pc || !pc->online)
		return false;
	if (cpu == this_cpu()->cpu) {
		fn(arg);
		return true;
	}
	if (__atomic_load_n(&pc->call_fn, __ATOMIC_ACQUIRE))
		return false;
	pc->call_arg = arg;
	pc->call_from = this_cpu()->cpu;
	__atomic_store_n(&pc->call_fn, fn, __ATOMIC_RELEASE);
	trace_ipi_send(cpu, VEC_CALL);
	lapic_send_ipi(pc->apic_id, VEC_CALL);
	return true;
}

bool smp_call_wait(unsigned cpu, uint64_t timeout_ms)
{
	struct percpu *pc = cpu < cpu_count ? cpus[cpu] : NULL;
	uint64_t t0 = rdtsc(), lim = tsc_ms_to_cycles(timeout_ms);
	bool paused, done = true;

	if (!pc)
		return false;
	paused = watchdog_pause();	/* bounded, and that CPU is watched (arch/watchdog.h) */
	while (__atomic_load_n(&pc->call_fn, __ATOMIC_ACQUIRE)) {
		if (rdtsc() - t0 > lim) {
			done = false;
			break;
		}
		cpu_relax();
	}
	watchdog_resume(paused);
	return done;
}
