/*
 * SMP bring-up: start every AP the MADT lists, one at a time, and hand
 * each to the TSC measurement (tsc_sync.c) and then to its idle loop
 * (smp_call.c). Subsystems with per-CPU state are told through the CPU
 * hooks (<kernel/cpu_hooks.h>): prepare before an AP starts, start on the
 * AP once its clock is final; bring-up knows none of them.
 *
 * Start-up (Intel SDM vol. 3A 8.4.4, MultiProcessor Specification B.4):
 * for each enabled MADT processor in turn, INIT, 10 ms, SIPI, 200 us, and
 * a second SIPI if the AP has not shown life. The AP runs the trampoline
 * (boot/trampoline.asm) at TRAMP_BASE into ap_entry() on its own stack.
 * APs start one at a time, so one parameter block serves them all. An AP
 * that is not online within AP_TIMEOUT_MS is reported, sent INIT again
 * (back to wait-for-SIPI, so it cannot wake later on another AP's
 * parameters) and skipped.
 *
 * MADT entries marked online-capable but not enabled describe sockets that
 * may be hot-added; nothing is there to start, so they are listed, not
 * started.
 */
#include <stddef.h>
#include <arch/acpi.h>
#include <arch/clockwd.h>
#include <arch/cpu.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/smp.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include <arch/tsc_inject.h>
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/cpu_hooks.h"
#include "kernel/kstring.h"
#include "smp_internal.h"

#define TRAMP_BASE		0x8000
#define TRAMP_PARAMS		(TRAMP_BASE + 0xF00)
#define AP_TIMEOUT_MS		2000

struct tramp_params {
	uint64_t cr3;			/* page-table root */
	uint64_t stack;			/* AP's stack top */
	uint64_t entry;			/* ap_entry */
	uint64_t arg;			/* its struct percpu */
	volatile uint8_t started;	/* set by the trampoline's first instructions */
} __packed;

extern const uint8_t trampoline_start[], trampoline_end[];

static uint64_t maxcpus = MAX_CPUS;
CMDLINE_OPTION(maxcpus, .name = "maxcpus", .type = OPT_UINT, .var = &maxcpus,
	       .min = 1, .max = MAX_CPUS, .help = "start at most this many CPUs (boot CPU included)");

static void smp_delay_us(uint64_t us)
{
	uint64_t t0 = rdtsc(), d = (tsc.hz ? tsc.hz : 3000000000ull) / 1000000 * us;

	while (rdtsc() - t0 < d)
		cpu_relax();
}

void ap_entry(struct percpu *pc);

/*
 * The boot CPU's EFER.NXE, which every AP takes before anything else: the
 * page tables are shared, and the firmware may leave NXE set on the boot
 * CPU (OVMF does; entry.asm keeps EFER's other bits), so a page-table entry
 * with the NX bit (text_poke()'s window) is valid there and a reserved-bit
 * page fault on an AP whose NXE is clear (seen: a tracer switch on an AP
 * under OVMF, #PF error 0xa in text_poke()).
 */
static uint64_t bsp_efer_nxe;

/* Not traced: its entry runs before percpu_load() gives this CPU its %gs. */
notrace void ap_entry(struct percpu *pc)
{
	if (bsp_efer_nxe)
		wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_NXE);
	percpu_load(pc);
	idt_load();
	lapic_init_cpu();
	__atomic_store_n(&pc->online, 1, __ATOMIC_RELEASE);
	tsc_sync_ap();		/* its start hooks run there */
	ap_idle(pc);
}

static bool tramp_page_free(void)
{
	for (unsigned i = 0; i < boot_info.mmap_count; i++) {
		const struct mem_region *r = &boot_info.mmap[i];
		if (r->type == MEM_AVAILABLE && r->base <= TRAMP_BASE &&
		    r->base + r->len >= TRAMP_BASE + 0x1000)
			return !(boot_info.mbi.start < TRAMP_BASE + 0x1000 &&
				 boot_info.mbi.end > TRAMP_BASE);
	}
	return false;
}

/*
 * Test facility: the AP with this APIC id is sent neither INIT nor SIPI,
 * so it never answers, as a dead or missing CPU the MADT lists would not:
 * its start times out and it is skipped, under QEMU too.
 */
static int64_t inject_ap_silent = -1;
CMDLINE_OPTION(inject_ap_silent, .name = "inject.ap_silent", .type = OPT_INT,
	       .var = &inject_ap_silent, .min = (uint64_t)-1, .max = 0xFFFFFFFEull,
	       .help = "test facility: never start the AP with this APIC id, as if it "
		       "did not answer (its start times out, it is skipped); -1 = none");

static bool start_ap(struct percpu *pc)
{
	struct tramp_params *p = (struct tramp_params *)(uintptr_t)TRAMP_PARAMS;
	uint64_t t0, lim = tsc_ms_to_cycles(AP_TIMEOUT_MS);
	bool silent = inject_ap_silent == (int64_t)pc->apic_id;

	p->cr3 = read_cr3();
	p->stack = pc->kstack_top;
	p->entry = (uint64_t)ap_entry;
	p->arg = (uint64_t)pc;
	p->started = 0;
	tsc_sync_idle();
	__atomic_thread_fence(__ATOMIC_SEQ_CST);

	if (!silent)
		lapic_send_init(pc->apic_id);
	smp_delay_us(10000);
	if (!silent)
		lapic_send_sipi(pc->apic_id, TRAMP_BASE >> 12);
	smp_delay_us(200);
	if (!p->started) {
		if (!silent)
			lapic_send_sipi(pc->apic_id, TRAMP_BASE >> 12);
		smp_delay_us(200);
	}
	t0 = rdtsc();
	while (!__atomic_load_n(&pc->online, __ATOMIC_ACQUIRE)) {
		if (rdtsc() - t0 > lim) {
			if (!silent)
				lapic_send_init(pc->apic_id);	/* park it again */
			return false;
		}
		cpu_relax();
	}
	return true;
}

/*
 * How many CPUs smp_init() will try to start: the MADT's enabled entries
 * (1 without a MADT), at most maxcpus=. What tracing_init_boot() budgets
 * its pages for, before the APs exist.
 */
unsigned smp_cpus_planned(void)
{
	unsigned present = 0;

	for (unsigned i = 0; i < acpi.cpu_count; i++)
		present += acpi.cpus[i].enabled;
	if (!acpi.has_madt || present == 0)
		present = 1;
	return present > maxcpus ? (unsigned)maxcpus : present;
}

void smp_init(void)
{
	uint64_t t0 = rdtsc();
	unsigned present = 0, next = 1;
	struct percpu *bsp = cpus[0];

	bsp_efer_nxe = rdmsr(MSR_EFER) & EFER_NXE;
	ipi_handlers_init();
	for (unsigned i = 0; i < acpi.cpu_count; i++)
		present += acpi.cpus[i].enabled;
	if (!acpi.has_madt)
		present = 1;
	printk("smp: cpu=0 apic_id=%u tsc_skew_cycles=0 uncertainty_cycles=0 warps=0\n",
	       bsp->apic_id);

	/* Before any AP runs kernel code; with one CPU too (inject.tsc_drift_ppm=). */
	tsc_inject_init();
	if (present > 1 && !tramp_page_free()) {
		printk("smp: the trampoline page 0x%x is not free RAM; APs not started\n",
		       TRAMP_BASE);
	} else if (present > 1) {
		memcpy((void *)(uintptr_t)TRAMP_BASE, trampoline_start,
		       trampoline_end - trampoline_start);
		for (unsigned i = 0; i < acpi.cpu_count; i++) {
			const struct acpi_cpu *c = &acpi.cpus[i];
			if (c->apic_id == bsp->apic_id)
				continue;
			if (!c->enabled) {
				if (c->online_capable)
					printk("smp: apic_id=%u is online-capable but not enabled; "
					       "not started\n", c->apic_id);
				continue;
			}
			if (next >= maxcpus) {
				printk("smp: apic_id=%u not started (maxcpus=%llu)\n", c->apic_id,
				       (unsigned long long)maxcpus);
				continue;
			}
			if (!lapic_x2apic && c->apic_id > 0xFE) {
				printk("smp: apic_id=%u needs x2APIC mode; not started\n", c->apic_id);
				continue;
			}
			struct percpu *pc = percpu_alloc(next, c->apic_id, c->uid);
			if (!pc) {
				printk("smp: no memory for cpu %u; not started\n", next);
				break;
			}
			cpu_hooks_prepare(next);	/* e.g. its trace buffer's memory */
			if (!start_ap(pc)) {
				printk("smp: apic_id=%u did not answer within %u ms; skipped\n",
				       c->apic_id, AP_TIMEOUT_MS);
				percpu_free(pc);	/* parked: it cannot run them */
				cpu_count = next;	/* the next AP takes this id, and its */
				continue;		/* prepared slots (cpu_hooks_prepare) */
			}
			cpus_online++;
			tsc_sync_measure(pc);
			next++;
		}
	}
	printk("smp: online=%u present=%u bringup_ms=%llu\n", cpus_online, present,
	       (unsigned long long)(tsc.hz ? (rdtsc() - t0) / (tsc.hz / 1000) : 0));
	clock_watchdog_init();	/* after bring-up: re-measures what was just measured */
}
