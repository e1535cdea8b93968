/*
 * Moved to <lib/format.h> (the formatter is not tracing's). This header
 * forwards for the files not yet changed over (drivers/, the console);
 * it goes once they include <lib/format.h>.
 */
#include "lib/format.h"
