// Trace chunks written to a local folder: each stream a file
// `<traceDir>/<name>` and, for data streams, its CTF index
// `<traceDir>/index/<name>.idx` (index_writer.hpp), reached through
// directory fds only (stream_file.hpp).
#pragma once

#include "output/stream_sink.hpp"
#include "stream_file.hpp"

#include <optional>

namespace tracectl::consumer {

/// A stream file and, for data streams, its index.
class LocalStreamSink final : public StreamSink {
public:
    /// Creates `<dir>/<name>` (and `index/<name>.idx` for data), new files.
    /// Throws std::system_error.
    LocalStreamSink(const OutputDir& dir, std::string_view name, StreamKind kind);

    /// Writes all `paddedBytes` (the padding too, as LTTng's local output
    /// does: the file's packets are whole sub-buffers).
    void write(const void* data, std::size_t paddedBytes, std::size_t contentBytes,
               const IndexEntry* index) override;
    std::uint64_t bytes() const noexcept override { return file_.size(); }
    void close() noexcept override;

private:
    StreamFile file_;
    std::optional<IndexWriter> index_;
};

/// A chunk rooted at a local folder.
class LocalChunk final : public ChunkOutput {
public:
    explicit LocalChunk(OutputDir root) : root_(std::move(root)) {}

    /// Creates `<root>/<traceDir>/` as needed (OutputDir::subdir) and the
    /// stream's files. Throws std::system_error.
    std::unique_ptr<StreamSink> openStream(std::string_view traceDir, std::string_view name,
                                           StreamKind kind) const override;
    /// Unlinks `<traceDir>/<name>` and `<traceDir>/index/<name>.idx`.
    bool removeStream(std::string_view traceDir, std::string_view name) const noexcept override;
    const OutputDir& root() const noexcept { return root_; }

private:
    OutputDir root_;
};

} // namespace tracectl::consumer
