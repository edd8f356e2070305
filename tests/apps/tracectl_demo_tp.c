/* Instantiates the tracectl_demo tracepoint provider (lttng-ust(3)). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tracectl_demo_tp.h"
