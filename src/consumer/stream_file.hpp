// Output directories and append-only output files of the consumer, always
// reached through directory fds (openat(2)) so that no path given by the
// daemon can climb out of the output root or follow a symlink.
#pragma once

#include "common/unique_fd.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

namespace tracectl::consumer {

/// Directories are created with this mode, files with kFileMode (the
/// consumer sets umask 0027, so these are the final modes).
inline constexpr unsigned kDirMode = 0750;
inline constexpr unsigned kFileMode = 0640;

/// An open directory (O_PATH | O_DIRECTORY). Move-only; empty when moved from.
class OutputDir {
public:
    /// Opens `path`, creating it and its missing parents (mode kDirMode).
    /// Symlinks in `path` itself are followed (the operator chose it).
    /// Throws std::system_error.
    static OutputDir openRoot(const std::filesystem::path& path);

    /// Adopts `fd`, a directory fd (O_PATH or O_DIRECTORY) opened elsewhere,
    /// e.g. by the daemon. Throws std::system_error (ENOTDIR) otherwise.
    static OutputDir adopt(UniqueFd fd);

    /// Opens `relative` below this directory, creating missing components
    /// (kDirMode). Every component must be a real directory: a symlink is
    /// ELOOP/ENOTDIR. `relative` must already be checked with
    /// consumer_protocol::isSafeRelativeDir(). Throws std::system_error.
    OutputDir subdir(std::string_view relative) const;

    /// Creates the new file `name` (no '/') in this directory, write-only,
    /// mode kFileMode; an existing file is EEXIST (a trace is never
    /// overwritten). Throws std::system_error.
    UniqueFd createFile(std::string_view name) const;

    int fd() const noexcept { return fd_.get(); }

    /// Renames the entry `from` of this directory to `to` in `toDir`
    /// (renameat(2); `to` must not exist, or be an empty directory).
    /// Throws std::system_error.
    void moveEntry(std::string_view from, const OutputDir& toDir, std::string_view to) const;
    /// True if this directory has an entry `name`.
    bool has(std::string_view name) const noexcept;

private:
    explicit OutputDir(UniqueFd fd) : fd_(std::move(fd)) {}
    UniqueFd fd_;
};

/// An append-only output file that knows its size (the offset of the next
/// packet, as the CTF index wants it). Move-only.
///
/// Writes whose address, length and file offset are all multiples of
/// kDirectAlignment (every packet: ust-ctl pads sub-buffers to whole pages)
/// go with O_DIRECT, from the ring-buffer pages straight to the device;
/// others (metadata, a short remainder) through the page cache. Page-cache
/// writes cost a copy into newly allocated pages, which on a virtual machine
/// can stall for milliseconds, long enough for a tracer writing at full
/// speed to fill its sub-buffers and discard events. A filesystem without
/// direct I/O (fcntl(2) or write(2) answering EINVAL) is written through the
/// page cache only.
class StreamFile {
public:
    /// Creates `name` in `dir` (see OutputDir::createFile).
    StreamFile(const OutputDir& dir, std::string_view name);

    /// Writes must be aligned this much for O_DIRECT (the largest logical
    /// block size of common devices, and the page size on x86-64).
    static constexpr std::size_t kDirectAlignment = 4096;

    /// Writes all `size` bytes at the end, restarting on EINTR and short
    /// writes. `data` may point into a ring-buffer mapping: if the mapping was
    /// truncated under us the kernel reports EFAULT instead of raising
    /// SIGBUS. Throws std::system_error (EFAULT, ENOSPC, EIO, ...); after a
    /// failure the file may hold part of the data and size() says how much.
    void write(const void* data, std::size_t size);

    /// Bytes written so far.
    std::uint64_t size() const noexcept { return size_; }
    /// Closes the file (idempotent); later write() calls throw EBADF.
    void close() noexcept { fd_.reset(); }
    bool isOpen() const noexcept { return fd_.valid(); }

private:
    /// Sets or clears O_DIRECT for the next write; false if it cannot be set.
    bool useDirect(bool on) noexcept;

    UniqueFd fd_;
    std::uint64_t size_ = 0;
    bool direct_ = false;        ///< O_DIRECT is set on fd_ now
    bool directRefused_ = false; ///< the filesystem refused it: never again
};

} // namespace tracectl::consumer
