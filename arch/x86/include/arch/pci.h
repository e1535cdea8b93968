/*
 * PCI configuration space, through the ACPI MCFG window (PCIe ECAM) when the
 * firmware gives one, else the legacy port pair 0xCF8/0xCFC (segment 0).
 */
#ifndef ARCH_PCI_H
#define ARCH_PCI_H

#include <stdbool.h>
#include <stdint.h>

#define PCI_VENDOR_ID		0x00	/* u16; 0xFFFF = no function */
#define PCI_DEVICE_ID		0x02	/* u16 */
#define PCI_COMMAND		0x04	/* u16 */
#define PCI_CLASS_REV		0x08	/* u32: class, subclass, prog-if, revision */
#define PCI_HEADER_TYPE		0x0E	/* u8; bit 7 = multi-function */
#define PCI_BAR0		0x10	/* six u32 BARs in a type-0 header */
#define PCI_CMD_IO		(1u << 0)
#define PCI_CMD_MEMORY		(1u << 1)
#define PCI_CMD_MASTER		(1u << 2)	/* the device may start DMA */
#define PCI_BAR_IO		(1u << 0)
#define PCI_BAR_MEM_TYPE_64	(2u << 1)
#define PCI_BAR_MEM_TYPE_MASK	(3u << 1)
#define PCI_HEADER_MULTIFUNC	0x80

struct pci_dev {
	uint16_t segment;	/* PCI segment group */
	uint8_t bus;		/* bus number */
	uint8_t dev;		/* device 0..31 */
	uint8_t fn;		/* function 0..7 */
	uint16_t vendor;	/* vendor id */
	uint16_t device;	/* device id */
	uint8_t class;		/* base class */
	uint8_t subclass;	/* sub-class */
	uint8_t prog_if;	/* programming interface */
};

struct pci_bar {
	bool io;		/* I/O space, else memory */
	uint64_t base;		/* port or physical address; 0 = not assigned */
};

/* Pick the configuration mechanism (after acpi_init) and say which. */
void pci_init(void);
uint32_t pci_read32(const struct pci_dev *d, uint16_t off);
void pci_write32(const struct pci_dev *d, uint16_t off, uint32_t v);
void pci_write8(const struct pci_dev *d, uint16_t off, uint8_t v);
/* BAR i of a type-0 header (64-bit BARs read both halves). */
struct pci_bar pci_bar(const struct pci_dev *d, unsigned i);
/* Bytes a memory BAR decodes (sized with decoding off); 0 for I/O or none. */
uint64_t pci_bar_size(const struct pci_dev *d, unsigned i);
/* Set the command register's decode bits (I/O and/or memory). */
void pci_enable(const struct pci_dev *d, uint16_t bits);

/*
 * Call visit for every function whose class and subclass match, in bus order,
 * until it returns false. Returns the number of matches visited.
 */
unsigned pci_find_class(uint8_t class, uint8_t subclass,
			bool (*visit)(const struct pci_dev *d, void *arg), void *arg);

#endif
