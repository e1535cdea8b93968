/*
 * Local APIC (Intel SDM vol. 3A, chapter 11). Registers are at
 * base + offset in xAPIC mode and at MSR 0x800 + offset / 16 in x2APIC
 * mode; the ICR is two 32-bit registers (destination in bits 56..63) in
 * xAPIC mode and one 64-bit MSR (destination in bits 32..63) in x2APIC.
 *
 * Mode: x2APIC when the firmware handed over in it (IA32_APIC_BASE.EXTD)
 * or when lapic=x2apic asks and the CPU has it; lapic=xapic keeps xAPIC
 * unless the firmware already switched (x2APIC cannot be left without a
 * reset of the APIC state, so we honour the firmware's choice).
 */
#include <stddef.h>
#include <arch/acpi.h>
#include <arch/cpu.h>
#include <arch/io.h>
#include <arch/lapic.h>
#include <arch/percpu.h>
#include <arch/trap.h>
#include <arch/tsc.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/tracing.h"
#include <arch/watchdog.h>

#define MSR_APIC_BASE		0x1B
#define APIC_BASE_ENABLE	(1ull << 11)
#define APIC_BASE_EXTD		(1ull << 10)
#define MSR_X2APIC_BASE		0x800

#define REG_ID		0x020
#define REG_VERSION	0x030
#define REG_TPR		0x080
#define REG_EOI		0x0B0
#define REG_SVR		0x0F0
#define REG_ESR		0x280
#define REG_ICR_LO	0x300
#define REG_ICR_HI	0x310
#define REG_LVT_TIMER	0x320
#define REG_LVT_LINT0	0x350
#define REG_LVT_LINT1	0x360
#define REG_LVT_ERROR	0x370
#define REG_TIMER_INIT	0x380
#define REG_TIMER_CUR	0x390
#define REG_TIMER_DIV	0x3E0

#define SVR_ENABLE	(1u << 8)
#define LVT_MASKED	(1u << 16)
#define LVT_PERIODIC	(1u << 17)
#define LVT_TSC_DEADLINE (2u << 17)
#define MSR_TSC_DEADLINE 0x6E0
#define CPUID1_TSC_DEADLINE (1u << 24)
#define LVT_NMI		(4u << 8)
#define ICR_FIXED	(0u << 8)
#define ICR_NMI		(4u << 8)
#define ICR_INIT	(5u << 8)
#define ICR_STARTUP	(6u << 8)
#define ICR_PENDING	(1u << 12)
#define ICR_ASSERT	(1u << 14)
#define ICR_LEVEL	(1u << 15)
#define ICR_ALL_OTHERS	(3u << 18)
#define TIMER_DIV_16	0x3
#define CPUID1_X2APIC	(1u << 21)

#define PIC1_DATA	0x21
#define PIC2_DATA	0xA1

bool lapic_x2apic;
uint64_t lapic_timer_hz;
static uint64_t mmio_base;

static const char *const mode_choices[] = { "auto", "xapic", "x2apic", NULL };
static int mode_choice;
CMDLINE_OPTION(lapic, .name = "lapic", .type = OPT_ENUM, .var = &mode_choice,
	       .choices = mode_choices,
	       .help = "local APIC mode: auto (x2APIC if the firmware enabled it), xapic, x2apic");

static uint32_t rd(uint32_t reg)
{
	if (lapic_x2apic)
		return (uint32_t)rdmsr(MSR_X2APIC_BASE + (reg >> 4));
	return mmio_read32(mmio_base + reg);
}

/*
 * The timer's current count. In x2APIC mode it is read in the shadow of a
 * MOV to SS, which on hardware only holds off interrupts for one
 * instruction. The shadow is there for QEMU's TCG under -icount (10.0 at
 * least): only the last instruction of a translation block may read the
 * virtual clock, and QEMU ends a block after a wrmsr but not after a
 * rdmsr, so a rdmsr of this register in mid-block makes QEMU exit ("Bad
 * icount read"). An instruction in an interrupt shadow gets a block of its
 * own.
 */
static uint32_t rd_timer_current(void)
{
	uint32_t lo, hi;
	uint16_t ss;

	if (!lapic_x2apic)
		return rd(REG_TIMER_CUR);
	__asm__ __volatile__("mov %%ss, %w2\n\t"
			     "mov %w2, %%ss\n\t"
			     "rdmsr"
			     : "=a"(lo), "=d"(hi), "=&r"(ss)
			     : "c"(MSR_X2APIC_BASE + (REG_TIMER_CUR >> 4)));
	(void)hi;
	return lo;
}

static void wr(uint32_t reg, uint32_t v)
{
	if (lapic_x2apic)
		wrmsr(MSR_X2APIC_BASE + (reg >> 4), v);
	else
		mmio_write32(mmio_base + reg, v);
}

uint32_t lapic_id(void)
{
	return lapic_x2apic ? rd(REG_ID) : rd(REG_ID) >> 24;
}

void lapic_eoi(void)
{
	wr(REG_EOI, 0);
}

static void send_icr(uint32_t dest, uint32_t low)
{
	if (lapic_x2apic) {
		wrmsr(MSR_X2APIC_BASE + (REG_ICR_LO >> 4), ((uint64_t)dest << 32) | low);
		return;
	}
	/* Two writes: an interrupt that sent an IPI between them would leave
	 * its destination in ICR_HI for ours. */
	uint64_t flags = read_rflags();

	irq_disable();
	wr(REG_ICR_HI, dest << 24);
	wr(REG_ICR_LO, low);
	if (flags & RFLAGS_IF)
		irq_enable();
	for (int i = 0; i < 1000000 && (rd(REG_ICR_LO) & ICR_PENDING); i++)
		cpu_relax();
}

void lapic_send_ipi(uint32_t apic_id, uint8_t vector)
{
	send_icr(apic_id, ICR_FIXED | ICR_ASSERT | vector);
}

void lapic_send_ipi_all_others(uint8_t vector)
{
	send_icr(0, ICR_FIXED | ICR_ASSERT | ICR_ALL_OTHERS | vector);
}

void lapic_send_nmi(uint32_t apic_id)
{
	send_icr(apic_id, ICR_NMI | ICR_ASSERT);
}

void lapic_send_init(uint32_t apic_id)
{
	send_icr(apic_id, ICR_INIT | ICR_ASSERT | ICR_LEVEL);
	if (!lapic_x2apic)	/* x2APIC has no level de-assert; xAPIC wants it */
		send_icr(apic_id, ICR_INIT | ICR_LEVEL);
}

void lapic_send_sipi(uint32_t apic_id, uint8_t page)
{
	send_icr(apic_id, ICR_STARTUP | ICR_ASSERT | page);
}

static void on_spurious(struct trap_frame *f)
{
	(void)f;	/* spurious: no EOI, by definition */
}

static void on_error(struct trap_frame *f)
{
	uint32_t esr;

	(void)f;
	wr(REG_ESR, 0);		/* latch the error bits */
	esr = rd(REG_ESR);
	printk("lapic: cpu=%u error esr=0x%x\n", this_cpu()->cpu, esr);
	lapic_eoi();
}

static void on_timer(struct trap_frame *f)
{
	uint64_t tick = ++this_cpu()->timer_ticks;

	(void)f;
	trace_lapic_tick((uint32_t)tick);
	lapic_eoi();
}

void lapic_init_cpu(void)
{
	uint64_t base = rdmsr(MSR_APIC_BASE);

	/* Disabled to x2APIC in one write is an invalid transition (#GP): via xAPIC. */
	if (!(base & APIC_BASE_ENABLE)) {
		base |= APIC_BASE_ENABLE;
		wrmsr(MSR_APIC_BASE, base);
	}
	if (lapic_x2apic && !(base & APIC_BASE_EXTD))
		wrmsr(MSR_APIC_BASE, base | APIC_BASE_EXTD);
	wr(REG_TPR, 0);
	wr(REG_LVT_TIMER, LVT_MASKED | VEC_TIMER);
	wr(REG_LVT_ERROR, VEC_ERROR);
	if (this_cpu()->cpu != 0) {
		wr(REG_LVT_LINT0, LVT_MASKED);
		wr(REG_LVT_LINT1, LVT_NMI);
	}
	wr(REG_ESR, 0);
	wr(REG_ESR, 0);
	wr(REG_SVR, SVR_ENABLE | VEC_SPURIOUS);
	lapic_eoi();
}

const char *lapic_check_cpu(void)
{
	uint64_t base = rdmsr(MSR_APIC_BASE);

	if (!(base & APIC_BASE_ENABLE))
		return "the APIC is disabled in IA32_APIC_BASE";
	if (!!(base & APIC_BASE_EXTD) != lapic_x2apic)
		return lapic_x2apic ? "this CPU is not in x2APIC mode" : "this CPU is in x2APIC mode";
	if (!(rd(REG_SVR) & SVR_ENABLE))
		return "the APIC is software-disabled (SVR)";
	if (lapic_id() != this_cpu()->apic_id)
		return "the ID register differs from the MADT's APIC ID";
	return NULL;
}

void lapic_init_bsp(void)
{
	uint64_t base = rdmsr(MSR_APIC_BASE);
	bool has_x2 = cpuid(1, 0).ecx & CPUID1_X2APIC;

	/* Remap the 8259s away from the exception vectors, then mask them all. */
	outb(0x20, 0x11); outb(0xA0, 0x11);	/* ICW1: init, ICW4 follows */
	outb(0x21, 0x20); outb(0xA1, 0x28);	/* ICW2: vectors 0x20, 0x28 */
	outb(0x21, 0x04); outb(0xA1, 0x02);	/* ICW3: cascade on IRQ2 */
	outb(0x21, 0x01); outb(0xA1, 0x01);	/* ICW4: 8086 mode */
	outb(PIC1_DATA, 0xFF);
	outb(PIC2_DATA, 0xFF);

	if (base & APIC_BASE_EXTD) {
		lapic_x2apic = true;
		if (mode_choice == 1)
			printk("lapic: lapic=xapic ignored: the firmware enabled x2APIC mode\n");
	} else if (mode_choice == 2) {
		if (has_x2)
			lapic_x2apic = true;
		else
			printk("lapic: lapic=x2apic: this CPU has no x2APIC; using xAPIC\n");
	}
	mmio_base = base & ~0xFFFull;
	if (!lapic_x2apic && acpi.has_madt && acpi.lapic_addr && acpi.lapic_addr != mmio_base)
		printk("lapic: MADT says 0x%llx, IA32_APIC_BASE says 0x%llx; using the MSR\n",
		       (unsigned long long)acpi.lapic_addr, (unsigned long long)mmio_base);
	trap_set_handler(VEC_SPURIOUS, on_spurious);
	trap_set_handler(VEC_ERROR, on_error);
	trap_set_handler(VEC_TIMER, on_timer);
	lapic_init_cpu();
	this_cpu()->apic_id = lapic_id();
	printk("lapic: mode=%s base=0x%llx bsp_apic_id=%u version=0x%x x2apic_capable=%s\n",
	       lapic_x2apic ? "x2apic" : "xapic", (unsigned long long)mmio_base,
	       this_cpu()->apic_id, rd(REG_VERSION) & 0xFF, has_x2 ? "yes" : "no");
}

/*
 * One look at the timer's current count, bracketed by two TSC reads: the
 * count was read at some instant inside [a, b]. A vCPU (TCG, any VM) can be
 * descheduled between any two instructions; a wide bracket says so.
 */
struct timer_look {
	uint32_t count;
	uint64_t a, b;
};

/*
 * Test facility: the first calibration try stalls this many ms between its
 * last look at the count and the TSC read that closes the look, as a host
 * descheduling the vCPU there would.
 */
static uint64_t inject_lapic_cal_stall;
CMDLINE_OPTION(inject_lapic_cal_stall, .name = "inject.lapic_cal_stall", .type = OPT_UINT,
	       .var = &inject_lapic_cal_stall, .min = 0, .max = 1000,
	       .help = "test facility: stall the LAPIC timer calibration's first try this "
		       "many ms inside its last look at the count; 0 = off");

static void timer_look(struct timer_look *l, uint64_t stall_ms)
{
	l->a = rdtsc();
	l->count = rd_timer_current();
	if (stall_ms) {
		uint64_t t0 = rdtsc();
		while (rdtsc() - t0 < tsc.hz / 1000 * stall_ms)
			cpu_relax();
	}
	l->b = rdtsc();
}

#define CAL_TRIES	8
#define CAL_PPM		2000	/* brackets' width at most 0.2 % of the window */

/*
 * Counts the timer's ticks over a 10 ms TSC window, measured between two
 * bracketed looks at the count (not from the register's write, which does
 * not say when the count started). The error is at most the two brackets'
 * widths: a try whose brackets exceed CAL_PPM of the window is taken again,
 * and after CAL_TRIES the tightest is used and its error printed. A single
 * unbracketed read once lost 27 ms to the host between the count and the
 * TSC, made the rate 3.7 times too low and a 1 ms one-shot fire at 273 us.
 */
void lapic_timer_calibrate(void)
{
	uint64_t window = tsc.hz ? tsc.hz / 100 : 10000000; /* 10 ms */
	uint64_t best_ticks = 0, best_dt = 0, best_err = ~0ull;
	unsigned tries;

	wr(REG_TIMER_DIV, TIMER_DIV_16);
	wr(REG_LVT_TIMER, LVT_MASKED | VEC_TIMER);
	for (tries = 1; tries <= CAL_TRIES; tries++) {
		struct timer_look l0, l1;
		uint64_t ticks, dt, err;

		wr(REG_TIMER_INIT, 0xFFFFFFFFu);
		timer_look(&l0, 0);
		while (rdtsc() - l0.b < window)
			cpu_relax();
		timer_look(&l1, tries == 1 ? inject_lapic_cal_stall : 0);
		ticks = l0.count - l1.count;
		dt = (l1.a + l1.b) / 2 - (l0.a + l0.b) / 2;
		err = (l0.b - l0.a) + (l1.b - l1.a);
		if (ticks && dt && err < best_err) {
			best_ticks = ticks;
			best_dt = dt;
			best_err = err;
		}
		if (best_err <= window / 1000000 * CAL_PPM)
			break;
	}
	wr(REG_TIMER_INIT, 0);
	if (tries > CAL_TRIES)
		tries = CAL_TRIES;
	if (inject_lapic_cal_stall)
		printk("lapic: inject.lapic_cal_stall=%llu: the first try stalled inside its "
		       "last look\n", (unsigned long long)inject_lapic_cal_stall);
	if (!tsc.hz || !best_ticks) {
		printk("lapic: timer could not be measured (tsc_hz=%llu ticks=%llu)\n",
		       (unsigned long long)tsc.hz, (unsigned long long)best_ticks);
		return;
	}
	lapic_timer_hz = (uint64_t)((unsigned __int128)best_ticks * tsc.hz / best_dt);
	printk("lapic: timer_hz=%llu divide=16 measured_against=tsc tries=%u error_ppm=%llu\n",
	       (unsigned long long)lapic_timer_hz, tries,
	       (unsigned long long)(best_err * 1000000 / best_dt));
}

void lapic_timer_periodic(uint32_t hz)
{
	if (!lapic_timer_hz || !hz)
		return;
	watchdog_timer_lent();	/* the work's now: this CPU is not watched until it stops it */
	wr(REG_TIMER_DIV, TIMER_DIV_16);
	wr(REG_LVT_TIMER, LVT_PERIODIC | VEC_TIMER);
	wr(REG_TIMER_INIT, (uint32_t)(lapic_timer_hz / hz ? lapic_timer_hz / hz : 1));
}

void lapic_timer_oneshot(uint64_t ns)
{
	uint64_t count;

	if (!lapic_timer_hz)
		return;
	count = (uint64_t)((unsigned __int128)ns * lapic_timer_hz / 1000000000ull);
	watchdog_timer_lent();
	wr(REG_TIMER_DIV, TIMER_DIV_16);
	wr(REG_LVT_TIMER, VEC_TIMER);
	wr(REG_TIMER_INIT, count ? (count > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)count) : 1);
}

bool lapic_timer_has_tsc_deadline(void)
{
	return cpuid(1, 0).ecx & CPUID1_TSC_DEADLINE;
}

/*
 * TSC-deadline mode fires when the TSC reaches deadline (SDM vol. 3A
 * 11.5.4.1). One-shot mode counts from the write: the count is rounded
 * up, so that the interrupt is not early by the rounding; the time from
 * the TSC read here to the register's write only makes it later, and an
 * error of lapic_timer_hz (measured against the TSC) may make it early.
 */
void lapic_timer_at(uint64_t deadline, uint8_t vector, bool tsc_deadline)
{
	uint64_t now, left, count;

	if (!lapic_timer_hz || !tsc.hz)
		return;
	watchdog_timer_lent();
	if (tsc_deadline) {
		wr(REG_LVT_TIMER, LVT_TSC_DEADLINE | vector);
		__asm__ volatile("mfence" ::: "memory");	/* SDM: LVT write before the MSR */
		wrmsr(MSR_TSC_DEADLINE, deadline);
		return;
	}
	wr(REG_TIMER_DIV, TIMER_DIV_16);
	wr(REG_LVT_TIMER, vector);
	now = rdtsc();
	left = deadline > now ? deadline - now : 0;
	count = (uint64_t)(((unsigned __int128)left * lapic_timer_hz + tsc.hz - 1) / tsc.hz);
	wr(REG_TIMER_INIT, count ? (count > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)count) : 1);
}

void lapic_timer_stop(void)
{
	wr(REG_LVT_TIMER, LVT_MASKED | VEC_TIMER);
	wr(REG_TIMER_INIT, 0);
	watchdog_timer_returned();	/* watched again if the work was */
}

/*
 * The watchdog's deadline: one-shot, NMI delivery (the vector field is
 * ignored for NMI, SDM vol. 3A 11.5.1), so it is taken with interrupts off.
 * Only arch/x86/watchdog.c calls these; the lapic_timer_* above are the
 * work's and tell the watchdog when they take the timer and give it back.
 */
void lapic_timer_nmi_oneshot(uint32_t count)
{
	wr(REG_TIMER_DIV, TIMER_DIV_16);
	wr(REG_LVT_TIMER, LVT_NMI | VEC_TIMER);
	wr(REG_TIMER_INIT, count ? count : 1);
}

void lapic_timer_nmi_stop(void)
{
	wr(REG_LVT_TIMER, LVT_MASKED | VEC_TIMER);
	wr(REG_TIMER_INIT, 0);
}

bool lapic_timer_expired(void)
{
	return rd_timer_current() == 0;
}
