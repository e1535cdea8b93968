/*
 * Every instruction in the kernel that reads the TSC (rdtsc, rdtscp) is
 * listed in the tsc_sites section, so that a test facility can find them
 * all: inject.tsc_skew (arch/x86/time/tsc_inject.c) rewrites them to trap and
 * adds a per-CPU offset. Listing a site adds no instruction: the record
 * goes to a data section, the code is byte for byte what it was.
 *
 * Use inside an asm string, right after a "1:" label on the instruction:
 *	__asm__ __volatile__("1: rdtsc\n\t" TSC_SITE(2) : ...);
 */
#ifndef ARCH_TSC_SITE_H
#define ARCH_TSC_SITE_H

#include <stdint.h>

#define TSC_SITE_RDTSC	2	/* 0f 31 */
#define TSC_SITE_RDTSCP	3	/* 0f 01 f9 */

#define TSC_SITE_STR_(x) #x
#define TSC_SITE_STR(x) TSC_SITE_STR_(x)

/* One record: the address of label 1 before it, and the instruction's length. */
#define TSC_SITE(len)							\
	".pushsection tsc_sites, \"a\"\n\t"				\
	".balign 8\n\t"							\
	".quad 1b, " TSC_SITE_STR(len) "\n\t"				\
	".popsection\n\t"

struct tsc_site {
	uint64_t addr;		/* first byte of the instruction */
	uint64_t len;		/* TSC_SITE_RDTSC or TSC_SITE_RDTSCP */
};

extern struct tsc_site __start_tsc_sites[], __stop_tsc_sites[];

#endif
