// liblttng-ust-ctl expects the program using it to define this thread-local
// state (ust-sigbus.h). The daemon never maps ring buffers (the consumer
// does), so it is never used here; it only has to exist.
#include <lttng/ust-sigbus.h>

DEFINE_LTTNG_UST_SIGBUS_STATE();
