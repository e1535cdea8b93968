/*
 * A USB keyboard in boot protocol, polled: for a shell on a machine whose
 * only keyboard is USB (no PS/2 emulation by the firmware once the xHCI
 * controller is ours).
 *
 * The first interface of class 3 (HID), subclass 1 (boot), protocol 1
 * (keyboard) on any enumerated device is the keyboard: SET_PROTOCOL(boot)
 * so its reports are the 8-byte boot report whatever its report descriptor
 * says, SET_IDLE(0) so it reports only on a change, then its interrupt IN
 * endpoint is configured and one transfer kept queued.  The console's getc
 * polls for that transfer's completion (never waits), turns the report
 * into characters (hid_boot.c) and queues the next transfer.  Its
 * characters reach console input exactly as the PS/2 keyboard's do:
 * Ctrl+C is 0x03.
 */
#include <stddef.h>
#include <usb/hid_boot.h>
#include <usb/usb.h>
#include <usb/usbkbd.h>
#include "kernel/console.h"
#include "kernel/pmm.h"

#define HID_CLASS		3
#define HID_SUBCLASS_BOOT	1
#define HID_PROTO_KEYBOARD	1
#define HID_REQ_SET_IDLE	0x0A
#define HID_REQ_SET_PROTOCOL	0x0B
#define HID_PROTOCOL_BOOT	0
#define USB_EP_INTERRUPT	3
#define CONTROL_TIMEOUT_MS	1000
#define MAX_ERRORS		8	/* transfers failing in a row before the keyboard is left */

struct usbkbd {
	struct usb_device *dev;		/* the keyboard */
	uint8_t iface;			/* its boot keyboard interface */
	uint8_t ep;			/* interrupt IN endpoint address */
	uint16_t mps;			/* its max packet size */
	uint8_t interval;		/* its bInterval */
	uint8_t *report;		/* DMA page the reports land in */
	struct hid_boot_kbd keys;	/* keys held at the last report */
	char pending[HID_BOOT_KEYS];	/* characters of a report not yet read */
	unsigned npending, next;	/* how many, the next to hand out */
	unsigned errors;		/* failed transfers in a row */
	bool dead;			/* given up: getc returns -1 */
};

static struct usbkbd kbd;
static struct console kbd_con;

/* The boot keyboard interface of d and its interrupt IN endpoint; false if none. */
static bool find_iface(struct usb_device *d, struct usbkbd *k)
{
	const uint8_t *p = d->config, *end = d->config + d->config_len;
	bool in_iface = false;

	while (p + 2 <= end && p[0] >= 2 && p + p[0] <= end) {
		if (p[1] == USB_DT_INTERFACE && p[0] >= 9) {
			if (in_iface)
				return false;	/* the keyboard's interface had no endpoint */
			in_iface = p[5] == HID_CLASS && p[6] == HID_SUBCLASS_BOOT &&
				   p[7] == HID_PROTO_KEYBOARD;
			k->iface = p[2];
		} else if (in_iface && p[1] == USB_DT_ENDPOINT && p[0] >= 7 &&
			   (p[2] & USB_DIR_IN) && (p[3] & 3) == USB_EP_INTERRUPT) {
			k->ep = p[2];
			k->mps = (uint16_t)(p[4] | (p[5] & 7) << 8);
			k->interval = p[6];
			return k->mps > 0;
		}
		p += p[0];
	}
	return false;
}

static bool bring_up(struct usbkbd *k)
{
	struct usb_device *d = k->dev;
	int err;

	err = usb_control(d, USB_TYPE_CLASS | USB_RECIP_INTERFACE, HID_REQ_SET_PROTOCOL,
			  HID_PROTOCOL_BOOT, k->iface, NULL, 0, NULL, CONTROL_TIMEOUT_MS);
	if (err) {
		printk("usb: %s: keyboard refuses the boot protocol (%s); not used\n", d->name,
		       usb_strerror(err));
		return false;
	}
	/* Optional for a keyboard to honour (HID 1.11 7.2.4): a stall is no reason to stop. */
	err = usb_control(d, USB_TYPE_CLASS | USB_RECIP_INTERFACE, HID_REQ_SET_IDLE, 0, k->iface,
			  NULL, 0, NULL, CONTROL_TIMEOUT_MS);
	if (err && err != USB_ESTALL) {
		printk("usb: %s: keyboard: SET_IDLE failed (%s); not used\n", d->name,
		       usb_strerror(err));
		return false;
	}
	if (!(k->report = (uint8_t *)(uintptr_t)pmm_alloc_nowait(1, 1))) {
		printk("usb: %s: keyboard: no memory for its reports; not used\n", d->name);
		return false;
	}
	if ((err = usb_intr_setup(d, k->ep, k->mps, k->interval)) ||
	    (err = usb_intr_submit(d, k->report, HID_BOOT_REPORT))) {
		printk("usb: %s: keyboard: its interrupt endpoint cannot be used (%s); not used\n",
		       d->name, usb_strerror(err));
		return false;
	}
	return true;
}

/* A completed transfer: its characters into pending, the next transfer queued. */
static void take_report(struct usbkbd *k, uint32_t got, int err)
{
	if (err) {
		if (++k->errors == MAX_ERRORS || err == USB_EDEAD) {
			printk("usb: %s: keyboard: %u transfers failed in a row (%s); keyboard "
			       "left\n", k->dev->name, k->errors, usb_strerror(err));
			k->dead = true;
			return;
		}
	} else {
		k->errors = 0;
		if (got >= HID_BOOT_REPORT) {
			k->npending = hid_boot_keys(&k->keys, k->report, k->pending,
						    HID_BOOT_KEYS);
			k->next = 0;
		}
	}
	if ((err = usb_intr_submit(k->dev, k->report, HID_BOOT_REPORT))) {
		printk("usb: %s: keyboard: a transfer cannot be queued (%s); keyboard left\n",
		       k->dev->name, usb_strerror(err));
		k->dead = true;
	}
}

static int kbd_getc(struct console *c)
{
	struct usbkbd *k = c->priv;
	uint32_t got;
	int err;

	if (k->next == k->npending && !k->dead && usb_intr_poll(k->dev, &got, &err))
		take_report(k, got, err);
	if (k->next < k->npending)
		return (uint8_t)k->pending[k->next++];
	return -1;
}

static void kbd_write(struct console *c, const char *s, size_t n)
{
	(void)c, (void)s, (void)n;	/* input only */
}

void usbkbd_init(void)
{
	if (!usb_present())
		return;
	usb_init();
	for (unsigned i = 0; i < usb_device_count; i++) {
		struct usb_device *d = &usb_devices[i];

		kbd = (struct usbkbd){ .dev = d };
		if (!find_iface(d, &kbd))
			continue;
		if (!bring_up(&kbd))
			return;
		printk("usb: keyboard device=\"%s\" id=%04x:%04x interface=%u endpoint=0x%02x "
		       "interval=%u\n", d->name, d->vendor, d->product, kbd.iface, kbd.ep,
		       kbd.interval);
		kbd_con.name = "usbkbd";
		kbd_con.write = kbd_write;
		kbd_con.getc = kbd_getc;
		kbd_con.priv = &kbd;
		console_register(&kbd_con);
		return;
	}
}
