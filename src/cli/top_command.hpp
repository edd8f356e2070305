// `tracectl top`: the live view of the sessions the caller may see. Wires the bus (signals),
// the model (top_model.hpp) and the terminal (top_screen.hpp) in one poll loop on the bus fd,
// standard input, a signalfd (SIGINT, SIGTERM, SIGHUP) and a one-second timer. One thread.
#pragma once

#include "bus_client.hpp"
#include "exit_status.hpp"

#include <iosfwd>

namespace tracectl::cli {

/// Whether standard input and output are a terminal; if not, prints "tracectl: top needs a
/// terminal ..." on `err`. main calls it before connecting to the bus.
bool checkTerminalForTop(std::ostream& err);

/// Runs the view until q, Ctrl-C, SIGTERM or the terminal going away; the terminal is
/// restored before it returns or throws. Without a terminal on standard input and output it
/// prints "tracectl: top needs a terminal ..." on `err` and returns ExitStatus::usage.
/// Bus failures throw sdbus::Error (reported by main as for every command).
ExitStatus runTop(BusClient& bus, std::ostream& err);

} // namespace tracectl::cli
