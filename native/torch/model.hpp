#pragma once
// A TorchScript classifier on a CPU or CUDA device. The only header of mano's torch front end
// that the rest includes: LibTorch stays inside model.cpp.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace mano {
namespace inference {

struct model_options {
    std::string device = "auto";  // auto | cpu | cuda | cuda:INDEX
    std::string amp = "off";      // off | fp16 | bf16: autocast to this type
};

class model {
public:
    // Loads the TorchScript file and moves it to the device. Throws mano::error naming the file
    // (missing, not TorchScript) or the option (--device, --amp) at fault.
    model(const std::string& path, const model_options& opts);
    ~model();
    model(const model&) = delete;
    model& operator=(const model&) = delete;

    const std::string& path() const noexcept;
    // "cpu" or "cuda:0", and whether host buffers are pinned for asynchronous copies.
    std::string device() const;
    bool on_cuda() const noexcept;
    // `count` host buffers of `floats` floats for input batches; page-locked (pinned) when the
    // model runs on CUDA, so copies to the device need not wait. Valid until the next call.
    std::vector<float*> host_buffers(std::size_t count, std::size_t floats);

    // Runs `n` samples of shape `sample_shape` stored at `batch` (a host buffer) and returns
    // the n x K float32 logits, valid until the next call; `k` receives K. Throws mano::error
    // naming `input` when the model refuses the batch or returns something other than logits.
    const float* forward(const float* batch, std::size_t n, const std::vector<std::size_t>& sample_shape,
                         const std::string& input, std::size_t& k);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace inference
}  // namespace mano
