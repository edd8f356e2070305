// Running a continuation only while its owner lives. An owner that hands
// out callbacks capturing `this` (or one of its members) holds a Lifetime
// and wraps each callback with guard(): once the owner is destroyed, the
// guarded callback does nothing (or calls its fallback, for a caller that
// must still be answered, say with "the session was destroyed").
//
// Declare the Lifetime as the owner's LAST member. Members are destroyed in
// the reverse order of their declaration, so the Lifetime goes first: while
// the owner's other members are being destroyed (a connection, a child, an
// executor joining its threads, any of which may still call back), the
// guarded callbacks already see the owner gone and touch none of its
// half-destroyed members. (The owner's destructor body runs before any
// member goes: callbacks it calls itself still run.)
//
// Threads: a Lifetime belongs to its owner's thread (the main loop). A
// guarded callback holds a std::weak_ptr only, so it may be copied, moved
// and destroyed on any thread (handed through an executor job that posts it
// back), but it must be called on the owner's thread: a check made on
// another one could pass just before the owner goes.
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace tracectl {

namespace lifetime_detail {

/// The fallback of guard(f): nothing.
struct Nothing {
    template <class... Args>
    void operator()(Args&&...) const noexcept {}
};

/// Calls `fallback` with the arguments if it takes them, else with none.
template <class Fallback, class... Args>
void callFallback(Fallback& fallback, Args&&... args) {
    if constexpr (std::is_invocable_v<Fallback&, Args...>)
        std::invoke(fallback, std::forward<Args>(args)...);
    else
        std::invoke(fallback);
}

/// What Lifetime::guard() returns: f(args...) while the owner lives,
/// fallback(args...) (or fallback()) once it is gone. Returns nothing.
template <class F, class Fallback>
class Guarded {
public:
    Guarded(std::weak_ptr<const char> owner, F f, Fallback fallback)
        : owner_(std::move(owner)), f_(std::move(f)), fallback_(std::move(fallback)) {}

    template <class... Args>
    requires std::invocable<F&, Args...>
    void operator()(Args&&... args) {
        if (!owner_.expired())
            std::invoke(f_, std::forward<Args>(args)...);
        else
            callFallback(fallback_, std::forward<Args>(args)...);
    }
    template <class... Args>
    requires std::invocable<const F&, Args...>
    void operator()(Args&&... args) const {
        if (!owner_.expired())
            std::invoke(f_, std::forward<Args>(args)...);
        else
            callFallback(fallback_, std::forward<Args>(args)...);
    }

private:
    std::weak_ptr<const char> owner_;
    F f_;
    Fallback fallback_;
};

} // namespace lifetime_detail

class Lifetime {
public:
    Lifetime() = default;
    /// Neither copied nor moved: its guards name this owner.
    Lifetime(const Lifetime&) = delete;
    Lifetime& operator=(const Lifetime&) = delete;

    /// A callable (copyable if `f` is) that calls `f` with its arguments
    /// while the owner lives, and does nothing once it is destroyed.
    template <class F>
    auto guard(F f) const {
        return lifetime_detail::Guarded<F, lifetime_detail::Nothing>(token_, std::move(f), {});
    }
    /// The same, but once the owner is destroyed it calls `fallback`, with
    /// the same arguments if it takes them, else with none: for a
    /// continuation that must answer its caller whatever happens.
    template <class F, class Fallback>
    auto guard(F f, Fallback fallback) const {
        return lifetime_detail::Guarded<F, Fallback>(token_, std::move(f), std::move(fallback));
    }

private:
    std::shared_ptr<const char> token_ = std::make_shared<const char>('\0');
};

} // namespace tracectl
