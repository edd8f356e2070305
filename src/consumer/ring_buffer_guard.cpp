#include "ring_buffer_guard.hpp"

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
#include <urcu/system.h>

// The TLS state liblttng-ust-ctl's sigbus_begin()/sigbus_end() use; the
// library only declares it (extern, initial-exec TLS), every executable that
// links liblttng-ust-ctl must define it exactly once.
DEFINE_LTTNG_UST_SIGBUS_STATE();

namespace tracectl::consumer {

namespace {

// The runGuarded() under way on this thread, if any: where a fault or an
// abort inside it jumps back to.
thread_local sigjmp_buf* guard = nullptr;

extern "C" void onSignal(int sig, siginfo_t* info, void*) {
    // Returns only if the address is not inside a mapping a ust-ctl call is
    // currently reading; otherwise it siglongjmps back into that call.
    if (sig == SIGBUS)
        lttng_ust_ctl_sigbus_handle(info->si_addr);
    if (guard != nullptr)
        siglongjmp(*guard, sig);
    switch (sig) {
    case SIGBUS: {
        static const char msg[] =
            "tracectl-consumerd: SIGBUS outside a ring-buffer access, aborting\n";
        [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
        std::abort();
    }
    case SIGABRT:
        // abort(3) goes on to its default action once its handler returns.
        return;
    default: {
        // SIGSEGV: the default action, once the faulting access runs again.
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        ::sigaction(sig, &dfl, nullptr);
        if (info->si_code <= 0) // sent, not a fault: nothing runs again
            ::raise(sig);
        return;
    }
    }
}

/// After a jump out of a liblttng-ust-ctl call: its SIGBUS transaction
/// never ended (jmp_ready still set, which the next call's sigbus_begin()
/// asserts against) and the address ranges it registered lay in the stack
/// frames just left.
void resetUstSigbusState() noexcept {
    CMM_STORE_SHARED(lttng_ust_sigbus_state.jmp_ready, 0);
    CDS_INIT_LIST_HEAD(&lttng_ust_sigbus_state.head);
}

} // namespace

bool runGuarded(void (*fn)(void*), void* arg) noexcept {
    // Nothing with a destructor lives between sigsetjmp and fn's end: the
    // jump leaves only plain memory behind. `outer` is read after a jump:
    // volatile, so that it is not kept in a register sigsetjmp saved.
    sigjmp_buf* volatile outer = guard;
    sigjmp_buf here;
    if (sigsetjmp(here, 1) != 0) {
        guard = outer;
        resetUstSigbusState();
        return false;
    }
    guard = &here;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    fn(arg);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    guard = outer;
    return true;
}

bool copyFromMapping(void* to, const void* from, std::size_t size) noexcept {
    struct Copy {
        void* to;
        const void* from;
        std::size_t size;
    } copy{to, from, size};
    return runGuarded(
        +[](void* p) {
            const auto* c = static_cast<const Copy*>(p);
            std::memcpy(c->to, c->from, c->size);
        },
        &copy);
}

bool copyToMapping(void* to, const void* from, std::size_t size) noexcept {
    return copyFromMapping(to, from, size); // the same guarded memcpy
}

void installRingBufferGuards() {
    for (const int sig : {SIGBUS, SIGSEGV, SIGABRT}) {
        struct sigaction sa {};
        sa.sa_sigaction = &onSignal;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        if (::sigaction(sig, &sa, nullptr) < 0)
            throw std::system_error(errno, std::generic_category(),
                                    std::string("sigaction(") + ::strsignal(sig) + ")");
    }
}

} // namespace tracectl::consumer
