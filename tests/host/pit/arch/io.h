/*
 * arch/io.h for the PIT host test: port accesses reach a model of the
 * 8254's channel 2 and port 0x61 (tests/host/test_pit.c), so that
 * arch/x86/time/pit.c runs unchanged against a clock the test controls.
 */
#ifndef ARCH_IO_H
#define ARCH_IO_H

#include <stdint.h>

uint8_t model_inb(uint16_t port);
void model_outb(uint16_t port, uint8_t v);

static inline uint8_t inb(uint16_t port) { return model_inb(port); }
static inline void outb(uint16_t port, uint8_t v) { model_outb(port, v); }

#endif
