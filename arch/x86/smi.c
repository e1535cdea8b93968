/*
 * SMIs (Intel SDM vol. 3C, chapter 32). A system-management interrupt
 * takes a CPU into SMM, where firmware runs invisible to the kernel: no
 * interrupt, no exception, only time missing. Firmware usually raises
 * them on every core at once, so they show as gaps on every CPU together
 * (what run=hwlat looks for).
 *
 * The count. Intel CPUs from Nehalem on count the SMIs each logical CPU
 * took in MSR_SMI_COUNT (0x34, read-only, SDM vol. 4, "MSRs in
 * processors based on Nehalem"); AMD and older Intel CPUs have no such
 * MSR, and reading an absent MSR raises #GP. So the count is read only on
 * GenuineIntel family 6, and even there through rdmsr_safe(): an
 * emulator or hypervisor may say Intel and not implement it. Anything
 * else: the count is unknown, and said so.
 *
 * Raising one. The APM control port 0xB2 (ICH9 APM_CNT; PIIX4 the same)
 * raises an SMI when the firmware set APMC_EN in SMI_EN, as SeaBIOS does
 * on QEMU's q35 and pc. The value written is the command the firmware's
 * handler reads: 0x02/0x03 (ICH9) and 0xF0/0xF1 (PIIX4) switch ACPI
 * mode, so a value no firmware here acts on is sent.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/io.h>
#include <arch/smi.h>

#define MSR_SMI_COUNT	0x34
#define PORT_APM_CNT	0xB2
#define APM_CMD_NOP	0x61	/* no ACPI switch on either chipset */

static bool smi_msr_ok;		/* set once by the boot CPU before others read */

const char *smi_count_probe(void)
{
	struct cpuid_regs r = cpuid(0, 0);
	uint64_t v;
	unsigned family;

	/* "GenuineIntel" in EBX, EDX, ECX. */
	if (r.ebx != 0x756E6547 || r.edx != 0x49656E69 || r.ecx != 0x6C65746E)
		return "not an Intel CPU (no MSR_SMI_COUNT)";
	r = cpuid(1, 0);
	family = (r.eax >> 8) & 0xF;
	if (family != 6)
		return "Intel, but not family 6 (no MSR_SMI_COUNT)";
	if (rdmsr_safe(MSR_SMI_COUNT, &v))
		return "MSR_SMI_COUNT (0x34) raised #GP";
	smi_msr_ok = true;
	return NULL;
}

bool smi_count_read(uint64_t *v)
{
	if (!smi_msr_ok)
		return false;
	return rdmsr_safe(MSR_SMI_COUNT, v) == 0;
}

void smi_raise_apm(void)
{
	outb(PORT_APM_CNT, APM_CMD_NOP);
}
