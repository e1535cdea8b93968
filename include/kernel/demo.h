/* run=demo: every CPU traces real activity for demo.ms, then dumps. */
#ifndef KERNEL_DEMO_H
#define KERNEL_DEMO_H

#include <stdbool.h>

bool demo_run(void);

#endif
