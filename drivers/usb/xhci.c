/*
 * xHCI host controllers (PCI class 0C/03, interface 30), polled.
 *
 * Bring-up of each controller, every wait bounded and said when it expires:
 *   1. memory decode and bus mastering on; BAR0 mapped uncached;
 *   2. taken from the firmware (USB Legacy Support capability): set the OS
 *      owned semaphore, wait for BIOS owned to clear, then clear the SMI
 *      enables whatever the firmware did (a firmware that hangs on to it
 *      is named and left; the controller is used anyway);
 *   3. halted (R/S = 0, wait HCHalted), reset (HCRST, wait it and CNR clear);
 *   4. DCBAA (entry 0: the scratchpad array when the controller asks for
 *      buffers), command ring, one-segment event ring, interrupter 0 with
 *      interrupts off, then run;
 *   5. root ports (xhci_dev.c).
 *
 * Memory: page allocator pages, identity-mapped, so a pointer is its DMA
 * address; below 4 GiB unless the controller has 64-bit addressing (AC64).
 *
 * Events are polled: the consumer compares each event TRB's cycle bit with
 * its cycle state, advances, and writes ERDP back (clearing EHB) after each,
 * so the controller never sees a full ring.
 */
#include <stddef.h>
#include <arch/cpu.h>
#include <arch/io.h>
#include <arch/paging.h>
#include <arch/pci.h>
#include <arch/tsc.h>
#include <arch/watchdog.h>
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/pmm.h"
#include "lib/format.h"
#include "xhci.h"

#define XHCI_HANDOFF_MS		1000	/* firmware releasing the controller */
#define XHCI_HALT_MS		100	/* spec: 16 ms after R/S = 0 */
#define XHCI_RESET_MS		1000

static struct xhci controllers[XHCI_MAX_CONTROLLERS];
static unsigned nr_controllers;

long long xhci_deadline(uint32_t ms)
{
	return tsc_now_ns() + (long long)ms * 1000000;
}

bool xhci_expired(long long deadline_ns)
{
	watchdog_touch();	/* a bounded wait is progress */
	return tsc_now_ns() > deadline_ns;
}

void usb_delay_ms(uint32_t ms)
{
	long long d = xhci_deadline(ms);

	while (!xhci_expired(d))
		cpu_relax();
}

static uint32_t rd32(uintptr_t base, uint32_t off)
{
	return mmio_read32(base + off);
}

static void wr32(uintptr_t base, uint32_t off, uint32_t v)
{
	mmio_write32(base + off, v);
}

/* 64-bit registers as two dwords, low first (controllers without 64-bit access). */
static void wr64(uintptr_t base, uint32_t off, uint64_t v)
{
	mmio_write32(base + off, (uint32_t)v);
	mmio_write32(base + off + 4, (uint32_t)(v >> 32));
}

/* Wait until (reg & mask) == want, up to ms; false on timeout. */
static bool wait_reg(uintptr_t base, uint32_t off, uint32_t mask, uint32_t want, uint32_t ms)
{
	long long d = xhci_deadline(ms);

	for (;;) {
		if ((rd32(base, off) & mask) == want)
			return true;
		if (xhci_expired(d))
			return (rd32(base, off) & mask) == want;
		cpu_relax();
	}
}

void *xhci_alloc(struct xhci *hc, uint32_t pages)
{
	uint64_t phys = pmm_alloc_nowait(pages, 1);

	if (!phys)
		return NULL;
	if (!hc->ac64 && phys + (uint64_t)pages * PAGE_SIZE > (1ull << 32)) {
		pmm_free(phys, pages);
		return NULL;
	}
	memset((void *)(uintptr_t)phys, 0, pages * PAGE_SIZE);
	return (void *)(uintptr_t)phys;
}

bool xhci_ring_init(struct xhci *hc, struct xhci_ring *r)
{
	struct xhci_trb *link;

	if (!r->trbs && !(r->trbs = xhci_alloc(hc, 1)))
		return false;
	memset(r->trbs, 0, PAGE_SIZE);
	link = &r->trbs[XHCI_RING_TRBS - 1];
	link->param = (uint64_t)(uintptr_t)r->trbs;
	link->control = TRB_TYPE(TRB_LINK) | TRB_TC;
	r->enq = 0;
	r->cycle = 1;
	return true;
}

uint64_t xhci_ring_put(struct xhci_ring *r, uint64_t param, uint32_t status, uint32_t control)
{
	struct xhci_trb *t = &r->trbs[r->enq];

	t->param = param;
	t->status = status;
	/* The cycle bit hands the TRB over: written last (x86 keeps stores in
	 * order; the barrier keeps the compiler from reordering them). */
	barrier();
	t->control = (control & ~TRB_CYCLE) | r->cycle;
	if (++r->enq == XHCI_RING_TRBS - 1) {
		struct xhci_trb *link = &r->trbs[XHCI_RING_TRBS - 1];

		barrier();
		link->control = (link->control & ~TRB_CYCLE) | r->cycle;
		r->enq = 0;
		r->cycle ^= 1;
	}
	return (uint64_t)(uintptr_t)t;
}

uint64_t xhci_ring_deq_ptr(const struct xhci_ring *r)
{
	return (uint64_t)(uintptr_t)&r->trbs[r->enq] | r->cycle;
}

void xhci_doorbell(struct xhci *hc, uint32_t slot, uint32_t target)
{
	barrier();
	wr32(hc->db, 4 * slot, target);
}

/* The next event, if the controller has written one: consumed into *ev. */
static bool next_event(struct xhci *hc, struct xhci_trb *ev)
{
	struct xhci_trb *t = &hc->evt[hc->evt_deq];
	uint32_t control = READ_ONCE(t->control);

	if ((control & TRB_CYCLE) != hc->evt_cycle)
		return false;
	barrier();
	ev->param = t->param;
	ev->status = t->status;
	ev->control = control;
	if (++hc->evt_deq == XHCI_RING_TRBS) {
		hc->evt_deq = 0;
		hc->evt_cycle ^= 1;
	}
	wr64(hc->rt, XRT_ERDP, (uint64_t)(uintptr_t)&hc->evt[hc->evt_deq] | ERDP_EHB);
	return true;
}

/* Keep ev if it is the polled interrupt endpoint's (its owner reads it later). */
static void keep_intr(struct xhci *hc, const struct xhci_trb *ev)
{
	struct xhci_dev *x = hc->intr;

	if (x && TRB_GET_TYPE(ev->control) == TRB_EV_TRANSFER &&
	    TRB_GET_SLOT(ev->control) == x->slot && TRB_GET_EP(ev->control) == x->dci_intr) {
		x->intr_ev = *ev;
		WRITE_ONCE(x->intr_done, true);
	}
}

static bool matches(const struct xhci_trb *ev, uint32_t type, uint32_t slot, uint32_t dci,
		    uint64_t first, uint64_t last)
{
	if (TRB_GET_TYPE(ev->control) != type || ev->param < first || ev->param > last)
		return false;
	return !slot || (TRB_GET_SLOT(ev->control) == slot && TRB_GET_EP(ev->control) == dci);
}

/* Wait for the event of type on a TRB in [first, last] (slot/dci if nonzero). */
static bool wait_event(struct xhci *hc, uint32_t type, uint32_t slot, uint32_t dci,
		       uint64_t first, uint64_t last, long long deadline, struct xhci_trb *ev)
{
	bool found = false;

	while (!spin_trylock(&hc->evt_lock)) {	/* the keyboard's poll: a few events long */
		if (xhci_expired(deadline))
			return false;
		cpu_relax();
	}
	while (!found) {
		while (!found && next_event(hc, ev)) {
			found = matches(ev, type, slot, dci, first, last);
			if (!found)
				keep_intr(hc, ev);
		}
		if (found || xhci_expired(deadline))
			break;
		cpu_relax();
	}
	spin_unlock(&hc->evt_lock);
	return found;
}

void xhci_poll_events(struct xhci *hc)
{
	struct xhci_trb ev;

	if (!spin_trylock(&hc->evt_lock))
		return;		/* a waiter is consuming: it keeps our event for us */
	for (int i = 0; i < XHCI_RING_TRBS && next_event(hc, &ev); i++)
		keep_intr(hc, &ev);
	spin_unlock(&hc->evt_lock);
}

bool xhci_wait_transfer(struct xhci *hc, uint32_t slot, uint32_t dci, uint64_t first,
			uint64_t last, long long deadline_ns, struct xhci_trb *ev)
{
	return wait_event(hc, TRB_EV_TRANSFER, slot, dci, first, last, deadline_ns, ev);
}

int xhci_command(struct xhci *hc, uint64_t param, uint32_t control, const char *what,
		 uint32_t *slot)
{
	struct xhci_trb ev;
	uint64_t trb;

	if (hc->dead)
		return 0;
	trb = xhci_ring_put(&hc->cmd, param, 0, control);
	xhci_doorbell(hc, 0, 0);
	if (!wait_event(hc, TRB_EV_COMMAND, 0, 0, trb, trb, xhci_deadline(XHCI_CMD_TIMEOUT_MS),
			&ev)) {
		printk("usb: %s: command %s did not complete in %u ms; controller given up\n",
		       hc->name, what, XHCI_CMD_TIMEOUT_MS);
		hc->dead = true;
		return 0;
	}
	if (slot)
		*slot = TRB_GET_SLOT(ev.control);
	return (int)TRB_CODE(ev.status);
}

/* Step 2: the USB Legacy Support capability, if the controller has one. */
static void take_from_firmware(struct xhci *hc, uint32_t xecp)
{
	uintptr_t p = hc->cap + xecp * 4;

	for (unsigned n = 0; xecp && n < 256; n++) {
		uint32_t v = mmio_read32(p);

		if (XECP_ID(v) == XECP_LEGACY) {
			mmio_write32(p, v | LEGSUP_OS_OWNED);
			if (!wait_reg(p, 0, LEGSUP_BIOS_OWNED, 0, XHCI_HANDOFF_MS))
				printk("usb: %s: the firmware did not release the controller "
				       "in %u ms; taking it anyway\n", hc->name, XHCI_HANDOFF_MS);
			v = mmio_read32(p + 4);
			mmio_write32(p + 4, (v & ~LEGCTL_SMI_ENABLES) | LEGCTL_SMI_EVENTS);
		} else if (XECP_ID(v) == XECP_PROTOCOL) {
			uint32_t ports = mmio_read32(p + 8);
			uint32_t first = PROTO_PORT_FIRST(ports), count = PROTO_PORT_COUNT(ports);

			for (uint32_t i = first; i < first + count && i <= XHCI_MAX_PORTS; i++)
				if (i)
					hc->port_major[i] = (uint8_t)PROTO_MAJOR(v);
		}
		if (!XECP_NEXT(v))
			break;
		p += XECP_NEXT(v) * 4;
	}
}

/* Step 3. */
static bool halt_and_reset(struct xhci *hc)
{
	wr32(hc->op, XOP_USBCMD, rd32(hc->op, XOP_USBCMD) & ~CMD_RUN);
	if (!wait_reg(hc->op, XOP_USBSTS, STS_HCH, STS_HCH, XHCI_HALT_MS)) {
		printk("usb: %s: did not halt in %u ms; not used\n", hc->name, XHCI_HALT_MS);
		return false;
	}
	wr32(hc->op, XOP_USBCMD, CMD_HCRST);
	if (!wait_reg(hc->op, XOP_USBCMD, CMD_HCRST, 0, XHCI_RESET_MS) ||
	    !wait_reg(hc->op, XOP_USBSTS, STS_CNR, 0, XHCI_RESET_MS)) {
		printk("usb: %s: did not come out of reset in %u ms; not used\n", hc->name,
		       XHCI_RESET_MS);
		return false;
	}
	return true;
}

/* Step 4. */
static bool setup_and_run(struct xhci *hc)
{
	uint32_t sp = HCS2_SCRATCH(rd32(hc->cap, XCAP_HCSPARAMS2));
	uint64_t *erst;

	if (!(rd32(hc->op, XOP_PAGESIZE) & 1)) {
		printk("usb: %s: does not take 4 KiB pages; not used\n", hc->name);
		return false;
	}
	if (!(hc->dcbaa = xhci_alloc(hc, 1)))
		goto nomem;
	if (sp) {
		uint64_t *arr = xhci_alloc(hc, 1);

		if (!arr || sp > PAGE_SIZE / 8)
			goto nomem;
		for (uint32_t i = 0; i < sp; i++) {
			void *b = xhci_alloc(hc, 1);
			if (!b)
				goto nomem;
			arr[i] = (uint64_t)(uintptr_t)b;
		}
		hc->dcbaa[0] = (uint64_t)(uintptr_t)arr;
	}
	if (!xhci_ring_init(hc, &hc->cmd) || !(hc->evt = xhci_alloc(hc, 1)) ||
	    !(erst = xhci_alloc(hc, 1)))
		goto nomem;
	hc->evt_deq = 0;
	hc->evt_cycle = 1;
	erst[0] = (uint64_t)(uintptr_t)hc->evt;
	erst[1] = XHCI_RING_TRBS;		/* segment size in TRBs */

	wr32(hc->op, XOP_CONFIG, hc->max_slots);
	wr64(hc->op, XOP_DCBAAP, (uint64_t)(uintptr_t)hc->dcbaa);
	wr64(hc->op, XOP_CRCR, (uint64_t)(uintptr_t)hc->cmd.trbs | CRCR_RCS);
	wr32(hc->rt, XRT_IMAN, 0);		/* polled: interrupter 0 disabled */
	wr32(hc->rt, XRT_ERSTSZ, 1);
	wr64(hc->rt, XRT_ERDP, (uint64_t)(uintptr_t)hc->evt);
	wr64(hc->rt, XRT_ERSTBA, (uint64_t)(uintptr_t)erst);	/* last (section 4.9.4) */
	wr32(hc->op, XOP_USBCMD, CMD_RUN);
	if (!wait_reg(hc->op, XOP_USBSTS, STS_HCH, 0, XHCI_HALT_MS)) {
		printk("usb: %s: did not start in %u ms (status 0x%x); not used\n", hc->name,
		       XHCI_HALT_MS, rd32(hc->op, XOP_USBSTS));
		return false;
	}
	return true;
nomem:
	printk("usb: %s: no memory for its structures; not used\n", hc->name);
	return false;
}

static bool xhci_probe(const struct pci_dev *d, void *arg)
{
	struct xhci *hc;
	struct pci_bar bar;
	uint64_t size;
	uint32_t hcs1, hcc1, version;

	(void)arg;
	if (d->prog_if != XHCI_PCI_PROGIF)
		return true;
	if (nr_controllers == XHCI_MAX_CONTROLLERS) {
		printk("usb: more than %u xHCI controllers; the rest are not used\n",
		       XHCI_MAX_CONTROLLERS);
		return false;
	}
	hc = &controllers[nr_controllers];
	memset(hc, 0, sizeof(*hc));
	hc->pci = *d;
	ksnprintf(hc->name, sizeof(hc->name), "xhci %02x:%02x.%u", d->bus, d->dev, d->fn);
	bar = pci_bar(d, 0);
	size = pci_bar_size(d, 0);
	if (bar.io || !bar.base || size < 0x1000) {
		printk("usb: %s: BAR0 is not an assigned memory BAR; not used\n", hc->name);
		return true;
	}
	if (!paging_map_mmio(bar.base, bar.base + size)) {
		printk("usb: %s: BAR0 0x%llx cannot be mapped; not used\n", hc->name,
		       (unsigned long long)bar.base);
		return true;
	}
	pci_enable(d, PCI_CMD_MEMORY | PCI_CMD_MASTER);
	hc->cap = (uintptr_t)bar.base;
	hc->op = hc->cap + (rd32(hc->cap, XCAP_CAPLENGTH) & 0xFF);
	hc->rt = hc->cap + (rd32(hc->cap, XCAP_RTSOFF) & ~0x1Fu);
	hc->db = hc->cap + (rd32(hc->cap, XCAP_DBOFF) & ~0x3u);
	hcs1 = rd32(hc->cap, XCAP_HCSPARAMS1);
	hcc1 = rd32(hc->cap, XCAP_HCCPARAMS1);
	hc->max_slots = HCS1_MAX_SLOTS(hcs1);
	hc->max_ports = HCS1_MAX_PORTS(hcs1);
	hc->ctx_size = hcc1 & HCC1_CSZ ? 64 : 32;
	hc->ac64 = hcc1 & HCC1_AC64;
	version = rd32(hc->cap, XCAP_CAPLENGTH) >> 16;	/* dword reads: some take no narrower */
	printk("usb: found=%s id=%04x:%04x version=%x.%02x ports=%u slots=%u context=%u\n",
	       hc->name, d->vendor, d->device, version >> 8, version & 0xFF, hc->max_ports,
	       hc->max_slots, hc->ctx_size);
	take_from_firmware(hc, HCC1_XECP(hcc1));
	if (!halt_and_reset(hc) || !setup_and_run(hc))
		return true;
	nr_controllers++;
	return true;
}

static bool is_xhci(const struct pci_dev *d, void *arg)
{
	if (d->prog_if == XHCI_PCI_PROGIF)
		*(bool *)arg = true;
	return !*(bool *)arg;
}

bool usb_present(void)
{
	bool found = false;

	pci_find_class(XHCI_PCI_CLASS, XHCI_PCI_SUBCLASS, is_xhci, &found);
	return found;
}

struct xhci *xhci_start_all(unsigned *n)
{
	pci_find_class(XHCI_PCI_CLASS, XHCI_PCI_SUBCLASS, xhci_probe, NULL);
	*n = nr_controllers;
	return controllers;
}

const char *usb_strerror(int err)
{
	switch (err) {
	case USB_OK: return "ok";
	case USB_ESTALL: return "stall";
	case USB_ETIMEOUT: return "timeout";
	case USB_EIO: return "transfer error";
	case USB_EINVAL: return "invalid request";
	case USB_EDEAD: return "controller given up";
	}
	return "unknown error";
}
