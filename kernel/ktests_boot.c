/*
 * In-kernel tests of the boot foundation: the allocator, the trap path,
 * the symbol table, ACPI results.
 */
#include <stdint.h>
#include <arch/acpi.h>
#include <arch/trap.h>
#include "kernel/bootinfo.h"
#include "kernel/ksyms.h"
#include "kernel/ktest.h"
#include "kernel/kstring.h"
#include "kernel/pmm.h"

extern char __kernel_start[], __kernel_end[];

KTEST(pmm_alloc_free)
{
	struct pmm_stats before, after;
	uint64_t a, b;

	pmm_get_stats(&before);
	a = pmm_alloc(1, 1);
	b = pmm_alloc(16, 16);
	KT_ASSERT(a && b && a != b);
	KT_ASSERT(b % (16 * PAGE_SIZE) == 0);
	KT_ASSERT(a >= PMM_LOW_LIMIT && b >= PMM_LOW_LIMIT);
	/* Never the kernel image or the boot information. */
	KT_ASSERT(a + PAGE_SIZE <= (uintptr_t)__kernel_start || a >= (uintptr_t)__kernel_end);
	KT_ASSERT(b + 16 * PAGE_SIZE <= (uintptr_t)__kernel_start || b >= (uintptr_t)__kernel_end);
	KT_ASSERT(a + PAGE_SIZE <= boot_info.mbi.start || a >= boot_info.mbi.end);
	/* Every page handed out is inside available RAM and writable. */
	memset((void *)(uintptr_t)b, 0xA5, 16 * PAGE_SIZE);
	KT_ASSERT(((uint8_t *)(uintptr_t)b)[16 * PAGE_SIZE - 1] == 0xA5);
	pmm_get_stats(&after);
	KT_ASSERT(after.free_pages == before.free_pages - 17);
	pmm_free(a, 1);
	pmm_free(b, 16);
	pmm_get_stats(&after);
	KT_ASSERT(after.free_pages == before.free_pages);
	KT_ASSERT(pmm_alloc(0, 1) == 0);
	KT_ASSERT(pmm_alloc(1, 3) == 0);	/* alignment must be a power of two */
	return NULL;
}

static volatile int breakpoints;

static void on_breakpoint(struct trap_frame *f)
{
	(void)f;
	breakpoints++;
}

KTEST(trap_breakpoint_returns)
{
	trap_set_handler(3, on_breakpoint);
	__asm__ __volatile__("int3");
	__asm__ __volatile__("int3");
	trap_set_handler(3, NULL);
	KT_ASSERT(breakpoints == 2);
	return NULL;
}

KTEST(ksyms_names_functions)
{
	uint64_t off = 1;
	const char *name = ksym_lookup((uintptr_t)&pmm_alloc + 3, &off);

	KT_ASSERT(name != NULL);
	KT_ASSERT(!strcmp(name, "pmm_alloc"));
	KT_ASSERT(off == 3);
	return NULL;
}

KTEST(acpi_tables_valid)
{
	KT_ASSERT(acpi.found);
	KT_ASSERT(acpi.has_madt);
	KT_ASSERT(acpi.cpu_count >= 1);
	KT_ASSERT(acpi.lapic_addr == 0xFEE00000);
	for (unsigned i = 0; i < acpi.table_count; i++) {
		const struct acpi_table_ref *t = &acpi.tables[i];
		if (t->valid)
			KT_ASSERT(acpi_checksum_ok((const void *)(uintptr_t)t->phys, t->length));
	}
	return NULL;
}
