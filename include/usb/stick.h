/*
 * The baretrace stick: the USB mass-storage device whose BARETRACE
 * partition and TRACE.BIN check out (drivers/block decides), and saves
 * into its data area (<block/tracesave.h>).  drivers/usb/stick.c.
 */
#ifndef USB_STICK_H
#define USB_STICK_H

#include <stdbool.h>
#include <stdint.h>
#include <block/tracesave.h>

/*
 * The trace file, looked for on first call (the USB stack brought up
 * then: usb: lines say what was found); NULL if no device has one.  A
 * device without one is never written.
 */
const struct tracefile *usb_trace_file(void);

/*
 * Begin a save of bytes bytes of frames after the saves already in the
 * file; NULL after one line if there is no trace file or it has no room
 * (nothing is written then).
 */
struct tracesave *usb_save_begin(uint64_t bytes);

/* End it (the mark written last); one line either way.  True if saved. */
bool usb_save_end(struct tracesave *s, uint32_t dump_id);

/*
 * Begin a streaming save (<block/tracesave.h>) of dump dump_id after the
 * saves already in the file, with all the free room; NULL after one line
 * if there is no trace file or less than min_bytes of room.  One stream
 * at a time; a usb_save_begin() meanwhile ends it at its last checkpoint
 * (its s->err set, usb_stream_end() then returns false).
 */
struct tracesave *usb_stream_begin(uint32_t dump_id, uint64_t min_bytes);
/* End it as usb_save_end() does; false if it failed or had been ended. */
bool usb_stream_end(struct tracesave *s, uint32_t dump_id);

#endif
