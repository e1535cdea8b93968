/*
 * Boot keyboard reports to characters: the US layout of the HID Usage
 * Tables' keyboard page (0x04 'a' .. 0x1D 'z', 0x1E '1' .. 0x27 '0', then
 * Enter, Escape, Backspace, Tab, Space and the punctuation keys, and the
 * keypad).  Enter gives '\n' and Backspace '\b', as the PS/2 keyboard does.
 */
#include <stddef.h>
#include <usb/hid_boot.h>

#define USAGE_MAX	0x64

static const char plain[USAGE_MAX] = {
	[0x04] = 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm',
	'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z',
	[0x1E] = '1', '2', '3', '4', '5', '6', '7', '8', '9', '0',
	[0x28] = '\n', 27, '\b', '\t', ' ', '-', '=', '[', ']', '\\',
	[0x33] = ';', '\'', '`', ',', '.', '/',
	[0x54] = '/', '*', '-', '+', '\n', '1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '.',
};

static const char shifted[USAGE_MAX] = {
	[0x04] = 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M',
	'N', 'O', 'P', 'Q', 'R', 'S', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z',
	[0x1E] = '!', '@', '#', '$', '%', '^', '&', '*', '(', ')',
	[0x28] = '\n', 27, '\b', '\t', ' ', '_', '+', '{', '}', '|',
	[0x33] = ':', '"', '~', '<', '>', '?',
	[0x54] = '/', '*', '-', '+', '\n', '1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '.',
};

static bool was_held(const struct hid_boot_kbd *k, uint8_t code)
{
	for (unsigned i = 0; i < HID_BOOT_KEYS; i++)
		if (k->held[i] == code)
			return true;
	return false;
}

unsigned hid_boot_keys(struct hid_boot_kbd *k, const uint8_t *report, char *out, unsigned cap)
{
	const uint8_t *codes = report + 2;
	uint8_t mod = report[0];
	bool shift = mod & (HID_MOD_LSHIFT | HID_MOD_RSHIFT);
	bool ctrl = mod & (HID_MOD_LCTRL | HID_MOD_RCTRL);
	unsigned n = 0;

	for (unsigned i = 0; i < HID_BOOT_KEYS; i++)
		if (codes[i] == HID_KEY_ROLLOVER)
			return 0;	/* phantom state: keep the last report's keys */
	for (unsigned i = 0; i < HID_BOOT_KEYS && n < cap; i++) {
		uint8_t c = codes[i];
		char ch;

		if (!c || c >= USAGE_MAX || was_held(k, c))
			continue;
		ch = shift ? shifted[c] : plain[c];
		if (!ch)
			continue;
		if (ctrl && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')))
			ch &= 0x1F;
		out[n++] = ch;
	}
	for (unsigned i = 0; i < HID_BOOT_KEYS; i++)
		k->held[i] = codes[i];
	return n;
}
