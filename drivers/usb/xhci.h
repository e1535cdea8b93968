/*
 * The xHCI driver's own state, shared by its files: xhci.c (the
 * controller: taking it from the firmware, reset, rings, commands, events)
 * and xhci_dev.c (root ports, enumeration, transfers).  Private to
 * drivers/usb/.
 */
#ifndef DRIVERS_USB_XHCI_H
#define DRIVERS_USB_XHCI_H

#include <stdbool.h>
#include <stdint.h>
#include <arch/pci.h>
#include <usb/usb.h>
#include "kernel/spinlock.h"
#include "xhci_regs.h"

#define XHCI_MAX_CONTROLLERS	4
#define XHCI_RING_TRBS		256	/* one page; the last is a link to the first */
#define XHCI_MAX_PORTS		255
#define XHCI_CMD_TIMEOUT_MS	500	/* a command the controller does not complete */

/*
 * A producer ring (command or transfer): the driver writes TRBs at enq
 * and flips their cycle bit last; the controller consumes those whose
 * cycle bit equals its consumer cycle state.  The link TRB at the end
 * toggles that state (TRB_TC), so the driver toggles cycle when it passes it.
 */
struct xhci_ring {
	struct xhci_trb *trbs;	/* XHCI_RING_TRBS, page-aligned, identity-mapped */
	uint32_t enq;		/* next TRB to fill */
	uint32_t cycle;		/* producer cycle state: 0 or 1 */
};

struct xhci {
	struct pci_dev pci;	/* where it is */
	char name[16];		/* "xhci 00:0d.0" */
	uintptr_t cap, op, rt, db;	/* register blocks */
	uint32_t max_slots;	/* slots enabled */
	uint32_t max_ports;	/* root hub ports */
	uint32_t ctx_size;	/* 32 or 64 bytes a context */
	bool ac64;		/* may DMA above 4 GiB */
	bool dead;		/* a command timed out: nothing more is asked of it */
	uint64_t *dcbaa;	/* device context base addresses, slot-indexed */
	struct xhci_ring cmd;	/* command ring */
	struct xhci_trb *evt;	/* event ring: one segment of XHCI_RING_TRBS */
	uint32_t evt_deq;	/* next event to look at */
	uint32_t evt_cycle;	/* consumer cycle state */
	/* One consumer of the event ring at a time: a transfer's or command's
	 * waiter (bounded by its deadline) or the keyboard's poll (trylock). */
	struct spinlock evt_lock;
	struct xhci_dev *intr;	/* the device whose interrupt IN endpoint is polled, or NULL */
	uint8_t port_major[XHCI_MAX_PORTS + 1];	/* 2 or 3 (Supported Protocol), 0 unknown */
};

/* Per device: its slot, contexts and the rings of the endpoints used. */
struct xhci_dev {
	uint32_t slot;		/* slot id, 1.. */
	uint32_t port;		/* root port, 1-based */
	uint32_t speed;		/* PORTSC speed */
	uint8_t *in_ctx;	/* input context: control, slot, 31 endpoints */
	uint8_t *out_ctx;	/* device context the controller writes */
	struct xhci_ring ep0;	/* DCI 1 */
	struct xhci_ring bulk_in, bulk_out;	/* when configured */
	uint8_t dci_in, dci_out;	/* their device context indexes; 0 = none */
	uint8_t *dma;		/* one page for control transfers' data */
	struct xhci_ring intr;	/* interrupt IN, when configured */
	uint8_t dci_intr;	/* its device context index; 0 = none */
	uint32_t intr_len;	/* bytes the queued transfer asked for */
	bool intr_done;		/* its transfer's event has come (intr_ev) */
	struct xhci_trb intr_ev;	/* that event */
};

/* Context i of an input (i = 0: control, 1: slot, 1 + dci) or device context (slot, dci). */
static inline uint32_t *xhci_ctx(struct xhci *hc, uint8_t *base, uint32_t i)
{
	return (uint32_t *)(base + i * hc->ctx_size);
}

/* xhci.c */
void *xhci_alloc(struct xhci *hc, uint32_t pages);
bool xhci_ring_init(struct xhci *hc, struct xhci_ring *r);
/* Queue one TRB (cycle bit set last); its address. */
uint64_t xhci_ring_put(struct xhci_ring *r, uint64_t param, uint32_t status, uint32_t control);
/* The ring's enqueue pointer with its cycle state (Set TR Dequeue Pointer). */
uint64_t xhci_ring_deq_ptr(const struct xhci_ring *r);
void xhci_doorbell(struct xhci *hc, uint32_t slot, uint32_t target);
/* Run a command TRB; its completion code (or 0: timed out, hc->dead set); *slot. */
int xhci_command(struct xhci *hc, uint64_t param, uint32_t control, const char *what,
		 uint32_t *slot);
/*
 * Wait for a transfer event of (slot, dci) on a TRB in [first, last]
 * until deadline_ns: true and *ev; false on timeout.  Other events are
 * consumed and dropped (port changes: the ports are read directly).
 */
bool xhci_wait_transfer(struct xhci *hc, uint32_t slot, uint32_t dci, uint64_t first,
			uint64_t last, long long deadline_ns, struct xhci_trb *ev);
/* Consume the events that have come, keeping the interrupt endpoint's; no wait. */
void xhci_poll_events(struct xhci *hc);
long long xhci_deadline(uint32_t ms);
bool xhci_expired(long long deadline_ns);

/*
 * Take every xHCI controller from the firmware, reset and run it (one
 * line each; a controller that fails is named and left): the n usable
 * ones, their ports not looked at yet.
 */
struct xhci *xhci_start_all(unsigned *n);

/* xhci_dev.c */
void xhci_ports(struct xhci *hc);
/* The controller's side of endpoint dci after a stall, error or timeout. */
void xhci_ep_recover(struct usb_device *d, uint32_t dci, struct xhci_ring *r);
uint32_t xhci_ep_dci(uint8_t ep);
/*
 * Configure Endpoint in two halves: the input context prepared (the slot's
 * context copied, the endpoints of mask add added, entries up to max_dci),
 * the caller fills the added endpoints' contexts, then the command runs.
 */
void xhci_config_begin(struct usb_device *d, uint32_t add, uint32_t max_dci);
int xhci_config_end(struct usb_device *d);

#endif
