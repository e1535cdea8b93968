/*
 * PS/2 keyboard, polled: for a shell on a machine with no serial line.
 *
 * The i8042 controller (ports 0x60 data, 0x64 status/command) passes on the
 * keyboard's scancodes. Keyboards send set 2; the controller translates
 * them to set 1 when bit 6 of its configuration byte is set, which is what
 * firmware leaves on nearly everywhere. Both are decoded here: set 2 codes
 * go through a set-2-to-set-1 table (the same translation the controller
 * does), so one US-layout keymap serves both.
 *
 *   set 1: make = code, break = code | 0x80, extended keys after 0xE0
 *   set 2: make = code, break = 0xF0 code,   extended keys after 0xE0
 *
 * Bytes with the status register's AUX bit come from a mouse and are
 * dropped. Nothing here waits: getc reads what is pending and returns -1
 * when there is nothing (bounded per call).
 */
#include <stdint.h>
#include <arch/io.h>
#include <arch/ps2kbd.h>
#include "kernel/cmdline.h"
#include "kernel/console.h"

#define I8042_DATA		0x60
#define I8042_STATUS		0x64	/* read */
#define I8042_COMMAND		0x64	/* write */
#define STATUS_OBF		0x01	/* output buffer full: a byte to read */
#define STATUS_IBF		0x02	/* input buffer full: busy */
#define STATUS_AUX		0x20	/* the byte is from the mouse port */
#define CMD_READ_CONFIG		0x20
#define CMD_WRITE_CONFIG	0x60
#define CONFIG_TRANSLATE	0x40	/* set 2 -> set 1 translation on */
#define SPIN_LIMIT		100000
#define BYTES_PER_GETC		16

#define SC_EXTENDED		0xE0
#define SC2_BREAK		0xF0
#define SC1_BREAK_BIT		0x80
/* Set 1 codes of the modifier keys. */
#define SC1_LCTRL		0x1D	/* also right Ctrl after 0xE0 */
#define SC1_LSHIFT		0x2A
#define SC1_RSHIFT		0x36
#define SC1_CAPS		0x3A
#define SC1_ENTER		0x1C
#define SC1_SLASH		0x35

enum scancode_choice { SC_AUTO, SC_SET1, SC_SET2 };
static const char *const scancode_choices[] = { "auto", "set1", "set2", NULL };
static int scancode_choice = SC_AUTO;
CMDLINE_OPTION(kbd_scancodes, .name = "kbd.scancodes", .type = OPT_ENUM,
	       .var = &scancode_choice, .choices = scancode_choices,
	       .help = "PS/2 scancodes: auto (as the firmware left the controller), "
		       "set1 (translation on) or set2 (off)");

/* US layout, indexed by set 1 make code; 0 = no character. */
static const char keymap[0x59] = {
	[0x01] = 27, '1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '-', '=', '\b',
	[0x0F] = '\t', 'q', 'w', 'e', 'r', 't', 'y', 'u', 'i', 'o', 'p', '[', ']', '\n',
	[0x1E] = 'a', 's', 'd', 'f', 'g', 'h', 'j', 'k', 'l', ';', '\'', '`',
	[0x2B] = '\\', 'z', 'x', 'c', 'v', 'b', 'n', 'm', ',', '.', '/',
	[0x37] = '*', [0x39] = ' ',
	[0x47] = '7', '8', '9', '-', '4', '5', '6', '+', '1', '2', '3', '0', '.',
};
static const char keymap_shift[0x59] = {
	[0x01] = 27, '!', '@', '#', '$', '%', '^', '&', '*', '(', ')', '_', '+', '\b',
	[0x0F] = '\t', 'Q', 'W', 'E', 'R', 'T', 'Y', 'U', 'I', 'O', 'P', '{', '}', '\n',
	[0x1E] = 'A', 'S', 'D', 'F', 'G', 'H', 'J', 'K', 'L', ':', '"', '~',
	[0x2B] = '|', 'Z', 'X', 'C', 'V', 'B', 'N', 'M', '<', '>', '?',
	[0x37] = '*', [0x39] = ' ',
	[0x47] = '7', '8', '9', '-', '4', '5', '6', '+', '1', '2', '3', '0', '.',
};

/* Set 2 make code -> set 1 make code, for the keys in the keymap. */
static const uint8_t set2_to_set1[0x80] = {
	[0x76] = 0x01, [0x16] = 0x02, [0x1E] = 0x03, [0x26] = 0x04, [0x25] = 0x05,
	[0x2E] = 0x06, [0x36] = 0x07, [0x3D] = 0x08, [0x3E] = 0x09, [0x46] = 0x0A,
	[0x45] = 0x0B, [0x4E] = 0x0C, [0x55] = 0x0D, [0x66] = 0x0E, [0x0D] = 0x0F,
	[0x15] = 0x10, [0x1D] = 0x11, [0x24] = 0x12, [0x2D] = 0x13, [0x2C] = 0x14,
	[0x35] = 0x15, [0x3C] = 0x16, [0x43] = 0x17, [0x44] = 0x18, [0x4D] = 0x19,
	[0x54] = 0x1A, [0x5B] = 0x1B, [0x5A] = 0x1C, [0x14] = 0x1D, [0x1C] = 0x1E,
	[0x1B] = 0x1F, [0x23] = 0x20, [0x2B] = 0x21, [0x34] = 0x22, [0x33] = 0x23,
	[0x3B] = 0x24, [0x42] = 0x25, [0x4B] = 0x26, [0x4C] = 0x27, [0x52] = 0x28,
	[0x0E] = 0x29, [0x12] = 0x2A, [0x5D] = 0x2B, [0x1A] = 0x2C, [0x22] = 0x2D,
	[0x21] = 0x2E, [0x2A] = 0x2F, [0x32] = 0x30, [0x31] = 0x31, [0x3A] = 0x32,
	[0x41] = 0x33, [0x49] = 0x34, [0x4A] = 0x35, [0x59] = 0x36, [0x7C] = 0x37,
	[0x29] = 0x39, [0x58] = 0x3A, [0x6C] = 0x47, [0x75] = 0x48, [0x7D] = 0x49,
	[0x7B] = 0x4A, [0x6B] = 0x4B, [0x73] = 0x4C, [0x74] = 0x4D, [0x79] = 0x4E,
	[0x69] = 0x4F, [0x72] = 0x50, [0x7A] = 0x51, [0x70] = 0x52, [0x71] = 0x53,
};

struct ps2kbd {
	bool set2;		/* untranslated: decode set 2 */
	bool extended;		/* an 0xE0 prefix came */
	bool release;		/* set 2: an 0xF0 prefix came */
	bool shift_l, shift_r;	/* Shift keys held */
	bool ctrl;		/* a Ctrl key held */
	bool caps;		/* Caps Lock on */
};

static struct ps2kbd kbd;
static struct console kbd_con;

static bool wait_input_clear(void)
{
	for (int i = 0; i < SPIN_LIMIT; i++)
		if (!(inb(I8042_STATUS) & STATUS_IBF))
			return true;
	return false;
}

static int read_data_wait(void)
{
	for (int i = 0; i < SPIN_LIMIT; i++)
		if (inb(I8042_STATUS) & STATUS_OBF)
			return inb(I8042_DATA);
	return -1;
}

/* One set 1 event (code without the break bit); returns a character or -1. */
static int key_event(uint8_t code, bool release, bool extended)
{
	char ch;

	switch (code) {
	case SC1_LSHIFT:
		if (!extended)	/* E0 2A is a fake shift sent around some keys */
			kbd.shift_l = !release;
		return -1;
	case SC1_RSHIFT:
		if (!extended)
			kbd.shift_r = !release;
		return -1;
	case SC1_LCTRL:
		kbd.ctrl = !release;
		return -1;
	case SC1_CAPS:
		if (!release)
			kbd.caps = !kbd.caps;
		return -1;
	}
	if (release || code >= sizeof(keymap))
		return -1;
	if (extended && code != SC1_ENTER && code != SC1_SLASH)
		return -1;	/* arrows, Home, ...: no character */
	bool shift = kbd.shift_l || kbd.shift_r;
	ch = shift ? keymap_shift[code] : keymap[code];
	if (ch >= 'a' && ch <= 'z' && kbd.caps)
		ch = keymap_shift[code];
	else if (ch >= 'A' && ch <= 'Z' && kbd.caps)
		ch = keymap[code];
	if (!ch)
		return -1;
	if (kbd.ctrl && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')))
		ch &= 0x1F;
	return (uint8_t)ch;
}

/* Feed one byte from the keyboard; returns a character or -1. */
static int feed(uint8_t b)
{
	bool ext = kbd.extended, rel;
	uint8_t code;

	if (b == SC_EXTENDED) {
		kbd.extended = true;
		return -1;
	}
	if (kbd.set2 && b == SC2_BREAK) {
		kbd.release = true;
		return -1;
	}
	kbd.extended = false;
	if (kbd.set2) {
		rel = kbd.release;
		kbd.release = false;
		code = b < sizeof(set2_to_set1) ? set2_to_set1[b] : 0;
		if (!code)
			return -1;
	} else {
		rel = b & SC1_BREAK_BIT;
		code = b & ~SC1_BREAK_BIT;
	}
	return key_event(code, rel, ext);
}

static int kbd_getc(struct console *c)
{
	(void)c;
	for (int i = 0; i < BYTES_PER_GETC; i++) {
		uint8_t st = inb(I8042_STATUS);
		if (!(st & STATUS_OBF))
			return -1;
		uint8_t b = inb(I8042_DATA);
		if (st & STATUS_AUX)
			continue;	/* mouse */
		int ch = feed(b);
		if (ch >= 0)
			return ch;
	}
	return -1;
}

static void kbd_write(struct console *c, const char *s, size_t n)
{
	(void)c, (void)s, (void)n;	/* input only */
}

struct console *ps2kbd_probe(const char **desc)
{
	int config;

	if (inb(I8042_STATUS) == 0xFF)
		return NULL;	/* floating bus: no controller */
	for (int i = 0; i < BYTES_PER_GETC && (inb(I8042_STATUS) & STATUS_OBF); i++)
		inb(I8042_DATA);	/* stale bytes */
	if (!wait_input_clear())
		return NULL;
	outb(I8042_COMMAND, CMD_READ_CONFIG);
	config = read_data_wait();
	if (config < 0)
		return NULL;	/* no answer: not a working i8042 */
	if (scancode_choice != SC_AUTO) {
		uint8_t want = scancode_choice == SC_SET1 ? (config | CONFIG_TRANSLATE)
							  : (config & ~CONFIG_TRANSLATE);
		if (want != config && wait_input_clear()) {
			outb(I8042_COMMAND, CMD_WRITE_CONFIG);
			if (wait_input_clear())
				outb(I8042_DATA, want);
			config = want;
		}
	}
	kbd = (struct ps2kbd){ .set2 = !(config & CONFIG_TRANSLATE) };
	*desc = kbd.set2 ? "set2" : "set1";
	kbd_con.name = "kbd";
	kbd_con.write = kbd_write;
	kbd_con.getc = kbd_getc;
	return &kbd_con;
}
