/*
 * Symbol lookup over the generated table: ksyms_addrs[] is sorted
 * ascending; ksyms_names[] holds offsets into ksyms_strings.
 */
#include "kernel/ksyms.h"

extern const uint64_t ksyms_count;
extern const uint64_t ksyms_addrs[];
extern const uint32_t ksyms_names[];
extern const char ksyms_strings[];
extern const char __text_end[];

uint32_t ksym_count(void)
{
	return (uint32_t)ksyms_count;
}

const char *ksym_at(uint32_t i, uint64_t *addr)
{
	*addr = ksyms_addrs[i];
	return ksyms_strings + ksyms_names[i];
}

uint64_t ksym_end(void)
{
	return (uint64_t)__text_end;
}

const char *ksym_lookup(uint64_t addr, uint64_t *offset)
{
	uint64_t lo = 0, hi = ksyms_count;

	if (!ksyms_count || addr < ksyms_addrs[0] || addr >= (uint64_t)__text_end)
		return 0;
	while (hi - lo > 1) {	/* invariant: addrs[lo] <= addr < addrs[hi] */
		uint64_t mid = lo + (hi - lo) / 2;
		if (ksyms_addrs[mid] <= addr)
			lo = mid;
		else
			hi = mid;
	}
	*offset = addr - ksyms_addrs[lo];
	return ksyms_strings + ksyms_names[lo];
}
