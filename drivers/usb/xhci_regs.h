/*
 * xHCI registers, TRBs and contexts (eXtensible Host Controller Interface
 * for USB, revision 1.2): the names the driver uses, nothing more.
 * Private to drivers/usb/.
 */
#ifndef DRIVERS_USB_XHCI_REGS_H
#define DRIVERS_USB_XHCI_REGS_H

#include <stdint.h>

/* PCI: serial bus controller, USB, xHCI. */
#define XHCI_PCI_CLASS		0x0C
#define XHCI_PCI_SUBCLASS	0x03
#define XHCI_PCI_PROGIF		0x30

/* Capability registers (section 5.3), from BAR0. */
#define XCAP_CAPLENGTH		0x00	/* 7:0 operational regs offset; 31:16 HCIVERSION */
#define XCAP_HCSPARAMS1		0x04
#define   HCS1_MAX_SLOTS(v)	((v) & 0xFF)
#define   HCS1_MAX_PORTS(v)	((v) >> 24)
#define XCAP_HCSPARAMS2		0x08
#define   HCS2_SCRATCH(v)	((((v) >> 21) & 0x1F) << 5 | ((v) >> 27))
#define XCAP_HCCPARAMS1		0x10
#define   HCC1_AC64		(1u << 0)	/* 64-bit addresses */
#define   HCC1_CSZ		(1u << 2)	/* 64-byte contexts */
#define   HCC1_PPC		(1u << 3)	/* ports have power switches */
#define   HCC1_XECP(v)		((v) >> 16)	/* extended capabilities, in dwords */
#define XCAP_DBOFF		0x14
#define XCAP_RTSOFF		0x18

/* Operational registers (section 5.4), from BAR0 + CAPLENGTH. */
#define XOP_USBCMD		0x00
#define   CMD_RUN		(1u << 0)
#define   CMD_HCRST		(1u << 1)
#define XOP_USBSTS		0x04
#define   STS_HCH		(1u << 0)	/* halted */
#define   STS_HSE		(1u << 2)	/* host system error */
#define   STS_CNR		(1u << 11)	/* controller not ready */
#define   STS_HCE		(1u << 12)	/* host controller error */
#define XOP_PAGESIZE		0x08
#define XOP_CRCR		0x18	/* u64 */
#define   CRCR_RCS		(1u << 0)
#define XOP_DCBAAP		0x30	/* u64 */
#define XOP_CONFIG		0x38
#define XOP_PORTSC(n)		(0x400 + 0x10 * ((n) - 1))	/* n: 1-based port */

/* PORTSC (section 5.4.8). */
#define PORTSC_CCS		(1u << 0)	/* a device is connected */
#define PORTSC_PED		(1u << 1)	/* enabled; writing 1 disables */
#define PORTSC_PR		(1u << 4)	/* port reset */
#define PORTSC_PLS(v)		(((v) >> 5) & 0xF)
#define PORTSC_PP		(1u << 9)	/* power */
#define PORTSC_SPEED(v)		(((v) >> 10) & 0xF)
#define PORTSC_CHANGES		(0x7Fu << 17)	/* CSC PEC WRC OCC PRC PLC CEC: write 1 to clear */
#define PORTSC_PRC		(1u << 21)
#define PORTSC_WPR		(1u << 31)	/* warm reset (USB 3) */
/* Bits kept when writing: power and the wake enables; never PED or a change bit. */
#define PORTSC_KEEP		(PORTSC_PP | (7u << 25))
#define PLS_U0			0

/* Port speeds (PORTSC, the slot context): the default protocol speed ids. */
#define SPEED_FULL		1
#define SPEED_LOW		2
#define SPEED_HIGH		3
#define SPEED_SUPER		4

/* Runtime registers (section 5.5): interrupter 0. */
#define XRT_IMAN		0x20
#define XRT_ERSTSZ		0x28
#define XRT_ERSTBA		0x30	/* u64 */
#define XRT_ERDP		0x38	/* u64 */
#define   ERDP_EHB		(1u << 3)	/* event handler busy: write 1 to clear */

/* Extended capabilities (section 7). */
#define XECP_ID(v)		((v) & 0xFF)
#define XECP_NEXT(v)		(((v) >> 8) & 0xFF)	/* dwords to the next; 0 = last */
#define XECP_LEGACY		1
#define   LEGSUP_BIOS_OWNED	(1u << 16)
#define   LEGSUP_OS_OWNED	(1u << 24)
#define   LEGCTL_SMI_ENABLES	((1u << 0) | (1u << 4) | (7u << 13))
#define   LEGCTL_SMI_EVENTS	(7u << 29)	/* write 1 to clear */
#define XECP_PROTOCOL		2
#define   PROTO_MAJOR(v)	((v) >> 24)
#define   PROTO_PORT_FIRST(v)	((v) & 0xFF)
#define   PROTO_PORT_COUNT(v)	(((v) >> 8) & 0xFF)

/* A Transfer Request Block (section 4.11): 16 bytes, 16-byte aligned. */
struct xhci_trb {
	uint64_t param;		/* a pointer or immediate data */
	uint32_t status;	/* length, completion code */
	uint32_t control;	/* cycle, flags, type */
};

#define TRB_CYCLE		(1u << 0)
#define TRB_TC			(1u << 1)	/* link: toggle the cycle */
#define TRB_ISP			(1u << 2)	/* event on a short packet */
#define TRB_IOC			(1u << 5)	/* event on completion */
#define TRB_IDT			(1u << 6)	/* immediate data (setup) */
#define TRB_DIR_IN		(1u << 16)	/* data and status stages */
#define TRB_TYPE(t)		((uint32_t)(t) << 10)
#define TRB_GET_TYPE(c)		(((c) >> 10) & 0x3F)
#define TRB_SLOT(s)		((uint32_t)(s) << 24)
#define TRB_GET_SLOT(c)		((c) >> 24)
#define TRB_EP(e)		((uint32_t)(e) << 16)
#define TRB_GET_EP(c)		(((c) >> 16) & 0x1F)
#define TRB_TRT_IN		(3u << 16)	/* setup: an IN data stage follows */
#define TRB_TRT_OUT		(2u << 16)
#define TRB_CODE(s)		((s) >> 24)
#define TRB_RESIDUAL(s)		((s) & 0xFFFFFF)

enum {
	TRB_NORMAL = 1, TRB_SETUP = 2, TRB_DATA = 3, TRB_STATUS = 4, TRB_LINK = 6,
	TRB_ENABLE_SLOT = 9, TRB_ADDRESS_DEVICE = 11, TRB_CONFIGURE_EP = 12,
	TRB_EVALUATE_CTX = 13, TRB_RESET_EP = 14, TRB_STOP_EP = 15, TRB_SET_TR_DEQ = 16,
	TRB_EV_TRANSFER = 32, TRB_EV_COMMAND = 33, TRB_EV_PORT = 34,
};

/* Completion codes (section 6.4.5). */
enum {
	CC_SUCCESS = 1, CC_TRANSACTION = 4, CC_STALL = 6, CC_SHORT = 13, CC_STOPPED = 26,
	CC_STOPPED_SHORT = 27,
};

/* Contexts (section 6.2): dword indexes; a context is 32 or 64 bytes (CSZ). */
#define SLOT0_SPEED(s)		((uint32_t)(s) << 20)
#define SLOT0_ENTRIES(n)	((uint32_t)(n) << 27)
#define SLOT0_GET_ENTRIES(v)	(((v) >> 27) & 0x1F)
#define SLOT1_PORT(p)		((uint32_t)(p) << 16)
#define EP0_INTERVAL(i)		((uint32_t)(i) << 16)	/* 2^i units of 125 us */
#define EP1_CERR3		(3u << 1)
#define EP1_TYPE(t)		((uint32_t)(t) << 3)
#define EP1_BURST(b)		((uint32_t)(b) << 8)
#define EP1_MPS(m)		((uint32_t)(m) << 16)
#define EP_TYPE_BULK_OUT	2
#define EP_TYPE_CONTROL		4
#define EP_TYPE_BULK_IN		6
#define EP_TYPE_INTR_IN		7
#define EP4_ESIT_LO(n)		((uint32_t)(n) << 16)	/* max payload an interval */
#define EP_STATE(d0)		((d0) & 7)
#define EP_STATE_HALTED		2

#endif
