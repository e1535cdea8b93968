/* Memory set-up at boot: the page allocator and the identity map. */
#ifndef KERNEL_MEMORY_H
#define KERNEL_MEMORY_H

#include "kernel/bootinfo.h"

void memory_init(const struct boot_info *bi);

#endif
