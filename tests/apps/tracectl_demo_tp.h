/* Tracepoint provider "tracectl_demo" of the bundled instrumented test
 * application: one event per lttng-ust field kind the metadata must
 * describe. See lttng-ust(3), "Tracepoint provider". */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tracectl_demo

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tracectl_demo_tp.h"

#if !defined(TRACECTL_DEMO_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TRACECTL_DEMO_TP_H

#include <lttng/tracepoint.h>
#include <arpa/inet.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_ENUM(tracectl_demo, colour,
    LTTNG_UST_TP_ENUM_VALUES(
        lttng_ust_field_enum_value("red", 0)
        lttng_ust_field_enum_value("green", 1)
        lttng_ust_field_enum_range("blues", 2, 9)
    )
)

/* Every field kind, with values derived from the sequence number so a test
 * can check each one. */
LTTNG_UST_TRACEPOINT_EVENT(tracectl_demo, tick,
    LTTNG_UST_TP_ARGS(uint64_t, seq, const char *, text, double, ratio,
                      const int32_t *, triple, const uint8_t *, bytes, size_t, nbytes),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, seq, seq)
        lttng_ust_field_integer(int8_t, s8, (int8_t)(-(int64_t)(seq % 100)))
        lttng_ust_field_integer(int16_t, s16, (int16_t)(-1000 - (int64_t)(seq % 1000)))
        lttng_ust_field_integer(uint32_t, u32, (uint32_t)(seq * 3))
        lttng_ust_field_integer_hex(uint32_t, hex32, (uint32_t)(0xC0DE0000u + seq % 0x10000))
        /* lttng-ust records a network field as given: the caller converts
         * (checked against lttng-sessiond 2.13: it writes byte_order = be). */
        lttng_ust_field_integer_network(uint16_t, net16, htons((uint16_t)(seq % 65536)))
        lttng_ust_field_float(double, ratio, ratio)
        lttng_ust_field_float(float, ratio_f, (float)ratio)
        lttng_ust_field_string(text, text)
        lttng_ust_field_array(int32_t, triple, triple, 3)
        lttng_ust_field_sequence(uint8_t, bytes, bytes, size_t, nbytes)
        lttng_ust_field_array_text(char, word, "demo", 4)
        lttng_ust_field_sequence_text(char, seqtext, text, size_t, nbytes)
        lttng_ust_field_enum(tracectl_demo, colour, int, colour, (int)(seq % 10))
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(tracectl_demo, tick, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

LTTNG_UST_TRACEPOINT_EVENT(tracectl_demo, debug_note,
    LTTNG_UST_TP_ARGS(uint64_t, seq),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, seq, seq))
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(tracectl_demo, debug_note, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)

LTTNG_UST_TRACEPOINT_EVENT(tracectl_demo, done,
    LTTNG_UST_TP_ARGS(uint64_t, count),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, count, count))
)

#endif /* TRACECTL_DEMO_TP_H */

#include <lttng/tracepoint-event.h>
