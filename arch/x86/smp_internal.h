/*
 * What SMP's three files share and nobody else uses: bring-up (smp.c)
 * hands each AP to the TSC measurement (tsc_sync.c) and then to the idle
 * loop that runs cross-CPU calls (smp_call.c). Not an interface: the
 * public one is <arch/smp.h>.
 */
#ifndef ARCH_X86_SMP_INTERNAL_H
#define ARCH_X86_SMP_INTERNAL_H

#include <arch/percpu.h>
#include "baretrace/compiler.h"

/* tsc_sync.c. Boot CPU: the shared line at rest, before an AP is started. */
void tsc_sync_idle(void);
/* Boot CPU: measure the AP pc (online, in tsc_sync_ap()), set its clock, say so. */
void tsc_sync_measure(struct percpu *pc);
/* The AP: answer the boot CPU until it is done; runs the CPU's start hooks. */
void tsc_sync_ap(void);

/*
 * smp_call.c (named outside smp_* so that ftrace.filter=smp_* shows the
 * bring-up as before). Boot CPU: the call IPI's and the NMI's handlers.
 */
void ipi_handlers_init(void);
/* The AP, for good: sleep until a call is posted, run it, count it done. */
void __noreturn ap_idle(struct percpu *pc);

#endif
