/*
 * USB devices as class drivers see them: descriptors, control and bulk
 * transfers, each bounded by a timeout.  The host controller driver
 * (drivers/usb/xhci*.c) enumerates every device on its root ports; a class
 * driver (mass storage) looks through usb_devices[] for an interface it
 * serves.  Polled: no interrupt is ever taken, so it works at a panic.
 *
 * Buffers are identity-mapped kernel memory (the kernel's virtual address
 * is the physical one) that the controller reads or writes by DMA; a bulk
 * buffer must not cross a 64 KiB boundary (one TRB carries it).
 */
#ifndef USB_USB_H
#define USB_USB_H

#include <stdbool.h>
#include <stdint.h>

/* Standard requests and descriptors (USB 2.0 chapter 9). */
#define USB_DIR_IN		0x80
#define USB_TYPE_CLASS		0x20
#define USB_RECIP_INTERFACE	0x01
#define USB_RECIP_ENDPOINT	0x02
#define USB_REQ_CLEAR_FEATURE	0x01
#define USB_REQ_GET_DESCRIPTOR	0x06
#define USB_REQ_SET_CONFIG	0x09
#define USB_FEATURE_HALT	0
#define USB_DT_DEVICE		1
#define USB_DT_CONFIG		2
#define USB_DT_INTERFACE	4
#define USB_DT_ENDPOINT		5
#define USB_DT_SS_COMPANION	48
#define USB_EP_BULK		2

enum usb_err {
	USB_OK = 0,
	USB_ESTALL = -1,	/* the endpoint answered STALL (now halted) */
	USB_ETIMEOUT = -2,	/* no completion within the timeout */
	USB_EIO = -3,		/* any other completion code */
	USB_EINVAL = -4,	/* a request the driver cannot make */
	USB_EDEAD = -5,		/* the controller stopped answering earlier */
};

#define USB_MAX_DEVICES		8
#define USB_CONFIG_MAX		512	/* bytes of configuration descriptor kept */

struct xhci;
struct xhci_dev;

struct usb_device {
	struct xhci *hc;		/* its controller */
	struct xhci_dev *x;		/* the controller's per-device state */
	char name[24];			/* "xhci 00:0d.0 port 5": for lines */
	uint32_t speed;			/* 1 full, 2 low, 3 high, 4 super (PORTSC) */
	uint16_t vendor, product;	/* from the device descriptor */
	uint8_t config[USB_CONFIG_MAX];	/* configuration descriptor, as read */
	uint16_t config_len;		/* bytes of it kept */
};

extern struct usb_device usb_devices[USB_MAX_DEVICES];
extern unsigned usb_device_count;

/* Is there an xHCI controller at all (PCI only: nothing is touched, nothing printed)? */
bool usb_present(void);

/* Find every xHCI controller and enumerate its root ports (once; later calls return at once). */
void usb_init(void);

/*
 * A control transfer on endpoint 0: setup (type, req, value, index), then
 * len bytes in (type & USB_DIR_IN) or out of buf, within timeout_ms.
 * *actual: bytes moved (may be NULL).  USB_OK or a USB_E* code.
 */
int usb_control(struct usb_device *d, uint8_t type, uint8_t req, uint16_t value,
		uint16_t index, void *buf, uint16_t len, uint32_t *actual, uint32_t timeout_ms);

/*
 * Configure bulk endpoints ep_in and ep_out (addresses from their
 * descriptors, max packet sizes and SuperSpeed bursts) for usb_bulk().
 */
int usb_bulk_setup(struct usb_device *d, uint8_t ep_in, uint16_t mps_in, uint8_t burst_in,
		   uint8_t ep_out, uint16_t mps_out, uint8_t burst_out);

/*
 * A bulk transfer of len bytes (<= 64 KiB, not crossing a 64 KiB boundary)
 * on endpoint ep (its address: USB_DIR_IN set for IN).  *actual: bytes
 * moved.  On USB_ETIMEOUT the transfer was cancelled; on USB_ESTALL the
 * controller's side of the endpoint is reset and the device's still halted
 * (usb_clear_halt()).
 */
int usb_bulk(struct usb_device *d, uint8_t ep, void *buf, uint32_t len, uint32_t *actual,
	     uint32_t timeout_ms);

/*
 * Configure interrupt IN endpoint ep (max packet size, bInterval as in its
 * descriptor) for usb_intr_submit() and usb_intr_poll().  One such
 * endpoint a controller: the one whose events its poll keeps.
 */
int usb_intr_setup(struct usb_device *d, uint8_t ep, uint16_t mps, uint8_t interval);

/* Queue one transfer of len bytes into buf (DMA memory) on the interrupt endpoint. */
int usb_intr_submit(struct usb_device *d, void *buf, uint32_t len);

/*
 * Has the queued transfer completed?  Never waits: false while it is
 * outstanding; true when done, with *err USB_OK and *actual the bytes
 * moved, or a USB_E* code (the controller's side of the endpoint is then
 * reset; a new transfer may be queued).
 */
bool usb_intr_poll(struct usb_device *d, uint32_t *actual, int *err);

/* CLEAR_FEATURE(ENDPOINT_HALT) on ep, and the controller's side reset too. */
int usb_clear_halt(struct usb_device *d, uint8_t ep);

/* A short name of an error, for lines. */
const char *usb_strerror(int err);

/* Spin for ms milliseconds (the TSC's clock). */
void usb_delay_ms(uint32_t ms);

#endif
