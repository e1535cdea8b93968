/*
 * An interrupt IN endpoint (a keyboard's reports), polled: one transfer is
 * kept queued; its completion event is kept by whoever consumes the event
 * ring (xhci_poll_events() from the keyboard's getc, or a control or bulk
 * transfer's waiter, which would otherwise drop it) and read here.
 *
 * The endpoint context's Interval is 2^Interval units of 125 us (xHCI 1.2
 * section 6.2.3.6).  From the descriptor's bInterval (USB 2.0 9.6.6):
 *   - full and low speed: bInterval is in frames (1 ms = 8 units), 1..255;
 *     Interval = floor(log2(bInterval * 8)), so 10 ms -> 6 (8 ms: the
 *     largest power of two not above what the device asked);
 *   - high and super speed: bInterval is already an exponent, 1..16;
 *     Interval = bInterval - 1.
 */
#include <stddef.h>
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/pmm.h"
#include "xhci.h"

static uint32_t xhci_interval(uint32_t speed, uint8_t binterval)
{
	uint32_t units, e = 0;

	if (speed == SPEED_FULL || speed == SPEED_LOW) {
		units = (binterval ? binterval : 1) * 8u;
		while ((2u << e) <= units)
			e++;
		return e < 3 ? 3 : e > 10 ? 10 : e;
	}
	e = binterval ? binterval - 1u : 0;
	return e > 15 ? 15 : e;
}

int usb_intr_setup(struct usb_device *d, uint8_t ep, uint16_t mps, uint8_t interval)
{
	struct xhci *hc = d->hc;
	struct xhci_dev *x = d->x;
	uint32_t dci = xhci_ep_dci(ep), *c;
	int err;

	if (hc->dead)
		return USB_EDEAD;
	if (!(ep & USB_DIR_IN) || !mps || hc->intr)
		return USB_EINVAL;
	if (!xhci_ring_init(hc, &x->intr))
		return USB_EINVAL;
	xhci_config_begin(d, 1u << dci, dci);
	c = xhci_ctx(hc, x->in_ctx, 1 + dci);
	c[0] = EP0_INTERVAL(xhci_interval(d->speed, interval));
	c[1] = EP1_CERR3 | EP1_TYPE(EP_TYPE_INTR_IN) | EP1_MPS(mps);
	c[2] = (uint32_t)xhci_ring_deq_ptr(&x->intr);
	c[3] = (uint32_t)(xhci_ring_deq_ptr(&x->intr) >> 32);
	c[4] = mps | EP4_ESIT_LO(mps);	/* average TRB length: one report */
	if ((err = xhci_config_end(d)))
		return err;
	x->dci_intr = (uint8_t)dci;
	hc->intr = x;
	return USB_OK;
}

int usb_intr_submit(struct usb_device *d, void *buf, uint32_t len)
{
	struct xhci *hc = d->hc;
	struct xhci_dev *x = d->x;

	if (hc->dead)
		return USB_EDEAD;
	if (!x->dci_intr || !len || len > PAGE_SIZE)
		return USB_EINVAL;
	WRITE_ONCE(x->intr_done, false);
	x->intr_len = len;
	xhci_ring_put(&x->intr, (uint64_t)(uintptr_t)buf, len,
		      TRB_TYPE(TRB_NORMAL) | TRB_ISP | TRB_IOC);
	xhci_doorbell(hc, x->slot, x->dci_intr);
	return USB_OK;
}

bool usb_intr_poll(struct usb_device *d, uint32_t *actual, int *err)
{
	struct xhci *hc = d->hc;
	struct xhci_dev *x = d->x;
	uint32_t cc, residual;

	*actual = 0;
	if (hc->dead) {
		*err = USB_EDEAD;
		return true;
	}
	if (!READ_ONCE(x->intr_done))
		xhci_poll_events(hc);
	if (!READ_ONCE(x->intr_done))
		return false;
	x->intr_done = false;
	cc = TRB_CODE(x->intr_ev.status);
	residual = TRB_RESIDUAL(x->intr_ev.status);
	if (cc == CC_SUCCESS || cc == CC_SHORT) {
		*actual = x->intr_len - (residual > x->intr_len ? x->intr_len : residual);
		*err = USB_OK;
		return true;
	}
	xhci_ep_recover(d, x->dci_intr, &x->intr);
	*err = cc == CC_STALL ? USB_ESTALL : USB_EIO;
	return true;
}
