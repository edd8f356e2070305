// Ring buffers are hostile memory. An application shares each stream's shm
// with the consumer and may write anything into it, punch holes in it
// (fallocate(FALLOC_FL_PUNCH_HOLE): the pages read back as zeros) or try to
// truncate it (refused: the shm is sealed, ust_channel.hpp). Every
// liblttng-ust-ctl call on a stream reads that memory and trusts it: a
// zeroed buffer makes lttng-ust 2.13's client_buffer_begin
// (ringbuffer-clients/template.h) compute a NULL packet header and
// assert(), which aborts the whole process. liblttng-ust-ctl guards its own
// calls against SIGBUS only (sigsetjmp/siglongjmp, lttng/ust-sigbus.h).
//
// This file guards the whole class: every call into liblttng-ust-ctl on a
// stream's buffer, and every copy the consumer makes of it, runs under a
// per-thread guard that turns a SIGBUS, a SIGSEGV or a SIGABRT raised
// inside it into a failed call. The stream is then dropped by its owner
// (and said so); the consumer, and the session's other apps, go on.
#pragma once

#include <cerrno>
#include <cstddef>
#include <tuple>
#include <type_traits>

namespace tracectl::consumer {

/// Installs the process-wide SIGBUS, SIGSEGV and SIGABRT handlers
/// (sigaction, SA_SIGINFO). A SIGBUS inside a liblttng-ust-ctl call on a
/// mapping it registered is handed to lttng_ust_ctl_sigbus_handle() (the
/// call fails with -EIO / NULL, as lttng-consumerd does). Any of the three
/// raised on a thread inside runGuarded() makes that runGuarded() return
/// false. Otherwise: SIGBUS writes one line to stderr and aborts; SIGSEGV
/// and SIGABRT take their default action (the process dies, with a core as
/// usual). Throws std::system_error if sigaction(2) fails.
void installRingBufferGuards();

/// Runs `fn(arg)` so that a fault (SIGBUS, SIGSEGV) or an abort (SIGABRT,
/// the assertions of liblttng-ust-ctl on what it read) inside it returns
/// false instead of ending the process: true if `fn` returned. A call cut
/// short leaves liblttng-ust-ctl's per-thread SIGBUS state reset, and
/// whatever `fn` was doing half done: the stream it read must be dropped.
/// `fn` is left by siglongjmp: it must own nothing with a destructor
/// (plain C calls and trivially destructible data only). Leaving abort(3)
/// by its handler is safe with glibc (Debian 12's 2.36): abort() releases
/// its lock before raising SIGABRT and raises at stage 0 again next time. Needs
/// installRingBufferGuards(). Nests (an inner guard catches first).
bool runGuarded(void (*fn)(void*), void* arg) noexcept;

/// What a guarded liblttng-ust-ctl call returns when it was cut short:
/// the buffer it read is spoiled. No liblttng-ust-ctl call returns it
/// otherwise (they say -EIO for a SIGBUS they caught themselves).
inline constexpr int kSpoiledBuffer = -EFAULT;

/// Calls liblttng-ust-ctl's `call(args...)` on a stream's ring buffer
/// under runGuarded(): its result, or, if it was cut short,
/// kSpoiledBuffer (calls returning an integer), nullptr (a pointer) or
/// nothing (void: see the return value of runGuarded(), here lost; use
/// guardedVoid()). Arguments are copied (pointers and integers).
template <typename R, typename... P, typename... A>
R guarded(R (*call)(P...), A... args) noexcept {
    static_assert(!std::is_void_v<R>, "use guardedVoid()");
    struct Thunk {
        R (*call)(P...);
        std::tuple<A...> args;
        R result;
    } thunk{call, std::tuple<A...>(args...), R{}};
    static_assert(std::is_trivially_destructible_v<Thunk>);
    const bool done = runGuarded(
        +[](void* p) {
            auto* t = static_cast<Thunk*>(p);
            t->result = std::apply(t->call, t->args);
        },
        &thunk);
    if (done)
        return thunk.result;
    if constexpr (std::is_pointer_v<R>)
        return nullptr;
    else
        return static_cast<R>(kSpoiledBuffer);
}

/// guarded() for calls that return nothing: false if it was cut short.
template <typename... P, typename... A>
bool guardedVoid(void (*call)(P...), A... args) noexcept {
    struct Thunk {
        void (*call)(P...);
        std::tuple<A...> args;
    } thunk{call, std::tuple<A...>(args...)};
    static_assert(std::is_trivially_destructible_v<Thunk>);
    return runGuarded(
        +[](void* p) {
            auto* t = static_cast<Thunk*>(p);
            std::apply(t->call, t->args);
        },
        &thunk);
}

/// Copies `size` bytes from `from`, inside a ring-buffer mapping, to `to`:
/// false, with `to` partly written, if the copy faulted (the app spoiled
/// its shm) instead of the process dying. For the consumer's own reads of
/// a sub-buffer (counting its records, reading a header): ust-ctl guards
/// only its own calls.
bool copyFromMapping(void* to, const void* from, std::size_t size) noexcept;

/// Copies `size` bytes from `from` to `to`, inside a ring-buffer mapping:
/// false, with `to` partly written, if the copy faulted instead of the
/// process dying. For the consumer's own writes into a sub-buffer it holds
/// (got and not put yet: no writer touches it).
bool copyToMapping(void* to, const void* from, std::size_t size) noexcept;

} // namespace tracectl::consumer
