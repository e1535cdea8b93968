/*
 * drivers/usb/hid_boot.c on report sequences written out by hand from the
 * HID Usage Tables (keyboard page), not from the driver's tables: new
 * presses only, several keys in one report in their order, key rollover,
 * shift, Ctrl+C, Enter and Backspace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <usb/hid_boot.h>

/* Feed reports (each 8 bytes) and return every character typed, NUL-terminated. */
static const char *type(const uint8_t (*reports)[8], unsigned n)
{
	static char buf[64];
	struct hid_boot_kbd k;
	unsigned len = 0;

	memset(&k, 0, sizeof(k));
	for (unsigned i = 0; i < n; i++)
		len += hid_boot_keys(&k, reports[i], buf + len, HID_BOOT_KEYS);
	buf[len] = '\0';
	return buf;
}

#define TYPE(...) ({ static const uint8_t r_[][8] = { __VA_ARGS__ }; \
		     type(r_, sizeof(r_) / sizeof(r_[0])); })

static void held_key_types_once(void **state)
{
	(void)state;
	/* 's' (0x16) pressed, held over three reports, released, pressed again. */
	assert_string_equal(TYPE({ 0, 0, 0x16 }, { 0, 0, 0x16 }, { 0, 0, 0x16 }, { 0 },
				 { 0, 0, 0x16 }), "ss");
}

static void status_enter(void **state)
{
	(void)state;
	/* s t a t u s Enter, each released before the next. */
	assert_string_equal(TYPE({ 0, 0, 0x16 }, { 0 }, { 0, 0, 0x17 }, { 0 }, { 0, 0, 0x04 },
				 { 0 }, { 0, 0, 0x17 }, { 0 }, { 0, 0, 0x18 }, { 0 },
				 { 0, 0, 0x16 }, { 0 }, { 0, 0, 0x28 }, { 0 }), "status\n");
}

static void overlapping_presses(void **state)
{
	(void)state;
	/* 'a' held, then 'b' joins (a's slot first), 'a' lets go (b moves to slot 0). */
	assert_string_equal(TYPE({ 0, 0, 0x04 }, { 0, 0, 0x04, 0x05 }, { 0, 0, 0x05 },
				 { 0, 0, 0x05, 0x06 }), "abc");
	/* Two keys first seen in one report: both, in the report's order. */
	assert_string_equal(TYPE({ 0, 0, 0x1E, 0x1F }), "12");
}

static void rollover_is_ignored(void **state)
{
	(void)state;
	/* 'a' held, then a seventh key: ErrorRollOver in every slot; then back to a+b. */
	assert_string_equal(TYPE({ 0, 0, 0x04 }, { 0, 0, 1, 1, 1, 1, 1, 1 }, { 0, 0, 0x04, 0x05 }),
			    "ab");
}

static void shift_and_ctrl(void **state)
{
	(void)state;
	assert_string_equal(TYPE({ HID_MOD_LSHIFT, 0, 0x1E }, { 0 }, { HID_MOD_RSHIFT, 0, 0x04 },
				 { 0 }, { 0, 0, 0x04 }, { 0 }, { HID_MOD_LSHIFT, 0, 0x38 }),
			    "!Aa?");
	/* Ctrl+C: 0x03, left or right Ctrl. */
	assert_string_equal(TYPE({ HID_MOD_LCTRL, 0, 0x06 }, { 0 }, { HID_MOD_RCTRL, 0, 0x06 }),
			    "\x03\x03");
	/* A modifier alone types nothing. */
	assert_string_equal(TYPE({ HID_MOD_LSHIFT }, { HID_MOD_LSHIFT | HID_MOD_LCTRL }), "");
}

static void special_keys(void **state)
{
	(void)state;
	/* Backspace, Tab, Space, '-', '/', F1 (0x3A: nothing), Up (0x52: nothing). */
	assert_string_equal(TYPE({ 0, 0, 0x2A }, { 0, 0, 0x2B }, { 0, 0, 0x2C }, { 0, 0, 0x2D },
				 { 0, 0, 0x38 }, { 0, 0, 0x3A }, { 0, 0, 0x52 }), "\b\t -/");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(held_key_types_once),
		cmocka_unit_test(status_enter),
		cmocka_unit_test(overlapping_presses),
		cmocka_unit_test(rollover_is_ignored),
		cmocka_unit_test(shift_and_ctrl),
		cmocka_unit_test(special_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
