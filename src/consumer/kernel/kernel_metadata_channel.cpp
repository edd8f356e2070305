#include "kernel_metadata_channel.hpp"

#include "common/log.hpp"
#include "output/local_output.hpp"

#include <system_error>

namespace tracectl::consumer {

namespace cp = consumer_protocol;

KernelMetadataChannel::KernelMetadataChannel(const ChunkOutput& chunk,
                                             const cp::CreateKernelChannel& request,
                                             bool snapshotOnly)
    : key_(request.key), outputDir_(request.outputDir), snapshotOnly_(snapshotOnly) {
    if (snapshotOnly_)
        return;
    try {
        sink_ = writeWhole(chunk);
    } catch (const std::exception& e) {
        throw RequestError(cp::ErrorKind::Io,
                           "creating " + outputDir_ + "/metadata: " + std::string(e.what()));
    }
}

std::unique_ptr<StreamSink> KernelMetadataChannel::writeWhole(const ChunkOutput& chunk) const {
    std::unique_ptr<StreamSink> sink =
        chunk.openStream(outputDir_, "metadata", StreamKind::Metadata);
    if (!text_.empty())
        sink->write(text_.data(), text_.size(), text_.size(), nullptr);
    return sink;
}

void KernelMetadataChannel::close() noexcept {
    if (sink_)
        sink_->close();
    sink_.reset();
}

void KernelMetadataChannel::pushMetadata(std::uint64_t offset, std::string_view bytes) {
    if (offset != text_.size())
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "metadata pushed at offset " + std::to_string(offset) + ", but " +
                               std::to_string(text_.size()) + " bytes were pushed before");
    text_.append(bytes);
    if (!sink_)
        return;
    try {
        sink_->write(bytes.data(), bytes.size(), bytes.size(), nullptr);
        bytesWritten_ += bytes.size();
        chunkBytes_ += bytes.size();
    } catch (const std::exception& e) {
        close();
        throw RequestError(cp::ErrorKind::Io,
                           "writing " + outputDir_ + "/metadata: " + std::string(e.what()));
    }
}

std::uint64_t KernelMetadataChannel::recordSnapshot(const ChunkOutput& snapshot, std::uint64_t) {
    try {
        writeWhole(snapshot)->close();
    } catch (const std::exception& e) {
        throw RequestError(cp::ErrorKind::Io, "writing the snapshot's " + outputDir_ +
                                                  "/metadata: " + std::string(e.what()));
    }
    return text_.size();
}

ChannelBase::RotateResult
KernelMetadataChannel::rotate(const std::shared_ptr<const ChunkOutput>& chunk,
                              const std::function<void()>& switched, std::optional<bool>) noexcept {
    RotateResult r;
    r.expected = 1;
    if (!snapshotOnly_) {
        try {
            // The same stream going on (a relay keeps its stream), the
            // whole text again in the new chunk.
            std::unique_ptr<StreamSink> next =
                sink_ ? chunk->continueStream(*sink_, outputDir_, "metadata", StreamKind::Metadata)
                      : chunk->openStream(outputDir_, "metadata", StreamKind::Metadata);
            close();
            if (!text_.empty())
                next->write(text_.data(), text_.size(), text_.size(), nullptr);
            sink_ = std::move(next);
            bytesWritten_ += text_.size();
            chunkBytes_ = text_.size();
        } catch (const std::exception& e) {
            close();
            r.error = outputDir_ + "/metadata in the new chunk: " + e.what();
        }
    }
    switched();
    return r;
}

cp::ChannelFigures KernelMetadataChannel::figures() const noexcept {
    cp::ChannelFigures f;
    f.key = key_;
    f.bytesWritten = bytesWritten_;
    f.chunkBytes = chunkBytes_;
    return f;
}

} // namespace tracectl::consumer
