/*
 * arch/io.h for the UART host test: port and MMIO accesses reach a model
 * of a 16550 (tests/host/test_uart.c) instead of hardware, so that
 * arch/x86/uart.c runs unchanged against I/O ports and against memory-
 * mapped registers of either width and stride.
 */
#ifndef ARCH_IO_H
#define ARCH_IO_H

#include <stdint.h>

uint8_t model_inb(uint16_t port);
void model_outb(uint16_t port, uint8_t v);
uint32_t model_mmio_read(uintptr_t addr, unsigned bytes);
void model_mmio_write(uintptr_t addr, uint32_t v, unsigned bytes);

static inline uint8_t inb(uint16_t port) { return model_inb(port); }
static inline void outb(uint16_t port, uint8_t v) { model_outb(port, v); }
static inline uint8_t mmio_read8(uintptr_t a) { return (uint8_t)model_mmio_read(a, 1); }
static inline void mmio_write8(uintptr_t a, uint8_t v) { model_mmio_write(a, v, 1); }
static inline uint32_t mmio_read32(uintptr_t a) { return model_mmio_read(a, 4); }
static inline void mmio_write32(uintptr_t a, uint32_t v) { model_mmio_write(a, v, 4); }

#endif
