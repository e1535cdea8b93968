/*
 * Console discovery and selection.
 *
 * COM1 (and VGA text under BIOS) are registered before anything is parsed,
 * so that early output has a home. Once ACPI is known, consoles_init() looks
 * for the rest, in this order, each reported on one line:
 *
 *   console: found=ttyS0 io=0x3f8 baud=115200            (the early COM1)
 *   console: found=spcr io=0x2f8 baud=57600               (ACPI SPCR)
 *   console: found=pci dev=0000:00:03.0 id=1b36:0002 io=0xc000 baud=115200
 *   console: found=ttyS1 io=0x2f8 same_as=spcr            (already found)
 *   console: found=fb ... / found=vga ... / found=kbd ...
 *
 * The first finder names a device; a later finder of the same registers
 * says same_as= and adds nothing. Then console= picks a subset:
 *
 *   console=ttyS0,115200       one serial port, at a baud rate
 *   console=spcr,fb            several at once (a number after a serial
 *                              console is its baud rate)
 *
 * Without console= every console found is used. A name that is unknown or
 * absent is reported on every console found (all are registered first, so
 * the message reaches whichever one a person is looking at), then the
 * default applies. Consoles registered late get the log replayed by
 * console_register(), so each one starts with the whole boot.
 */
#include <stdbool.h>
#include <stdint.h>
#include <arch/acpi.h>
#include <arch/consoles.h>
#include <arch/paging.h>
#include <arch/pci.h>
#include <arch/ps2kbd.h>
#include <arch/uart.h>
#include <arch/vga.h>
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/fbcon.h"
#include "kernel/font.h"
#include "lib/format.h"
#include "kernel/kstring.h"

#define MAX_FOUND	12
#define PCI_CLASS_COMM		0x07
#define PCI_SUBCLASS_SERIAL	0x00
#define PCI_PROGIF_16450	0x01	/* 0x01..0x06: 16450 .. 16950, all 16550-register compatible */
#define PCI_PROGIF_16950	0x06
#define BAUD_MIN	50
#define BAUD_MAX	4000000

struct found {
	const char *name;	/* what console= calls it */
	struct console *con;	/* where output goes */
	struct uart *uart;	/* serial ones: for a baud rate from console= */
	bool registered;	/* on the console list now */
	bool selected;		/* console= (or the default) wants it */
	uint32_t baud;		/* console= rate; 0 = keep */
	struct found *alias;	/* another name for this entry (same_as=), else NULL */
};

static struct found found[MAX_FOUND];
static unsigned nfound;
static struct uart spcr_uart, pci_uart, legacy_uart[4];

static char console_opt[96] = "";
CMDLINE_OPTION(console, .name = "console", .type = OPT_STRING, .var = console_opt,
	       .size = sizeof(console_opt),
	       .help = "consoles to use: comma list of ttyS0..ttyS3|spcr|pci|fb|vga|kbd, "
		       "a baud rate may follow a serial one");

static const char *const legacy_names[4] = { "ttyS0", "ttyS1", "ttyS2", "ttyS3" };
static const uint16_t legacy_ports[4] = { 0x3F8, 0x2F8, 0x3E8, 0x2E8 };

static struct found *add(const char *name, struct console *con, struct uart *u, bool registered)
{
	struct found *f;

	if (nfound == MAX_FOUND)
		return NULL;
	f = &found[nfound++];
	*f = (struct found){ .name = name, .con = con, .uart = u, .registered = registered };
	return f;
}

/* A serial console already found at the same registers, or NULL. */
static struct found *same_uart(const struct uart *u)
{
	for (unsigned i = 0; i < nfound; i++)
		if (found[i].uart && found[i].uart->mmio == u->mmio && found[i].uart->base == u->base)
			return &found[i];
	return NULL;
}

static void describe(char *buf, size_t cap, const struct uart *u)
{
	if (u->mmio)
		ksnprintf(buf, cap, "mem=0x%llx width=%u", (unsigned long long)u->base,
			  u->access_bytes * 8);
	else
		ksnprintf(buf, cap, "io=0x%llx", (unsigned long long)u->base);
}

/* Report a serial console; false if it is a device found before. */
static bool add_uart(const char *name, struct uart *u, const char *extra)
{
	struct found *same = same_uart(u);
	char where[48];

	describe(where, sizeof(where), u);
	if (same) {
		struct found *a = add(name, NULL, NULL, false);
		printk("console: found=%s %s%s same_as=%s\n", name, extra, where, same->name);
		if (a)
			a->alias = same;	/* console=<name> selects the same device */
		return false;
	}
	if (!uart_present(u)) {
		printk("console: %s %s%s does not answer; not used\n", name, extra, where);
		return false;
	}
	printk("console: found=%s %s%s baud=%u\n", name, extra, where, u->baud);
	add(name, &u->con, u, false);
	return true;
}

static void find_spcr(void)
{
	struct uart *u = &spcr_uart;

	if (!acpi.has_spcr)
		return;
	*u = (struct uart){
		.mmio = acpi.spcr_addr.space_id == ACPI_GAS_MEMORY,
		.base = acpi.spcr_addr.address,
		.clock_hz = acpi.spcr_clock_hz,
		.baud = acpi.spcr_baud,
	};
	if (u->mmio) {
		/* 32-bit registers when the GAS says so (width or access size). */
		bool wide = acpi.spcr_addr.bit_width == 32 || acpi.spcr_addr.access_size == 3;
		extern uint64_t acpi_mapped_limit;
		u->access_bytes = wide ? 4 : 1;
		u->reg_shift = wide ? 2 : 0;
		if (u->base + (8u << u->reg_shift) > acpi_mapped_limit) {
			printk("console: spcr mem=0x%llx is not mapped; not used\n",
			       (unsigned long long)u->base);
			return;
		}
	}
	add_uart("spcr", u, "");
}

static bool pci_serial(const struct pci_dev *d, void *arg)
{
	struct uart *u = &pci_uart;
	char extra[64];

	(void)arg;
	if (d->prog_if > PCI_PROGIF_16950) {
		printk("console: pci %02x:%02x.%u id=%04x:%04x prog_if=0x%x is not 16550-compatible; "
		       "not used\n", d->bus, d->dev, d->fn, d->vendor, d->device, d->prog_if);
		return true;
	}
	*u = (struct uart){ .baud = 115200 };
	for (unsigned i = 0; i < 6 && !u->base; i++) {
		struct pci_bar b = pci_bar(d, i);
		if (!b.base)
			continue;
		u->mmio = !b.io;
		u->base = b.base;
		u->access_bytes = 1;
	}
	ksnprintf(extra, sizeof(extra), "dev=%04x:%02x:%02x.%u id=%04x:%04x ",
		  d->segment, d->bus, d->dev, d->fn, d->vendor, d->device);
	if (!u->base) {
		printk("console: pci %s has no assigned BAR; not used\n", extra);
		return true;
	}
	pci_enable(d, u->mmio ? PCI_CMD_MEMORY : PCI_CMD_IO);
	uart_setup(u, u->baud);
	return !add_uart("pci", u, extra);	/* the first working card is enough */
}

static void find_serial(void)
{
	struct uart *early = uart_early();

	if (early) {
		printk("console: found=ttyS0 io=0x%llx baud=%u\n",
		       (unsigned long long)early->base, early->baud);
		add("ttyS0", &early->con, early, true);
	}
	find_spcr();
	pci_init();
	pci_find_class(PCI_CLASS_COMM, PCI_SUBCLASS_SERIAL, pci_serial, NULL);
	for (unsigned i = 0; i < 4; i++) {
		struct uart *u = &legacy_uart[i];
		if (i == 0 && early)
			continue;
		*u = (struct uart){ .base = legacy_ports[i] };
		if (!same_uart(u) && !uart_present(u))
			continue;	/* absent COM ports are the rule: say nothing */
		u->baud = 115200;
		if (add_uart(legacy_names[i], u, ""))
			uart_setup(u, u->baud);
	}
}

static void find_fb(void)
{
	const struct boot_framebuffer *fb = &boot_info.fb;
	uint64_t end = fb->addr + (uint64_t)fb->pitch * fb->height;
	const char *why = NULL;
	struct console *con;
	unsigned cols, rows;

	if (!boot_info.has_fb || fb->type == BOOT_FB_EGA)
		return;		/* EGA text is the VGA console's */
	if (end > paging_mapped_limit() && paging_map_identity(end) < end) {
		printk("console: fb addr=0x%llx is beyond the identity map; not used\n",
		       (unsigned long long)fb->addr);
		return;
	}
	con = fbcon_init(fb, &why);
	if (!con) {
		printk("console: fb addr=0x%llx mode=%ux%ux%u: %s; not used\n",
		       (unsigned long long)fb->addr, fb->width, fb->height, fb->bpp, why);
		return;
	}
	fbcon_size(&cols, &rows);
	printk("console: found=fb addr=0x%llx mode=%ux%ux%u pitch=%u text=%ux%u font=%ux%u\n",
	       (unsigned long long)fb->addr, fb->width, fb->height, fb->bpp, fb->pitch,
	       cols, rows, font_console.width, font_console.height);
	add("fb", con, NULL, false);
}

static void find_screens(void)
{
	struct console *vga = vga_console();

	find_fb();
	if (vga) {
		printk("console: found=vga mode=80x25 text\n");
		add("vga", vga, NULL, true);
	}
}

static void register_found(struct found *f)
{
	if (f->registered || f->alias)
		return;
	if (f->uart)
		uart_register(f->uart, f->name);	/* fills in f->con */
	else
		console_register(f->con);
	f->registered = true;
}

static void find_keyboard(void)
{
	const char *desc = NULL;
	struct console *con = ps2kbd_probe(&desc);

	if (!con)
		return;
	printk("console: found=kbd ps2 scancodes=%s\n", desc);
	add("kbd", con, NULL, false);
}

static struct found *lookup(const char *name, size_t len)
{
	for (unsigned i = 0; i < nfound; i++)
		if (strlen(found[i].name) == len && !strncmp(found[i].name, name, len))
			return found[i].alias ? found[i].alias : &found[i];
	return NULL;
}

static bool known_name(const char *name, size_t len)
{
	static const char *const names[] = { "ttyS0", "ttyS1", "ttyS2", "ttyS3", "spcr", "pci",
					     "fb", "vga", "kbd", NULL };
	for (int i = 0; names[i]; i++)
		if (strlen(names[i]) == len && !strncmp(names[i], name, len))
			return true;
	return false;
}

static bool parse_baud(const char *s, size_t len, uint32_t *out)
{
	uint64_t v = 0;

	if (!len || len > 8)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v < BAUD_MIN || v > BAUD_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* Apply console=; on a problem write why into err and select nothing. */
static bool apply_selection(const char *opt, char *err, size_t cap)
{
	struct found *last = NULL;
	const char *p = opt;

	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		uint32_t baud;

		if (len && p[0] >= '0' && p[0] <= '9') {
			if (!last || !last->uart) {
				ksnprintf(err, cap, "baud rate '%.*s' does not follow a serial console",
					  (int)len, p);
				return false;
			}
			if (!parse_baud(p, len, &baud)) {
				ksnprintf(err, cap, "baud rate '%.*s' is not a number in %u..%u",
					  (int)len, p, BAUD_MIN, BAUD_MAX);
				return false;
			}
			last->baud = baud;
		} else if (!known_name(p, len)) {
			ksnprintf(err, cap, "'%.*s' is not a console name; accepted: "
				  "ttyS0|ttyS1|ttyS2|ttyS3|spcr|pci|fb|vga|kbd, a baud rate may "
				  "follow a serial one", (int)len, p);
			return false;
		} else if (!(last = lookup(p, len))) {
			ksnprintf(err, cap, "%.*s was not found", (int)len, p);
			return false;
		} else {
			last->selected = true;
		}
		p += len + (end ? 1 : 0);
	}
	return true;
}

void consoles_init(void)
{
	char err[192], list[96];
	size_t n = 0;

	find_serial();
	find_screens();
	find_keyboard();

	if (console_opt[0] && !apply_selection(console_opt, err, sizeof(err))) {
		for (unsigned i = 0; i < nfound; i++) {
			found[i].selected = false;
			found[i].baud = 0;
			register_found(&found[i]);
		}
		printk("console: console=%s: %s; using the default (every console found)\n",
		       console_opt, err);
		console_opt[0] = '\0';
	}
	if (!console_opt[0])
		for (unsigned i = 0; i < nfound; i++)
			found[i].selected = !found[i].alias;

	list[0] = '\0';
	for (unsigned i = 0; i < nfound; i++) {
		struct found *f = &found[i];
		if (!f->selected)
			continue;
		if (f->uart && f->baud && f->baud != f->uart->baud) {
			printk("console: %s baud=%u\n", f->name, f->baud);
			uart_setup(f->uart, f->baud);
		} else if (f->uart && !f->registered) {
			uart_setup(f->uart, f->uart->baud);
		}
		register_found(f);
		n += ksnprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s%s",
			       n ? "," : "", f->name);
	}
	printk("console: using=%s\n", n ? list : "none");
	for (unsigned i = 0; i < nfound; i++) {
		if (found[i].registered && !found[i].selected) {
			console_unregister(found[i].con);
			found[i].registered = false;
		}
	}
}
