// The kernel trace's metadata "channel": no ring buffer (ftrace has none
// for metadata), only the TSDL text the daemon pushes, kept whole and
// written as a plain-text CTF 1.8 metadata file (`<outputDir>/metadata`,
// beginning "/* CTF 1.8 */", which babeltrace2 and Trace Compass read as
// LTTng's packetized metadata). A rotation writes all of it again into the
// new chunk; a snapshot writes all of it into the snapshot's folder.
//
// Threads: the consumer's loop only.
#pragma once

#include "channel_base.hpp"
#include "stream_file.hpp"

#include <optional>
#include <string>

namespace tracectl::consumer {

class KernelMetadataChannel final : public ChannelBase {
public:
    /// Creates the stream `metadata` of `request.outputDir` in `chunk` (empty until the
    /// first PushMetadata), unless `snapshotOnly` (nothing is written then
    /// but snapshots). Throws RequestError(Io).
    KernelMetadataChannel(const ChunkOutput& chunk,
                          const consumer_protocol::CreateKernelChannel& request, bool snapshotOnly);

    std::uint64_t key() const noexcept override { return key_; }
    bool isMetadata() const noexcept override { return true; }
    std::uint32_t streamCount() const noexcept override { return 1; }
    /// Writes the metadata stream of `<outputDir>` whole into `snapshot`.
    /// Throws RequestError(Io).
    std::uint64_t recordSnapshot(const ChunkOutput& snapshot, std::uint64_t) override;
    /// Appends `bytes` (at `offset` == what was pushed so far) to the text and
    /// the file. Throws RequestError (InvalidArgument, Io).
    void pushMetadata(std::uint64_t offset, std::string_view bytes) override;
    void flush() override {}
    /// Opens the metadata stream anew in `chunk` and writes the whole text
    /// there; `switched` once. A write failure closes the stream and is told.
    RotateResult rotate(const std::shared_ptr<const ChunkOutput>& chunk,
                        const std::function<void()>& switched,
                        std::optional<bool> traceWentOn = std::nullopt) noexcept override;
    void drainAndClose(bool) noexcept override { close(); }
    bool traceGoesOn() const noexcept override { return true; }
    consumer_protocol::ChannelFigures figures() const noexcept override;
    void setProgressHook(const std::function<void(std::uint64_t)>&) override {}

private:
    /// A new metadata stream in `chunk`'s outputDir_ holding the whole
    /// text. Throws as ChunkOutput::openStream() and StreamSink::write().
    std::unique_ptr<StreamSink> writeWhole(const ChunkOutput& chunk) const;
    void close() noexcept;

    std::uint64_t key_;
    std::string outputDir_;
    bool snapshotOnly_;
    std::string text_;
    std::unique_ptr<StreamSink> sink_; ///< none: snapshots only, or closed after a failure
    std::uint64_t bytesWritten_ = 0;
    std::uint64_t chunkBytes_ = 0;
};

} // namespace tracectl::consumer
