// Runs an sdbus-c++ connection inside the GLib main loop of the GTK thread: a GSource that
// polls the connection's fd with the events and the timeout sd-bus asks for, and dispatches
// every pending message when it is ready. No thread, no polling on a timer: the proxies'
// callbacks (signals, async replies) run on the GTK thread, between two frames.
#pragma once

#include <functional>
#include <glib.h>
#include <sdbus-c++/IConnection.h>
#include <string>

namespace tracectl::gui {

/// Attached to the default GMainContext on construction, destroyed (detached) on destruction.
/// The connection must outlive it. Calls made on the connection from the GTK thread outside
/// a dispatch (method calls, proxy registrations) need nothing more: the source asks sd-bus
/// for its state before each poll, so messages they queued are dispatched at the next turn of
/// the loop.
class BusSource {
public:
    /// `on_failure` is called once, with the sd-bus error text, when processing the connection
    /// fails (the bus closed it, or the bus daemon went away); the source then stops.
    BusSource(sdbus::IConnection& connection, std::function<void(const std::string&)> onFailure);
    ~BusSource();
    BusSource(const BusSource&) = delete;
    BusSource& operator=(const BusSource&) = delete;
    BusSource(BusSource&&) = delete;
    BusSource& operator=(BusSource&&) = delete;

private:
    struct Glue; // the GSource GLib allocates, pointing back here
    static gboolean prepare(GSource* source, gint* timeoutMs);
    static gboolean check(GSource* source);
    static gboolean dispatch(GSource* source, GSourceFunc callback, gpointer data);

    /// Updates the fd's events from sd-bus; returns the poll timeout in ms (-1: none).
    int arm();

    sdbus::IConnection& connection_;
    std::function<void(const std::string&)> onFailure_;
    GSource* source_ = nullptr;
    gpointer fdTag_ = nullptr;
    GIOCondition condition_ = G_IO_IN;
};

} // namespace tracectl::gui
