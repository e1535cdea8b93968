/*
 * memory_init: print the firmware's memory map, build the page allocator
 * with the kernel image, the boot information and modules reserved, and
 * extend the identity map over all RAM.
 */
#include <arch/paging.h>
#include "kernel/console.h"
#include "kernel/memory.h"
#include "kernel/persist.h"
#include "kernel/pmm.h"

extern char __kernel_start[], __kernel_end[];
extern uint64_t acpi_mapped_limit;

static const char *type_name(uint32_t t)
{
	switch (t) {
	case MEM_AVAILABLE: return "available";
	case MEM_RESERVED: return "reserved";
	case MEM_ACPI_RECLAIMABLE: return "acpi";
	case MEM_ACPI_NVS: return "nvs";
	case MEM_BAD: return "bad";
	default: return "other";
	}
}

static void *identity(uint64_t phys)
{
	return (void *)(uintptr_t)phys;
}

void memory_init(const struct boot_info *bi)
{
	struct phys_range reserved[3 + BOOT_MODULES_MAX], keep;
	unsigned nres = 0;
	struct pmm_stats st;
	const char *err;

	for (unsigned i = 0; i < bi->mmap_count; i++)
		printk("mem: base=0x%016llx len=0x%016llx type=%s\n",
		       (unsigned long long)bi->mmap[i].base,
		       (unsigned long long)bi->mmap[i].len, type_name(bi->mmap[i].type));
	if (bi->mmap_truncated)
		printk("mem: more than %d map entries; the rest are ignored\n", BOOT_MMAP_MAX);
	if (bi->efi)
		printk("mem: efi_map descriptors=%u conventional=%llu MiB\n",
		       bi->efi_mmap_count,
		       (unsigned long long)(bi->efi_conventional_bytes >> 20));

	reserved[nres++] = (struct phys_range){ (uintptr_t)__kernel_start, (uintptr_t)__kernel_end };
	reserved[nres++] = bi->mbi;
	for (unsigned i = 0; i < bi->module_count; i++)
		reserved[nres++] = bi->modules[i];
	/* trace.persist=: the previous boot's buffers stay untouched until checked. */
	if (persist_reserve(bi, reserved, nres, &keep))
		reserved[nres++] = keep;

	err = pmm_init(bi->mmap, bi->mmap_count, reserved, nres, PAGING_BOOT_LIMIT, identity);
	if (err) {
		printk("mem: page allocator failed: %s\n", err);
		return;
	}
	pmm_get_stats(&st);
	paging_map_identity(st.max_phys);
	acpi_mapped_limit = paging_mapped_limit();
	printk("mem: available=%llu MiB free=%llu MiB max_phys=0x%llx mapped=0x%llx "
	       "kernel=0x%llx-0x%llx\n",
	       (unsigned long long)(st.total_pages * PAGE_SIZE >> 20),
	       (unsigned long long)(st.free_pages * PAGE_SIZE >> 20),
	       (unsigned long long)st.max_phys, (unsigned long long)paging_mapped_limit(),
	       (unsigned long long)(uintptr_t)__kernel_start,
	       (unsigned long long)(uintptr_t)__kernel_end);
	if (st.ignored_bytes)
		printk("mem: %llu MiB of RAM above %llu GiB is not used\n",
		       (unsigned long long)(st.ignored_bytes >> 20),
		       (unsigned long long)(PMM_MAX_PHYS >> 30));
}
