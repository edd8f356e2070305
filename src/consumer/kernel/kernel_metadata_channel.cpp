#include "kernel_metadata_channel.hpp"

#include "common/log.hpp"

#include <system_error>

namespace tracectl::consumer {

namespace cp = consumer_protocol;

KernelMetadataChannel::KernelMetadataChannel(const OutputDir& chunkRoot,
                                             const cp::CreateKernelChannel& request,
                                             bool snapshotOnly)
    : key_(request.key), outputDir_(request.outputDir), snapshotOnly_(snapshotOnly) {
    if (snapshotOnly_)
        return;
    try {
        file_.emplace(writeWhole(chunkRoot));
    } catch (const std::system_error& e) {
        throw RequestError(cp::ErrorKind::Io,
                           "creating " + outputDir_ + "/metadata: " + std::string(e.what()));
    }
}

StreamFile KernelMetadataChannel::writeWhole(const OutputDir& chunkRoot) const {
    StreamFile f(chunkRoot.subdir(outputDir_), "metadata");
    if (!text_.empty())
        f.write(text_.data(), text_.size());
    return f;
}

void KernelMetadataChannel::pushMetadata(std::uint64_t offset, std::string_view bytes) {
    if (offset != text_.size())
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "metadata pushed at offset " + std::to_string(offset) + ", but " +
                               std::to_string(text_.size()) + " bytes were pushed before");
    text_.append(bytes);
    if (!file_)
        return;
    try {
        file_->write(bytes.data(), bytes.size());
        bytesWritten_ += bytes.size();
        chunkBytes_ += bytes.size();
    } catch (const std::system_error& e) {
        file_.reset();
        throw RequestError(cp::ErrorKind::Io,
                           "writing " + outputDir_ + "/metadata: " + std::string(e.what()));
    }
}

std::uint64_t KernelMetadataChannel::recordSnapshot(const OutputDir& snapshotRoot, std::uint64_t) {
    try {
        writeWhole(snapshotRoot);
    } catch (const std::system_error& e) {
        throw RequestError(cp::ErrorKind::Io, "writing the snapshot's " + outputDir_ +
                                                  "/metadata: " + std::string(e.what()));
    }
    return text_.size();
}

ChannelBase::RotateResult KernelMetadataChannel::rotate(const OutputDir& chunkRoot,
                                                        const std::function<void()>& switched,
                                                        std::optional<bool>) noexcept {
    RotateResult r;
    r.expected = 1;
    if (!snapshotOnly_) {
        try {
            file_.emplace(writeWhole(chunkRoot));
            bytesWritten_ += text_.size();
            chunkBytes_ = text_.size();
        } catch (const std::exception& e) {
            file_.reset();
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
