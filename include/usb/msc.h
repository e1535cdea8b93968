/*
 * USB mass storage (Bulk-Only Transport, SCSI) as block devices
 * (<block/blockdev.h>): drivers/usb/msc.c.
 */
#ifndef USB_MSC_H
#define USB_MSC_H

#include <stdint.h>
#include <block/blockdev.h>
#include <usb/usb.h>

enum { MSC_OK = 0, MSC_EFAILED = -1, MSC_EIO = -2 };

struct msc {
	struct usb_device *dev;	/* the USB device */
	struct blockdev bdev;	/* what drivers/block reads and writes through */
	uint8_t iface;		/* the BOT interface's number */
	uint8_t ep_in, ep_out;	/* bulk endpoint addresses */
	uint16_t mps_in, mps_out;	/* their max packet sizes */
	uint8_t burst_in, burst_out;	/* SuperSpeed bursts (companion descriptors) */
	uint32_t tag;		/* the last CBW's tag */
	uint32_t block_size;	/* READ CAPACITY's */
	uint64_t blocks;	/* READ CAPACITY's last LBA + 1 */
	uint32_t sense;		/* the last REQUEST SENSE: key << 16 | ASC << 8 | ASCQ */
	int last_err;		/* the last transport failure (USB_E*) */
	uint8_t *buf;		/* 64 KiB bounce buffer, 64 KiB-aligned (one TRB) */
	uint8_t *cbw, *csw;	/* in one page of their own */
	char vendor[9], model[17];	/* INQUIRY's, NUL-terminated */
};

/*
 * Bring up every BOT mass-storage device among usb_devices[] (INQUIRY,
 * TEST UNIT READY, READ CAPACITY; a line each), at most max: how many,
 * in out[].
 */
unsigned msc_probe(struct msc **out, unsigned max);

#endif
