/*
 * A HID boot-protocol keyboard's reports as characters (US layout).  Pure:
 * built for the kernel and for the host tests alike.
 *
 * A boot report (HID 1.11 appendix B.1) is 8 bytes: a modifier bitmap,
 * a reserved byte, and up to 6 usage codes of the keys held now (HID Usage
 * Tables, page 7).  A key press is a code that was not in the previous
 * report; a report of ErrorRollOver codes (too many keys) says nothing of
 * which keys are held and is ignored.
 */
#ifndef USB_HID_BOOT_H
#define USB_HID_BOOT_H

#include <stdbool.h>
#include <stdint.h>

#define HID_BOOT_REPORT		8	/* bytes of a boot keyboard report */
#define HID_BOOT_KEYS		6	/* key codes in it */

/* Modifier bits (report byte 0). */
#define HID_MOD_LCTRL		0x01
#define HID_MOD_LSHIFT		0x02
#define HID_MOD_RCTRL		0x10
#define HID_MOD_RSHIFT		0x20

#define HID_KEY_ROLLOVER	0x01	/* ErrorRollOver: more keys than the report holds */

struct hid_boot_kbd {
	uint8_t held[HID_BOOT_KEYS];	/* the codes of the last report that counted */
};

/*
 * The characters of the keys pressed since the previous report, in the
 * report's order, into out (at most cap; HID_BOOT_KEYS always suffices).
 * Shift gives the shifted character; Ctrl with a letter its control code
 * (Ctrl+C: 0x03).  Keys without a character (arrows, F-keys) give nothing.
 * Returns the number written.
 */
unsigned hid_boot_keys(struct hid_boot_kbd *k, const uint8_t *report, char *out, unsigned cap);

#endif
