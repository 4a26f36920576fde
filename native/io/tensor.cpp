#include "io/reader.hpp"

#include "io/detail.hpp"

namespace mano {
namespace io {

tensor_reader::tensor_reader(const std::string& path) : path_(path) {
    using namespace detail;
    auto file = std::make_shared<const file_handle>(path);
    if (file->size() == 0) fail(path, "is empty");
    file_stream in(file, 0, file->size(), path);
    const npy_header h = read_npy_header(path, in, file->size());
    const auto e = npy_element(h.descr);
    if (!e || e->kind != scalar_kind::floating || e->size != 4)
        fail(path, "has dtype '" + printable(h.descr, 60) + "'; model inputs must be float32 (save x.astype(np.float32))");
    if (h.shape.empty()) fail(path, "holds a scalar; model inputs need a first axis of samples, e.g. N x C x H x W");
    if (h.fortran && h.shape.size() > 1)
        fail(path, "is in Fortran order; save model inputs in C order (np.ascontiguousarray(x))");
    check_npy_data_size(path, h, e->size, file->size());
    if (h.shape[0] == 0) fail(path, "has no samples (its shape is " + shape_text(h.shape) + ")");
    sample_size_ = 1;
    for (std::size_t i = 0; i < h.shape.size(); ++i) {
        shape_.push_back(static_cast<std::size_t>(h.shape[i]));
        if (i > 0) sample_size_ *= shape_.back();
    }
    if (sample_size_ == 0) fail(path, "has empty samples (its shape is " + shape_text(h.shape) + ")");
    offset_ = h.data_offset;
    swap_ = e->swap;
    file_ = std::move(file);
}

void tensor_reader::read(std::size_t first, std::size_t count, float* out) const {
        if (first + count > samples())
        detail::fail(path_, "samples " + std::to_string(first) + " to " + std::to_string(first + count) +
                                " asked for, but the file has " + std::to_string(samples()));
    const std::uint64_t bytes = static_cast<std::uint64_t>(sample_size_) * 4;
    file_->read_at(offset_ + first * bytes, out, static_cast<std::size_t>(count * bytes));
    if (swap_) detail::swap_bytes(out, count * sample_size_, 4);
}

}  // namespace io
}  // namespace mano
