/* PS/2 keyboard through the i8042 controller, polled, as a console input. */
#ifndef ARCH_PS2KBD_H
#define ARCH_PS2KBD_H

#include <stdbool.h>
#include "kernel/console.h"

/*
 * Is there an i8042? If so set it up as console= and scancode options say
 * and return its (input-only) console, not yet registered; else NULL.
 * *desc says which scancode set arrives ("set1" translated, or "set2").
 */
struct console *ps2kbd_probe(const char **desc);

#endif
