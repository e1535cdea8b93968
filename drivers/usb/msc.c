/*
 * USB mass storage, Bulk-Only Transport (USB Mass Storage Class Bulk-Only
 * Transport 1.0), SCSI commands (SPC/SBC), LUN 0, polled.
 *
 * One command:
 *   CBW (31 bytes, OUT) -> data (IN or OUT, <= 64 KiB) -> CSW (13 bytes, IN)
 * A stalled data stage: clear the halt, then read the CSW.  A stalled CSW:
 * clear the halt and read it once more.  A CSW that is not valid or
 * meaningful (signature, tag, phase error), or a transfer that times out:
 * reset recovery (BOT 5.3.4): Bulk-Only Mass Storage Reset, then
 * CLEAR_FEATURE(HALT) on bulk IN and bulk OUT.  A CSW status of 1: REQUEST
 * SENSE says why.
 *
 * Bring-up: INQUIRY; TEST UNIT READY until ready (a stick answers "not
 * ready" while it spins up its controller: up to MSC_READY_MS); READ
 * CAPACITY(10), and (16) when (10) says 0xFFFFFFFF.  Blocks of 512..4096
 * bytes.  READ(10)/WRITE(10) reach the first 2^32 blocks, which holds the
 * trace file on any stick up to 2 TiB at 512 bytes a block.
 *
 * Writes: msc_write() is the blockdev's write function, reached only
 * through tracefile_write(); it checks tracefile_write_ok() itself once
 * more, on the file of this very device, before a WRITE(10) is built.
 */
#include <stddef.h>
#include <block/part.h>
#include <block/tracefile.h>
#include <usb/msc.h>
#include <usb/usb.h>
#include "kernel/console.h"
#include "kernel/kstring.h"
#include "kernel/pmm.h"

#define MSC_CLASS		0x08
#define MSC_SUBCLASS_SCSI	0x06
#define MSC_PROTO_BOT		0x50
#define BOT_RESET		0xFF	/* class request: Bulk-Only Mass Storage Reset */
#define CBW_SIG			0x43425355u	/* "USBC" */
#define CSW_SIG			0x53425355u	/* "USBS" */
#define CBW_LEN			31
#define CSW_LEN			13
#define MSC_CMD_TIMEOUT_MS	5000	/* one command's every stage */
#define MSC_READY_MS		10000	/* TEST UNIT READY until ready */
#define MSC_XFER_MAX		0x10000	/* bytes a command moves: one bounce buffer */

#define SCSI_TEST_UNIT_READY	0x00
#define SCSI_REQUEST_SENSE	0x03
#define SCSI_INQUIRY		0x12
#define SCSI_READ_CAPACITY10	0x25
#define SCSI_READ10		0x28
#define SCSI_WRITE10		0x2A
#define SCSI_SERVICE_IN16	0x9E
#define SA_READ_CAPACITY16	0x10

static struct msc msc_devs[USB_MAX_DEVICES];

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* BOT 5.3.4: the device's state is unknown; start it over. */
static void reset_recovery(struct msc *m)
{
	usb_control(m->dev, USB_TYPE_CLASS | USB_RECIP_INTERFACE, BOT_RESET, 0, m->iface, NULL, 0,
		    NULL, MSC_CMD_TIMEOUT_MS);
	usb_clear_halt(m->dev, m->ep_in);
	usb_clear_halt(m->dev, m->ep_out);
}

/* Read the CSW; a stalled one is retried once after clearing the halt. */
static int read_csw(struct msc *m, uint32_t *got)
{
	int err = usb_bulk(m->dev, m->ep_in, m->csw, CSW_LEN, got, MSC_CMD_TIMEOUT_MS);

	if (err == USB_ESTALL) {
		usb_clear_halt(m->dev, m->ep_in);
		err = usb_bulk(m->dev, m->ep_in, m->csw, CSW_LEN, got, MSC_CMD_TIMEOUT_MS);
	}
	return err;
}

/*
 * One command: cdb of cdb_len, len bytes of data in (in) or out of m->buf.
 * MSC_OK, MSC_EFAILED (CSW status 1: sense it), MSC_EIO (transport; the
 * device was reset).  *moved: data bytes the device took or gave.
 */
static int bot_command(struct msc *m, const uint8_t *cdb, uint8_t cdb_len, bool in,
		       uint32_t len, uint32_t *moved)
{
	uint8_t *cbw = m->cbw;
	uint32_t got = 0, tag = ++m->tag, residue;
	int err;

	*moved = 0;
	memset(cbw, 0, CBW_LEN);
	put_le32(cbw, CBW_SIG);
	put_le32(cbw + 4, tag);
	put_le32(cbw + 8, len);
	cbw[12] = in ? USB_DIR_IN : 0;
	cbw[13] = 0;			/* LUN */
	cbw[14] = cdb_len;
	memcpy(cbw + 15, cdb, cdb_len);
	err = usb_bulk(m->dev, m->ep_out, cbw, CBW_LEN, &got, MSC_CMD_TIMEOUT_MS);
	if (err || got != CBW_LEN)
		goto transport;
	if (len) {
		err = usb_bulk(m->dev, in ? m->ep_in : m->ep_out, m->buf, len, moved,
			       MSC_CMD_TIMEOUT_MS);
		if (err == USB_ESTALL)
			usb_clear_halt(m->dev, in ? m->ep_in : m->ep_out);
		else if (err)
			goto transport;
	}
	err = read_csw(m, &got);
	if (err || got != CSW_LEN || get_le32(m->csw) != CSW_SIG || get_le32(m->csw + 4) != tag ||
	    m->csw[12] > 1)
		goto transport;
	residue = get_le32(m->csw + 8);
	if (residue <= len && len - residue < *moved)
		*moved = len - residue;
	return m->csw[12] ? MSC_EFAILED : MSC_OK;
transport:
	m->last_err = err ? err : USB_EIO;
	reset_recovery(m);
	return MSC_EIO;
}

/* REQUEST SENSE: key, ASC and ASCQ into m->sense (0 if it fails). */
static void request_sense(struct msc *m)
{
	uint8_t cdb[6] = { SCSI_REQUEST_SENSE, 0, 0, 0, 18, 0 };
	uint32_t got;

	m->sense = 0;
	memset(m->buf, 0, 18);
	if (bot_command(m, cdb, 6, true, 18, &got) == MSC_OK && got >= 14)
		m->sense = (uint32_t)(m->buf[2] & 0xF) << 16 | (uint32_t)m->buf[12] << 8 |
			   m->buf[13];
}

/* A command, and its sense if it failed. */
static int scsi(struct msc *m, const uint8_t *cdb, uint8_t cdb_len, bool in, uint32_t len,
		uint32_t *moved)
{
	int err = bot_command(m, cdb, cdb_len, in, len, moved);

	if (err == MSC_EFAILED)
		request_sense(m);
	return err;
}

static int rw10(struct msc *m, uint8_t op, uint64_t lba, uint32_t count)
{
	uint8_t cdb[10] = { op };
	uint32_t bytes = count * m->block_size, moved;
	int err;

	if (lba + count > (1ull << 32) || bytes > MSC_XFER_MAX)
		return MSC_EIO;
	put_be32(cdb + 2, (uint32_t)lba);
	cdb[7] = (uint8_t)(count >> 8);
	cdb[8] = (uint8_t)count;
	err = scsi(m, cdb, 10, op == SCSI_READ10, bytes, &moved);
	if (!err && moved != bytes)
		err = MSC_EIO;
	if (err)
		printk("usb: %s: %s lba=%llu count=%u failed: %s sense=%06x\n", m->dev->name,
		       op == SCSI_READ10 ? "read" : "write", (unsigned long long)lba, count,
		       err == MSC_EFAILED ? "command failed" : usb_strerror(m->last_err), m->sense);
	return err;
}

static int msc_read(void *ctx, uint64_t lba, uint32_t count, void *buf)
{
	struct msc *m = ctx;
	uint32_t per = MSC_XFER_MAX / m->block_size;

	if (lba >= m->blocks || count > m->blocks - lba)
		return MSC_EIO;
	while (count) {
		uint32_t n = count < per ? count : per;
		if (rw10(m, SCSI_READ10, lba, n))
			return MSC_EIO;
		memcpy(buf, m->buf, (size_t)n * m->block_size);
		buf = (uint8_t *)buf + (size_t)n * m->block_size;
		lba += n;
		count -= n;
	}
	return MSC_OK;
}

static int msc_write(void *ctx, const struct tracefile *tf, uint64_t lba, uint32_t count,
		     const void *buf)
{
	struct msc *m = ctx;
	uint32_t per = MSC_XFER_MAX / m->block_size;

	/* The second check, on this device's own file (the first was tracefile_write()'s). */
	if (!tf || tf->dev != &m->bdev || !tracefile_write_ok(tf, lba, count)) {
		printk("usb: BUG: %s: a write of %u blocks at %llu outside TRACE.BIN's data area "
		       "was refused\n", m->dev->name, count, (unsigned long long)lba);
		return MSC_EIO;
	}
	while (count) {
		uint32_t n = count < per ? count : per;
		memcpy(m->buf, buf, (size_t)n * m->block_size);
		if (rw10(m, SCSI_WRITE10, lba, n))
			return MSC_EIO;
		buf = (const uint8_t *)buf + (size_t)n * m->block_size;
		lba += n;
		count -= n;
	}
	return MSC_OK;
}

/* Until TEST UNIT READY passes, or MSC_READY_MS. */
static bool wait_ready(struct msc *m)
{
	uint8_t cdb[6] = { SCSI_TEST_UNIT_READY };
	uint32_t moved, tries = 0;

	for (uint32_t waited = 0; waited <= MSC_READY_MS; waited += 100, tries++) {
		int err = scsi(m, cdb, 6, false, 0, &moved);
		if (err == MSC_OK)
			return true;
		if (err == MSC_EIO && tries >= 3)
			break;
		usb_delay_ms(100);
	}
	printk("usb: %s: storage not ready after %u tries (sense=%06x); not used\n", m->dev->name,
	       tries, m->sense);
	return false;
}

static bool read_capacity(struct msc *m)
{
	uint8_t c10[10] = { SCSI_READ_CAPACITY10 };
	uint8_t c16[16] = { SCSI_SERVICE_IN16, SA_READ_CAPACITY16 };
	uint32_t moved;

	if (scsi(m, c10, 10, true, 8, &moved) || moved < 8)
		goto fail;
	m->blocks = (uint64_t)get_be32(m->buf) + 1;
	m->block_size = get_be32(m->buf + 4);
	if (get_be32(m->buf) == 0xFFFFFFFFu) {
		put_be32(c16 + 10, 32);
		if (scsi(m, c16, 16, true, 32, &moved) || moved < 12)
			goto fail;
		m->blocks = ((uint64_t)get_be32(m->buf) << 32 | get_be32(m->buf + 4)) + 1;
		m->block_size = get_be32(m->buf + 8);
	}
	if (m->block_size < 512 || m->block_size > BLOCK_SIZE_MAX ||
	    (m->block_size & (m->block_size - 1))) {
		printk("usb: %s: blocks of %u bytes are not supported (512..4096, a power of "
		       "two); not used\n", m->dev->name, m->block_size);
		return false;
	}
	return true;
fail:
	printk("usb: %s: READ CAPACITY failed (sense=%06x); not used\n", m->dev->name, m->sense);
	return false;
}

/* The interface and bulk endpoints of d, if it is BOT mass storage. */
static bool find_iface(struct usb_device *d, struct msc *m)
{
	const uint8_t *p = d->config, *end = d->config + d->config_len;
	bool in_iface = false;

	while (p + 2 <= end && p[0] >= 2 && p + p[0] <= end) {
		if (p[1] == USB_DT_INTERFACE && p[0] >= 9) {
			if (in_iface && m->ep_in && m->ep_out)
				return true;
			in_iface = p[5] == MSC_CLASS && p[6] == MSC_SUBCLASS_SCSI &&
				   p[7] == MSC_PROTO_BOT;
			m->iface = p[2];
			m->ep_in = m->ep_out = 0;
		} else if (in_iface && p[1] == USB_DT_ENDPOINT && p[0] >= 7 &&
			   (p[3] & 3) == USB_EP_BULK) {
			uint16_t mps = (uint16_t)(p[4] | (p[5] & 7) << 8);
			uint8_t burst = 0;
			if (p + p[0] + 2 <= end && p[p[0] + 1] == USB_DT_SS_COMPANION)
				burst = p[p[0] + 2];
			if (p[2] & USB_DIR_IN) {
				m->ep_in = p[2], m->mps_in = mps, m->burst_in = burst;
			} else {
				m->ep_out = p[2], m->mps_out = mps, m->burst_out = burst;
			}
		}
		p += p[0];
	}
	return in_iface && m->ep_in && m->ep_out;
}

static bool msc_bring_up(struct usb_device *d, struct msc *m)
{
	uint8_t inq[6] = { SCSI_INQUIRY, 0, 0, 0, 36, 0 };
	uint32_t moved;
	int err;

	m->dev = d;
	if ((err = usb_bulk_setup(d, m->ep_in, m->mps_in, m->burst_in, m->ep_out, m->mps_out,
				  m->burst_out)))
		return false;
	if (!(m->buf = (uint8_t *)(uintptr_t)pmm_alloc_nowait(MSC_XFER_MAX / PAGE_SIZE,
							      MSC_XFER_MAX / PAGE_SIZE)) ||
	    !(m->cbw = (uint8_t *)(uintptr_t)pmm_alloc_nowait(1, 1))) {
		printk("usb: %s: no memory for its buffers\n", d->name);
		return false;
	}
	m->csw = m->cbw + 64;
	if (scsi(m, inq, 6, true, 36, &moved) || moved < 36) {
		printk("usb: %s: INQUIRY failed; not used\n", d->name);
		return false;
	}
	memcpy(m->vendor, m->buf + 8, 8);
	memcpy(m->model, m->buf + 16, 16);
	if (!wait_ready(m))
		return false;
	if (!read_capacity(m))
		return false;
	m->bdev = (struct blockdev){ .block_size = m->block_size, .blocks = m->blocks,
				     .read = msc_read, .write = msc_write, .ctx = m };
	printk("usb: storage=\"%s\" vendor=\"%.8s\" model=\"%.16s\" blocks=%llu block_size=%u "
	       "mib=%llu\n", d->name, m->vendor, m->model, (unsigned long long)m->blocks,
	       m->block_size, (unsigned long long)(m->blocks * m->block_size >> 20));
	return true;
}

unsigned msc_probe(struct msc **out, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < usb_device_count && n < max; i++) {
		struct msc *m = &msc_devs[i];

		memset(m, 0, sizeof(*m));
		if (!find_iface(&usb_devices[i], m) || !msc_bring_up(&usb_devices[i], m))
			continue;
		out[n++] = m;
	}
	return n;
}
