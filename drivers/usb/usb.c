/*
 * The USB stack's start (<usb/usb.h> usb_init()): the controllers first
 * (xhci.c), then the devices on their root ports (xhci_dev.c), each
 * driver's probe called from there. Its own file, so that the controller
 * code never calls the device code back.
 */
#include <stdbool.h>
#include "kernel/console.h"
#include "usb/usb.h"
#include "xhci.h"

void usb_init(void)
{
	static bool done;
	struct xhci *hcs;
	unsigned n;

	if (done)
		return;
	done = true;
	hcs = xhci_start_all(&n);
	if (!n) {
		printk("usb: no usable xHCI controller\n");
		return;
	}
	for (unsigned i = 0; i < n; i++)
		xhci_ports(&hcs[i]);
}
