// RAII over liblttng-ust-ctl's object data (channels, streams, events as the
// daemon holds them): released with lttng_ust_ctl_release_object(-1, ...),
// which closes the fds they carry, then free(3)'d (ust-ctl.h).
#pragma once

#include <cstdlib>
#include <lttng/ust-ctl.h>
#include <memory>

namespace tracectl {

struct UstObjectRelease {
    void operator()(lttng_ust_abi_object_data* o) const noexcept {
        lttng_ust_ctl_release_object(-1, o);
        std::free(o);
    }
};
using UstObject = std::unique_ptr<lttng_ust_abi_object_data, UstObjectRelease>;

} // namespace tracectl
