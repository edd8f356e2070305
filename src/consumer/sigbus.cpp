#include "sigbus.hpp"

#include <atomic>
#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <lttng/ust-ctl.h>
#include <lttng/ust-sigbus.h>
#include <system_error>
#include <unistd.h>

// The TLS state liblttng-ust-ctl's sigbus_begin()/sigbus_end() use; the
// library only declares it (extern, initial-exec TLS), every executable that
// links liblttng-ust-ctl must define it exactly once.
DEFINE_LTTNG_UST_SIGBUS_STATE();

namespace tracectl::consumer {

namespace {

// The copyFromMapping() under way on this thread, if any: where a fault in
// it jumps back to.
thread_local sigjmp_buf* copying = nullptr;

extern "C" void onSigbus(int, siginfo_t* info, void*) {
    // Returns only if the address is not inside a mapping a ust-ctl call is
    // currently reading; otherwise it siglongjmps back into that call.
    lttng_ust_ctl_sigbus_handle(info->si_addr);
    if (copying != nullptr)
        siglongjmp(*copying, 1);
    static const char msg[] = "tracectl-consumerd: SIGBUS outside a ring-buffer access, aborting\n";
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    std::abort();
}

} // namespace

bool copyFromMapping(void* to, const void* from, std::size_t size) noexcept {
    // Nothing with a destructor lives between sigsetjmp and the copy's end:
    // the jump leaves only plain memory behind.
    sigjmp_buf here;
    if (sigsetjmp(here, 1) != 0) {
        copying = nullptr;
        return false;
    }
    copying = &here;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    std::memcpy(to, from, size);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    copying = nullptr;
    return true;
}

void installSigbusHandler() {
    struct sigaction sa {};
    sa.sa_sigaction = &onSigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(SIGBUS, &sa, nullptr) < 0)
        throw std::system_error(errno, std::generic_category(), "sigaction(SIGBUS)");
}

} // namespace tracectl::consumer
