#include "output/local_output.hpp"

#include <cerrno>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace tracectl::consumer {

LocalStreamSink::LocalStreamSink(const OutputDir& dir, std::string_view name, StreamKind kind)
    : file_(dir, name) {
    if (kind == StreamKind::Data)
        index_.emplace(dir, name);
}

void LocalStreamSink::write(const void* data, std::size_t paddedBytes, std::size_t,
                            const IndexEntry* index) {
    const std::uint64_t offset = file_.size();
    file_.write(data, paddedBytes);
    if (index != nullptr && index_) {
        IndexEntry e = *index;
        e.offset = offset;
        index_->append(e);
    }
}

void LocalStreamSink::close() noexcept {
    file_.close();
    if (index_)
        index_->close();
}

std::unique_ptr<StreamSink> LocalChunk::openStream(std::string_view traceDir, std::string_view name,
                                                   StreamKind kind) const {
    return std::make_unique<LocalStreamSink>(root_.subdir(traceDir), name, kind);
}

bool LocalChunk::removeStream(std::string_view traceDir, std::string_view name) const noexcept {
    try {
        const OutputDir dir = root_.subdir(traceDir);
        const std::string file(name);
        const bool gone = ::unlinkat(dir.fd(), file.c_str(), 0) == 0 || errno == ENOENT;
        const UniqueFd index(
            ::openat(dir.fd(), "index", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (index)
            (void)::unlinkat(index.get(), (file + ".idx").c_str(), 0);
        return gone;
    } catch (const std::exception&) {
        return false;
    }
}

} // namespace tracectl::consumer
