/* The USB boot keyboard as a console input (drivers/usb/usbkbd.c). */
#ifndef USB_USBKBD_H
#define USB_USBKBD_H

/*
 * At boot, if an xHCI controller is present: enumerate the root ports
 * (usb_init()), find a HID boot keyboard, and register it as a console
 * with input only.  Cheap and silent when there is no xHCI controller.
 */
void usbkbd_init(void);

#endif
