/*
 * PCI configuration access and a brute-force bus scan.
 *
 * Two mechanisms (PCI Local Bus 3.0 section 3.2.2.3.2; PCIe 4.0 section 7.2.2):
 *   port:  outl(0xCF8, 1<<31 | bus<<16 | dev<<11 | fn<<8 | off&0xFC), then
 *          data at 0xCFC + (off & 3). Segment 0 only, first 256 bytes.
 *   ECAM:  the register is memory at base + (bus<<20 | dev<<15 | fn<<12 | off),
 *          base and bus range from the ACPI MCFG table.
 * ECAM is used when MCFG gives a window for segment 0 inside the identity
 * map; everything else falls back to the ports, which every PC has.
 *
 * The scan visits every bus number rather than walking bridges: 256 x 32
 * reads of a vendor id is a few milliseconds even through ports, and it
 * finds devices behind bridges the firmware numbered in any order.
 */
#include <arch/acpi.h>
#include <arch/io.h>
#include <arch/pci.h>
#include "kernel/console.h"

#define PCI_CONFIG_ADDRESS	0xCF8
#define PCI_CONFIG_DATA		0xCFC
#define PCI_CONFIG_ENABLE	(1u << 31)

extern uint64_t acpi_mapped_limit;

static const struct acpi_mcfg *ecam;	/* segment 0's window, or NULL: ports */

static uint32_t port_addr(const struct pci_dev *d, uint16_t off)
{
	return PCI_CONFIG_ENABLE | (uint32_t)d->bus << 16 | (uint32_t)d->dev << 11 |
	       (uint32_t)d->fn << 8 | (off & 0xFC);
}

static uintptr_t ecam_addr(const struct pci_dev *d, uint16_t off)
{
	return (uintptr_t)(ecam->base + ((uint64_t)d->bus << 20 | (uint64_t)d->dev << 15 |
					 (uint64_t)d->fn << 12 | off));
}

static bool use_ecam(const struct pci_dev *d)
{
	return ecam && d->bus >= ecam->bus_start && d->bus <= ecam->bus_end;
}

uint32_t pci_read32(const struct pci_dev *d, uint16_t off)
{
	if (use_ecam(d))
		return mmio_read32(ecam_addr(d, off & 0xFFC));
	if (d->segment || off > 0xFC)
		return 0xFFFFFFFFu;
	outl(PCI_CONFIG_ADDRESS, port_addr(d, off));
	return inl(PCI_CONFIG_DATA);
}

void pci_write32(const struct pci_dev *d, uint16_t off, uint32_t v)
{
	if (use_ecam(d)) {
		mmio_write32(ecam_addr(d, off & 0xFFC), v);
	} else if (!d->segment && off <= 0xFC) {
		outl(PCI_CONFIG_ADDRESS, port_addr(d, off));
		outl(PCI_CONFIG_DATA, v);
	}
}

void pci_write8(const struct pci_dev *d, uint16_t off, uint8_t v)
{
	if (use_ecam(d)) {
		*(volatile uint8_t *)ecam_addr(d, off) = v;
	} else if (!d->segment && off <= 0xFF) {
		outl(PCI_CONFIG_ADDRESS, port_addr(d, off));
		outb(PCI_CONFIG_DATA + (off & 3), v);
	}
}

void pci_init(void)
{
	ecam = NULL;
	for (unsigned i = 0; i < acpi.mcfg_count; i++) {
		const struct acpi_mcfg *m = &acpi.mcfg[i];
		uint64_t end = m->base + ((uint64_t)(m->bus_end + 1) << 20);
		if (m->segment != 0)
			continue;
		if (end > acpi_mapped_limit) {
			printk("pci: mcfg window 0x%llx-0x%llx is not mapped; using ports\n",
			       (unsigned long long)m->base, (unsigned long long)end);
			continue;
		}
		ecam = m;
		break;
	}
	if (ecam)
		printk("pci: config=ecam base=0x%llx buses=%u-%u\n",
		       (unsigned long long)ecam->base, ecam->bus_start, ecam->bus_end);
	else
		printk("pci: config=port\n");
}

struct pci_bar pci_bar(const struct pci_dev *d, unsigned i)
{
	struct pci_bar b = { 0 };
	uint32_t lo;

	if (i > 5)
		return b;
	lo = pci_read32(d, PCI_BAR0 + 4 * i);
	if (lo & PCI_BAR_IO) {
		b.io = true;
		b.base = lo & ~3u;
		return b;
	}
	b.base = lo & ~0xFu;
	if ((lo & PCI_BAR_MEM_TYPE_MASK) == PCI_BAR_MEM_TYPE_64 && i < 5)
		b.base |= (uint64_t)pci_read32(d, PCI_BAR0 + 4 * (i + 1)) << 32;
	return b;
}

uint64_t pci_bar_size(const struct pci_dev *d, unsigned i)
{
	uint32_t cmd = pci_read32(d, PCI_COMMAND) & 0xFFFF, lo, hi = 0xFFFFFFFFu, szlo, szhi;
	bool is64;

	if (i > 5)
		return 0;
	lo = pci_read32(d, PCI_BAR0 + 4 * i);
	if (lo & PCI_BAR_IO)
		return 0;
	is64 = (lo & PCI_BAR_MEM_TYPE_MASK) == PCI_BAR_MEM_TYPE_64 && i < 5;
	/* Decoding off while the BAR reads back its size mask (PCI 3.0 6.2.5.1). */
	pci_write32(d, PCI_COMMAND, cmd & ~(uint32_t)(PCI_CMD_IO | PCI_CMD_MEMORY));
	pci_write32(d, PCI_BAR0 + 4 * i, 0xFFFFFFFFu);
	szlo = pci_read32(d, PCI_BAR0 + 4 * i) & ~0xFu;
	pci_write32(d, PCI_BAR0 + 4 * i, lo);
	szhi = 0xFFFFFFFFu;
	if (is64) {
		hi = pci_read32(d, PCI_BAR0 + 4 * (i + 1));
		pci_write32(d, PCI_BAR0 + 4 * (i + 1), 0xFFFFFFFFu);
		szhi = pci_read32(d, PCI_BAR0 + 4 * (i + 1));
		pci_write32(d, PCI_BAR0 + 4 * (i + 1), hi);
	}
	pci_write32(d, PCI_COMMAND, cmd);
	if (!szlo)
		return 0;
	return ~((uint64_t)szhi << 32 | szlo) + 1;
}

void pci_enable(const struct pci_dev *d, uint16_t bits)
{
	uint32_t cmd = pci_read32(d, PCI_COMMAND);

	if ((cmd & bits) != bits)
		pci_write32(d, PCI_COMMAND, (cmd & 0xFFFF) | bits);
}

unsigned pci_find_class(uint8_t class, uint8_t subclass,
			bool (*visit)(const struct pci_dev *d, void *arg), void *arg)
{
	unsigned first = ecam ? ecam->bus_start : 0, last = ecam ? ecam->bus_end : 255;
	unsigned matches = 0;

	for (unsigned bus = first; bus <= last; bus++) {
		for (unsigned dev = 0; dev < 32; dev++) {
			for (unsigned fn = 0; fn < 8; fn++) {
				struct pci_dev d = { .bus = bus, .dev = dev, .fn = fn };
				uint32_t id = pci_read32(&d, PCI_VENDOR_ID);
				if ((id & 0xFFFF) == 0xFFFF) {
					if (fn == 0)
						break;	/* no device: skip its functions */
					continue;
				}
				uint32_t cr = pci_read32(&d, PCI_CLASS_REV);
				d.vendor = id & 0xFFFF;
				d.device = id >> 16;
				d.class = cr >> 24;
				d.subclass = (cr >> 16) & 0xFF;
				d.prog_if = (cr >> 8) & 0xFF;
				if (d.class == class && d.subclass == subclass) {
					matches++;
					if (!visit(&d, arg))
						return matches;
				}
				if (fn == 0 && !((pci_read32(&d, PCI_HEADER_TYPE & ~3u) >> 16) &
						 PCI_HEADER_MULTIFUNC))
					break;	/* single-function device */
			}
		}
	}
	return matches;
}
