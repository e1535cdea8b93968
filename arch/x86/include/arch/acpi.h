/*
 * ACPI discovery: RSDP (from Multiboot2, else the BIOS area), RSDT/XSDT,
 * and what baretrace needs from the MADT, HPET, FADT, SPCR and MCFG tables. Every table
 * is checksummed before it is trusted; a bad one is reported and skipped.
 */
#ifndef ARCH_ACPI_H
#define ARCH_ACPI_H

#include <stdbool.h>
#include <stdint.h>
#include "baretrace/compiler.h"

#define ACPI_MAX_TABLES		64
#define ACPI_MAX_CPUS		256
#define ACPI_MAX_IOAPICS	8
#define ACPI_MAX_OVERRIDES	16
#define ACPI_MAX_NMIS		16
#define ACPI_MAX_MCFG		4

struct acpi_sdt_header {
	char signature[4];	/* e.g. "APIC" for the MADT */
	uint32_t length;	/* whole table, header included */
	uint8_t revision;
	uint8_t checksum;	/* all bytes of the table sum to 0 mod 256 */
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	uint32_t creator_id;
	uint32_t creator_revision;
} __packed;

/* Generic Address Structure (ACPI 5.2.3.2). */
struct acpi_gas {
	uint8_t space_id;	/* 0 memory, 1 I/O port */
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;
	uint64_t address;
} __packed;

#define ACPI_GAS_MEMORY	0
#define ACPI_GAS_IO	1

/* MADT entry types (ACPI 6.4 table 5.45). */
#define ACPI_MADT_LAPIC		0	/* processor local APIC */
#define ACPI_MADT_IOAPIC	1
#define ACPI_MADT_OVERRIDE	2	/* interrupt source override */
#define ACPI_MADT_NMI_SOURCE	3
#define ACPI_MADT_LAPIC_NMI	4
#define ACPI_MADT_LAPIC_ADDR	5	/* local APIC address override */
#define ACPI_MADT_X2APIC	9	/* processor local x2APIC */
#define ACPI_MADT_X2APIC_NMI	10

/* FADT flags (ACPI 6.4 table 5.10) and where they are. */
#define ACPI_FADT_FLAGS		112
#define ACPI_FADT_FLAG_HW_REDUCED (1u << 20)	/* no fixed hardware: PM timer fields ignored */

struct acpi_table_ref {
	char signature[5];	/* NUL-terminated */
	uint64_t phys;		/* where it is */
	uint32_t length;	/* its length field */
	bool valid;		/* checksum and length good */
};

struct acpi_cpu {
	uint32_t apic_id;	/* local APIC (or x2APIC) id */
	uint32_t uid;		/* ACPI processor UID */
	bool enabled;		/* usable now */
	bool online_capable;	/* may be enabled later (flags bit 1) */
	bool x2apic;		/* from an x2APIC entry */
};

struct acpi_ioapic {
	uint8_t id;		/* IOAPIC id */
	uint32_t addr;		/* MMIO base */
	uint32_t gsi_base;	/* first global system interrupt */
};

struct acpi_override {
	uint8_t bus;		/* always 0 (ISA) */
	uint8_t source;		/* ISA IRQ */
	uint32_t gsi;		/* what it is wired to */
	uint16_t flags;		/* polarity and trigger mode */
};

struct acpi_nmi {
	uint32_t uid;		/* processor UID, 0xFF(FFFFFF) = all */
	uint8_t lint;		/* LINT0 or LINT1 */
	uint16_t flags;		/* polarity and trigger mode */
};

/* One MCFG entry: where a PCI segment's buses have their ECAM window. */
struct acpi_mcfg {
	uint64_t base;		/* ECAM base (the address of bus 0, not bus_start) */
	uint16_t segment;	/* PCI segment group */
	uint8_t bus_start;	/* first bus decoded */
	uint8_t bus_end;	/* last bus decoded */
};

struct acpi_info {
	bool found;				/* an RSDP was found and valid */
	uint8_t rsdp_revision;			/* 0 = ACPI 1.0, 2+ = has XSDT */
	bool use_xsdt;				/* walked the XSDT (else RSDT) */
	char oem_id[7];				/* from the RSDP */
	uint8_t rsdp[36];			/* its bytes (20 before revision 2) */
	uint64_t root_phys;			/* the XSDT or RSDT walked */
	struct acpi_table_ref tables[ACPI_MAX_TABLES]; /* every table listed */
	unsigned table_count;			/* entries in tables */
	unsigned bad_tables;			/* failed validation */

	bool has_madt;				/* a valid MADT was parsed */
	uint64_t lapic_addr;			/* local APIC MMIO base */
	uint32_t madt_flags;			/* bit 0: dual 8259 present */
	struct acpi_cpu cpus[ACPI_MAX_CPUS];	/* processor entries in order */
	unsigned cpu_count;			/* entries in cpus */
	unsigned cpu_skipped;			/* duplicate/absurd/over-limit entries dropped */
	unsigned cpu_over;			/* entries beyond ACPI_MAX_CPUS */
	unsigned cpu_over_enabled;		/* of those, enabled ones */
	unsigned madt_other;			/* entries of types not read (skipped by length) */
	unsigned madt_short;			/* known-type entries too short for their fields */
	struct acpi_ioapic ioapics[ACPI_MAX_IOAPICS];
	unsigned ioapic_count;
	struct acpi_override overrides[ACPI_MAX_OVERRIDES];
	unsigned override_count;
	struct acpi_nmi nmis[ACPI_MAX_NMIS];
	unsigned nmi_count;

	bool has_hpet;				/* a valid HPET table was parsed */
	uint64_t hpet_addr;			/* HPET MMIO base */
	uint8_t hpet_number;			/* HPET sequence number */
	uint16_t hpet_min_tick;			/* minimum periodic tick */

	bool has_fadt;				/* a valid FADT was parsed */
	uint32_t pm_timer_port;			/* ACPI PM timer I/O port, 0 = none */
	bool pm_timer_32bit;			/* TMR_VAL_EXT: 32-bit counter */
	bool hw_reduced;			/* HW_REDUCED_ACPI: no fixed hardware */
	bool has_reset_reg;			/* FADT reset register usable */
	struct acpi_gas reset_reg;		/* where to write */
	uint8_t reset_value;			/* what to write */

	bool has_spcr;				/* a usable 16550 SPCR table was parsed */
	uint8_t spcr_interface;			/* 0x00 16550, 0x01 16450, 0x12 per GAS */
	struct acpi_gas spcr_addr;		/* the UART's registers (io or mem) */
	uint32_t spcr_baud;			/* configured rate; 0 = as the firmware left it */
	uint32_t spcr_clock_hz;			/* UART input clock (rev 3+); 0 = unknown */

	struct acpi_mcfg mcfg[ACPI_MAX_MCFG];	/* PCIe ECAM windows */
	unsigned mcfg_count;			/* entries in mcfg */
};

extern struct acpi_info acpi;

/*
 * Find and parse the tables. rsdp is the Multiboot2 copy (NULL to scan the
 * BIOS area). Prints one line per table. Returns false if there is no ACPI.
 */
bool acpi_init(const void *rsdp, unsigned rsdp_len, bool scan_bios);

/* inject.acpi=: read the tables rewritten as real firmware writes them (a test facility). */
void acpi_inject_init(void);

/* acpi.dump: print the tables found as Linux's acpidump does (after consoles_init). */
void acpi_dump(void);

/*
 * How the parser reaches a physical range: a pointer to len readable bytes,
 * or NULL. The kernel's maps identity below acpi_mapped_limit; a host tool
 * points it into a dump of the tables.
 */
extern const void *(*acpi_map)(uint64_t phys, uint64_t len);

/* Parsing steps, exposed for host tests and tools. */
bool acpi_checksum_ok(const void *p, uint32_t len);
bool acpi_parse_root(const void *rsdp, struct acpi_info *info, void (*report)(const char *));

#endif
