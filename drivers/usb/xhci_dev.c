/*
 * Root ports and the devices on them: enumeration, then control and bulk
 * transfers.  No hubs: a stick plugged into a hub is named and left.
 *
 * A port with a device (CCS):
 *   USB 3 (Supported Protocol major 3): the link trains by itself; wait for
 *     PED (enabled, U0);
 *   USB 2: write PR and wait for PRC, then PED (USB 2.0 7.1.7.5: 10 ms of
 *     recovery after the reset before the first request).
 * Then Enable Slot; Address Device with EP0's max packet size guessed from
 * the port speed (8 full/low, 64 high, 512 super); GET_DESCRIPTOR(device, 8)
 * and, if bMaxPacketSize0 differs, Evaluate Context; the whole device and
 * configuration descriptors; SET_CONFIGURATION to the first configuration.
 *
 * A transfer that stalls leaves the endpoint halted in the controller:
 * Reset Endpoint, then Set TR Dequeue Pointer to the ring's enqueue
 * pointer (the TRBs not done are dropped).  A transfer that times out is
 * stopped (Stop Endpoint) and dropped the same way.
 */
#include <stddef.h>
#include <arch/io.h>
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/pmm.h"
#include "lib/format.h"
#include "xhci.h"

#define PORT_RESET_MS		500	/* USB 2 reset: 50 ms of signalling, then PRC */
#define PORT_LINK_MS		1000	/* USB 3 link training after the controller's reset */
#define PORT_SETTLE_MS		100	/* connect debounce (USB 2.0 7.1.7.3) */
#define CONTROL_TIMEOUT_MS	1000

struct usb_device usb_devices[USB_MAX_DEVICES];
unsigned usb_device_count;
static struct xhci_dev xdevs[USB_MAX_DEVICES];

static const char *const speed_names[] = { "?", "full", "low", "high", "super", "super+" };

static const char *speed_name(uint32_t s)
{
	return s < ARRAY_SIZE(speed_names) ? speed_names[s] : "?";
}

static uint32_t portsc(struct xhci *hc, uint32_t n)
{
	return mmio_read32(hc->op + XOP_PORTSC(n));
}

/* Write bits into PORTSC, keeping power and wake enables, touching nothing else. */
static void portsc_set(struct xhci *hc, uint32_t n, uint32_t bits)
{
	mmio_write32(hc->op + XOP_PORTSC(n), (portsc(hc, n) & PORTSC_KEEP) | bits);
}

static bool wait_port(struct xhci *hc, uint32_t n, uint32_t mask, uint32_t want, uint32_t ms)
{
	long long d = xhci_deadline(ms);

	while ((portsc(hc, n) & mask) != want)
		if (xhci_expired(d))
			return (portsc(hc, n) & mask) == want;
	return true;
}

/* Bring port n's device to the enabled state; false (and a line) if it does not come. */
static bool port_enable(struct xhci *hc, uint32_t n)
{
	bool usb3 = hc->port_major[n] == 3;

	if (usb3) {
		if (!wait_port(hc, n, PORTSC_PED, PORTSC_PED, PORT_LINK_MS)) {
			printk("usb: %s port %u: usb3 device connected but its link did not "
			       "come up in %u ms (state %u); not used\n", hc->name, n, PORT_LINK_MS,
			       PORTSC_PLS(portsc(hc, n)));
			return false;
		}
	} else {
		portsc_set(hc, n, PORTSC_PR);
		if (!wait_port(hc, n, PORTSC_PRC, PORTSC_PRC, PORT_RESET_MS) ||
		    !(portsc(hc, n) & PORTSC_PED)) {
			printk("usb: %s port %u: usb2 device connected but not enabled by a "
			       "port reset in %u ms; not used\n", hc->name, n, PORT_RESET_MS);
			return false;
		}
		usb_delay_ms(10);
	}
	portsc_set(hc, n, portsc(hc, n) & PORTSC_CHANGES);
	return true;
}

/* Fill EP0's context in the input context; mps its max packet size. */
static void ep0_ctx(struct xhci *hc, struct xhci_dev *x, uint32_t mps)
{
	uint32_t *ep = xhci_ctx(hc, x->in_ctx, 2);

	memset(ep, 0, hc->ctx_size);
	ep[1] = EP1_CERR3 | EP1_TYPE(EP_TYPE_CONTROL) | EP1_MPS(mps);
	ep[2] = (uint32_t)xhci_ring_deq_ptr(&x->ep0);
	ep[3] = (uint32_t)(xhci_ring_deq_ptr(&x->ep0) >> 32);
	ep[4] = 8;			/* average TRB length: a setup packet */
}

void xhci_ep_recover(struct usb_device *d, uint32_t dci, struct xhci_ring *r)
{
	struct xhci *hc = d->hc;
	struct xhci_dev *x = d->x;
	bool halted = EP_STATE(xhci_ctx(hc, x->out_ctx, dci)[0]) == EP_STATE_HALTED;

	xhci_command(hc, 0, TRB_TYPE(halted ? TRB_RESET_EP : TRB_STOP_EP) | TRB_SLOT(x->slot) |
		     TRB_EP(dci), halted ? "reset endpoint" : "stop endpoint", NULL);
	xhci_command(hc, xhci_ring_deq_ptr(r), TRB_TYPE(TRB_SET_TR_DEQ) | TRB_SLOT(x->slot) |
		     TRB_EP(dci), "set dequeue pointer", NULL);
}

/* A completion code as a USB_E* (after recovering the endpoint if it failed). */
static int finish(struct usb_device *d, uint32_t dci, struct xhci_ring *r, uint32_t cc)
{
	if (cc == CC_SUCCESS || cc == CC_SHORT)
		return USB_OK;
	xhci_ep_recover(d, dci, r);
	return cc == CC_STALL ? USB_ESTALL : USB_EIO;
}

int usb_control(struct usb_device *d, uint8_t type, uint8_t req, uint16_t value,
		uint16_t index, void *buf, uint16_t len, uint32_t *actual, uint32_t timeout_ms)
{
	struct xhci *hc = d->hc;
	struct xhci_dev *x = d->x;
	bool in = type & USB_DIR_IN;
	uint64_t setup, first, last;
	uint32_t residual = 0, cc;
	long long deadline = xhci_deadline(timeout_ms);
	struct xhci_trb ev;

	if (actual)
		*actual = 0;
	if (hc->dead)
		return USB_EDEAD;
	if (len > PAGE_SIZE)
		return USB_EINVAL;
	if (!in && len)
		memcpy(x->dma, buf, len);
	setup = type | (uint64_t)req << 8 | (uint64_t)value << 16 | (uint64_t)index << 32 |
		(uint64_t)len << 48;
	first = xhci_ring_put(&x->ep0, setup, 8, TRB_TYPE(TRB_SETUP) | TRB_IDT |
			      (len ? (in ? TRB_TRT_IN : TRB_TRT_OUT) : 0));
	if (len)
		xhci_ring_put(&x->ep0, (uint64_t)(uintptr_t)x->dma, len,
			      TRB_TYPE(TRB_DATA) | TRB_ISP | (in ? TRB_DIR_IN : 0));
	last = xhci_ring_put(&x->ep0, 0, 0, TRB_TYPE(TRB_STATUS) | TRB_IOC |
			     (len && in ? 0 : TRB_DIR_IN));
	xhci_doorbell(hc, x->slot, 1);
	/* A short data stage reports first (ISP), then the status stage. */
	for (;;) {
		if (!xhci_wait_transfer(hc, x->slot, 1, first, last, deadline, &ev)) {
			xhci_ep_recover(d, 1, &x->ep0);
			return USB_ETIMEOUT;
		}
		cc = TRB_CODE(ev.status);
		if (cc == CC_SHORT)
			residual = TRB_RESIDUAL(ev.status);
		else if (cc != CC_SUCCESS)
			return finish(d, 1, &x->ep0, cc);
		if (ev.param == last)
			break;
	}
	if (residual > len)
		residual = len;
	if (in && len)
		memcpy(buf, x->dma, len - residual);
	if (actual)
		*actual = len - residual;
	return USB_OK;
}

uint32_t xhci_ep_dci(uint8_t ep)
{
	return (ep & 0xF) * 2 + (ep & USB_DIR_IN ? 1 : 0);
}

int usb_bulk(struct usb_device *d, uint8_t ep, void *buf, uint32_t len, uint32_t *actual,
	     uint32_t timeout_ms)
{
	struct xhci *hc = d->hc;
	struct xhci_dev *x = d->x;
	uint32_t dci = xhci_ep_dci(ep);
	struct xhci_ring *r = dci == x->dci_in ? &x->bulk_in : &x->bulk_out;
	uint64_t phys = (uint64_t)(uintptr_t)buf, t;
	struct xhci_trb ev;
	uint32_t cc;

	*actual = 0;
	if (hc->dead)
		return USB_EDEAD;
	if (!dci || (dci != x->dci_in && dci != x->dci_out) || !len || len > 0x10000 ||
	    (phys >> 16) != ((phys + len - 1) >> 16))
		return USB_EINVAL;
	t = xhci_ring_put(r, phys, len, TRB_TYPE(TRB_NORMAL) | TRB_ISP | TRB_IOC);
	xhci_doorbell(hc, x->slot, dci);
	if (!xhci_wait_transfer(hc, x->slot, dci, t, t, xhci_deadline(timeout_ms), &ev)) {
		xhci_ep_recover(d, dci, r);
		return USB_ETIMEOUT;
	}
	cc = TRB_CODE(ev.status);
	if (cc == CC_SUCCESS || cc == CC_SHORT)
		*actual = len - (TRB_RESIDUAL(ev.status) > len ? len : TRB_RESIDUAL(ev.status));
	return finish(d, dci, r, cc);
}

int usb_clear_halt(struct usb_device *d, uint8_t ep)
{
	return usb_control(d, USB_RECIP_ENDPOINT, USB_REQ_CLEAR_FEATURE, USB_FEATURE_HALT, ep,
			   NULL, 0, NULL, CONTROL_TIMEOUT_MS);
}

/* Fill endpoint dci's input context for a bulk endpoint on ring r. */
static void bulk_ctx(struct xhci *hc, struct xhci_dev *x, uint32_t dci, struct xhci_ring *r,
		     uint32_t type, uint16_t mps, uint8_t burst)
{
	uint32_t *ep = xhci_ctx(hc, x->in_ctx, 1 + dci);

	memset(ep, 0, hc->ctx_size);
	ep[1] = EP1_CERR3 | EP1_TYPE(type) | EP1_BURST(burst) | EP1_MPS(mps);
	ep[2] = (uint32_t)xhci_ring_deq_ptr(r);
	ep[3] = (uint32_t)(xhci_ring_deq_ptr(r) >> 32);
	ep[4] = 3072;			/* average TRB length: large for bulk */
}

void xhci_config_begin(struct usb_device *d, uint32_t add, uint32_t max_dci)
{
	struct xhci *hc = d->hc;
	struct xhci_dev *x = d->x;
	uint32_t *slot = xhci_ctx(hc, x->in_ctx, 1), entries;

	memset(x->in_ctx, 0, PAGE_SIZE);
	xhci_ctx(hc, x->in_ctx, 0)[1] = 1u | add;	/* the slot, and the endpoints added */
	memcpy(slot, xhci_ctx(hc, x->out_ctx, 0), hc->ctx_size);
	entries = SLOT0_GET_ENTRIES(slot[0]);		/* endpoints configured before stay */
	slot[0] = (slot[0] & ~SLOT0_ENTRIES(0x1F)) |
		  SLOT0_ENTRIES(max_dci > entries ? max_dci : entries);
	slot[3] = 0;
}

int xhci_config_end(struct usb_device *d)
{
	struct xhci_dev *x = d->x;
	uint32_t cc;

	cc = xhci_command(d->hc, (uint64_t)(uintptr_t)x->in_ctx,
			  TRB_TYPE(TRB_CONFIGURE_EP) | TRB_SLOT(x->slot), "configure endpoint",
			  NULL);
	if (cc != CC_SUCCESS) {
		printk("usb: %s: configure endpoint failed (completion code %u)\n", d->name, cc);
		return USB_EIO;
	}
	return USB_OK;
}

int usb_bulk_setup(struct usb_device *d, uint8_t ep_in, uint16_t mps_in, uint8_t burst_in,
		   uint8_t ep_out, uint16_t mps_out, uint8_t burst_out)
{
	struct xhci *hc = d->hc;
	struct xhci_dev *x = d->x;
	uint32_t din = xhci_ep_dci(ep_in), dout = xhci_ep_dci(ep_out);
	int err;

	if (hc->dead)
		return USB_EDEAD;
	if (!(ep_in & USB_DIR_IN) || (ep_out & USB_DIR_IN) || !mps_in || !mps_out)
		return USB_EINVAL;
	if (!xhci_ring_init(hc, &x->bulk_in) || !xhci_ring_init(hc, &x->bulk_out))
		return USB_EINVAL;
	xhci_config_begin(d, 1u << din | 1u << dout, din > dout ? din : dout);
	bulk_ctx(hc, x, din, &x->bulk_in, EP_TYPE_BULK_IN, mps_in, burst_in);
	bulk_ctx(hc, x, dout, &x->bulk_out, EP_TYPE_BULK_OUT, mps_out, burst_out);
	if ((err = xhci_config_end(d)))
		return err;
	x->dci_in = (uint8_t)din;
	x->dci_out = (uint8_t)dout;
	return USB_OK;
}

/* Read the device and configuration descriptors and set the configuration. */
static bool describe(struct usb_device *d, uint32_t mps0)
{
	struct xhci *hc = d->hc;
	struct xhci_dev *x = d->x;
	uint8_t desc[18];
	uint32_t got, mps, total;
	int err;

	err = usb_control(d, USB_DIR_IN, USB_REQ_GET_DESCRIPTOR, USB_DT_DEVICE << 8, 0, desc, 8,
			  &got, CONTROL_TIMEOUT_MS);
	if (err || got < 8)
		goto fail;
	mps = d->speed >= SPEED_SUPER ? 1u << (desc[7] & 0xF) : desc[7];
	if (mps != mps0 && mps >= 8) {
		uint32_t *icc = xhci_ctx(hc, x->in_ctx, 0), cc;

		memset(x->in_ctx, 0, PAGE_SIZE);
		icc[1] = 1u << 1;
		ep0_ctx(hc, x, mps);
		cc = xhci_command(hc, (uint64_t)(uintptr_t)x->in_ctx, TRB_TYPE(TRB_EVALUATE_CTX) |
				  TRB_SLOT(x->slot), "evaluate context", NULL);
		if (cc != CC_SUCCESS) {
			printk("usb: %s: evaluate context failed (completion code %u)\n", d->name,
			       cc);
			return false;
		}
	}
	err = usb_control(d, USB_DIR_IN, USB_REQ_GET_DESCRIPTOR, USB_DT_DEVICE << 8, 0, desc,
			  sizeof(desc), &got, CONTROL_TIMEOUT_MS);
	if (err || got < sizeof(desc))
		goto fail;
	d->vendor = (uint16_t)(desc[8] | desc[9] << 8);
	d->product = (uint16_t)(desc[10] | desc[11] << 8);
	err = usb_control(d, USB_DIR_IN, USB_REQ_GET_DESCRIPTOR, USB_DT_CONFIG << 8, 0, d->config,
			  9, &got, CONTROL_TIMEOUT_MS);
	if (err || got < 9)
		goto fail;
	total = d->config[2] | d->config[3] << 8;
	if (total > USB_CONFIG_MAX)
		total = USB_CONFIG_MAX;
	err = usb_control(d, USB_DIR_IN, USB_REQ_GET_DESCRIPTOR, USB_DT_CONFIG << 8, 0, d->config,
			  (uint16_t)total, &got, CONTROL_TIMEOUT_MS);
	if (err || got < 9)
		goto fail;
	d->config_len = (uint16_t)got;
	err = usb_control(d, 0, USB_REQ_SET_CONFIG, d->config[5], 0, NULL, 0, NULL,
			  CONTROL_TIMEOUT_MS);
	if (err)
		goto fail;
	return true;
fail:
	printk("usb: %s: does not answer its descriptor requests (%s); not used\n", d->name,
	       usb_strerror(err ? err : USB_EIO));
	return false;
}

/* A device on port n: slot, address, descriptors. */
static void enumerate(struct xhci *hc, uint32_t n)
{
	struct usb_device *d;
	struct xhci_dev *x;
	uint32_t slot = 0, cc, mps0, *sc;

	if (usb_device_count == USB_MAX_DEVICES) {
		printk("usb: %s port %u: more than %u devices; not used\n", hc->name, n,
		       USB_MAX_DEVICES);
		return;
	}
	d = &usb_devices[usb_device_count];
	x = &xdevs[usb_device_count];
	memset(d, 0, sizeof(*d));
	memset(x, 0, sizeof(*x));
	d->hc = hc;
	d->x = x;
	ksnprintf(d->name, sizeof(d->name), "%s port %u", hc->name, n);
	d->speed = x->speed = PORTSC_SPEED(portsc(hc, n));
	x->port = n;
	cc = xhci_command(hc, 0, TRB_TYPE(TRB_ENABLE_SLOT), "enable slot", &slot);
	if (cc != CC_SUCCESS || !slot || slot > hc->max_slots) {
		printk("usb: %s: enable slot failed (completion code %u)\n", d->name, cc);
		return;
	}
	x->slot = slot;
	if (!(x->in_ctx = xhci_alloc(hc, 1)) || !(x->out_ctx = xhci_alloc(hc, 1)) ||
	    !(x->dma = xhci_alloc(hc, 1)) || !xhci_ring_init(hc, &x->ep0)) {
		printk("usb: %s: no memory for the device's structures\n", d->name);
		return;
	}
	hc->dcbaa[slot] = (uint64_t)(uintptr_t)x->out_ctx;
	mps0 = d->speed >= SPEED_SUPER ? 512 : d->speed == SPEED_HIGH ? 64 : 8;
	xhci_ctx(hc, x->in_ctx, 0)[1] = 1u << 0 | 1u << 1;	/* add the slot and EP0 */
	sc = xhci_ctx(hc, x->in_ctx, 1);
	sc[0] = SLOT0_SPEED(d->speed) | SLOT0_ENTRIES(1);
	sc[1] = SLOT1_PORT(n);
	ep0_ctx(hc, x, mps0);
	cc = xhci_command(hc, (uint64_t)(uintptr_t)x->in_ctx, TRB_TYPE(TRB_ADDRESS_DEVICE) |
			  TRB_SLOT(slot), "address device", NULL);
	if (cc != CC_SUCCESS) {
		printk("usb: %s: address device failed (completion code %u); not used\n", d->name,
		       cc);
		return;
	}
	if (!describe(d, mps0))
		return;
	usb_device_count++;
	printk("usb: device=\"%s\" id=%04x:%04x speed=%s slot=%u\n", d->name, d->vendor,
	       d->product, speed_name(d->speed), slot);
}

void xhci_ports(struct xhci *hc)
{
	uint32_t connected = 0;
	bool ppc = mmio_read32(hc->cap + XCAP_HCCPARAMS1) & HCC1_PPC;

	for (uint32_t n = 1; n <= hc->max_ports && n <= XHCI_MAX_PORTS; n++)
		if (ppc && !(portsc(hc, n) & PORTSC_PP))
			portsc_set(hc, n, PORTSC_PP);
	usb_delay_ms(PORT_SETTLE_MS);	/* power good, connect debounce, USB 3 link training */
	for (uint32_t n = 1; n <= hc->max_ports && n <= XHCI_MAX_PORTS; n++) {
		uint32_t v = portsc(hc, n);

		if (!(v & PORTSC_CCS))
			continue;
		connected++;
		printk("usb: %s port %u: connected usb%u speed=%s\n", hc->name, n,
		       hc->port_major[n] ? hc->port_major[n] : 2, speed_name(PORTSC_SPEED(v)));
		if (port_enable(hc, n))
			enumerate(hc, n);
		if (hc->dead)
			return;
	}
	if (!connected)
		printk("usb: %s: no device on its %u ports\n", hc->name, hc->max_ports);
}
