// The trace chunks of a session being recorded, handed over one by one as each completes:
// how `tracectl dtrace` reads a live session while it records (tracectl-dtrace(1), "Live
// output"). Each next() rotates the session (Session.Rotate, as lttng-rotate(1)) and
// returns once the daemon announced the archive complete (RotationCompleted): a chunk
// still being written is never read. Chunks come in rotation order, and every record
// of the session is in exactly one of them.
#pragma once

#include <string>
#include <vector>

namespace tracectl::cli {

class BusClient;

class SessionChunks {
public:
    /// The session at object path `path`, recording (locally) under `output`.
    SessionChunks(BusClient& bus, std::string path, std::string output);

    /// Closes the current chunk (Session.Rotate, waiting for RotationCompleted; an
    /// active or stopped session) and returns its CTF trace directories (find_traces;
    /// none if the chunk holds no trace: no app registered, nothing enabled matched).
    /// Deletes the chunk handed over before, which has been read. Throws sdbus::Error
    /// (UnknownObject: the session is gone; WrongState, Failed: it cannot rotate or the
    /// rotation failed).
    std::vector<std::string> next();

    /// The last chunk, once the session is stopped (Stop has answered: the current chunk
    /// is complete) or cannot rotate any more (it failed: what is on disk): every trace
    /// left under the output, the chunks handed over being deleted.
    std::vector<std::string> rest();

private:
    BusClient& bus_;
    std::string path_;
    std::string output_;
    std::string previous_; ///< the folder of the chunk handed over last
};

} // namespace tracectl::cli
