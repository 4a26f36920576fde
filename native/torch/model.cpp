#include "model.hpp"

#include <ATen/autocast_mode.h>
#include <torch/cuda.h>
#include <torch/script.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include <mano/base/error.hpp>

namespace mano {
namespace inference {

namespace {

// LibTorch's messages run over many lines: keep the one that says what went wrong, the first
// of a C++ error (a backtrace follows), the last of a TorchScript one (after its traceback).
std::string one_line(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at <= text.size()) {
        const auto end = std::min(text.find('\n', at), text.size());
        std::string line = text.substr(at, end - at);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
        if (!line.empty()) lines.push_back(line);
        at = end + 1;
    }
    if (lines.empty()) return "no message";
    return text.find("Traceback of TorchScript") != std::string::npos ? lines.back() : lines.front();
}

torch::Device parse_device(const std::string& spec) {
    const bool cuda_here = torch::cuda::is_available();
    if (spec == "auto") return cuda_here ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    if (spec == "cpu") return torch::Device(torch::kCPU);
    int index = 0;
    if (spec != "cuda") {
        std::size_t used = 0;
        const std::string digits = spec.rfind("cuda:", 0) == 0 ? spec.substr(5) : "";
        try {
            index = digits.empty() || digits[0] == '-' ? -1 : std::stoi(digits, &used);
        } catch (const std::exception&) {
            index = -1;
        }
        if (index < 0 || used != digits.size())
            throw error("--device must be auto, cpu, cuda or cuda:INDEX (e.g. cuda:1), got '" + spec + "'");
    }
    if (!cuda_here)
        throw error("--device " + spec +
                    ": CUDA is not available (this LibTorch is CPU-only or no GPU is visible); use --device cpu or auto");
    const auto count = static_cast<int>(torch::cuda::device_count());
    if (index >= count)
        throw error("--device " + spec + ": there " + (count == 1 ? "is 1 CUDA device" : "are " + std::to_string(count) + " CUDA devices") +
                    " (cuda:0 to cuda:" + std::to_string(count - 1) + ")");
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

std::optional<at::ScalarType> parse_amp(const std::string& amp, const torch::Device& device) {
    if (amp == "off") return std::nullopt;
    if (amp == "bf16") return at::kBFloat16;
    if (amp != "fp16") throw error("--amp must be off, fp16 or bf16, got '" + amp + "'");
    if (!device.is_cuda())
        throw error("--amp fp16 needs a CUDA device (LibTorch's CPU kernels lack float16 convolutions); use --amp bf16 "
                    "or off on the CPU");
    return at::kHalf;
}

// Autocast for the calls in this scope only, on the model's device type.
class autocast_scope {
public:
    autocast_scope(std::optional<at::ScalarType> type, const torch::Device& device) : active_(type.has_value()) {
        if (!active_) return;
        cuda_ = device.is_cuda();
        if (cuda_) {
            at::autocast::set_enabled(true);
            at::autocast::set_autocast_gpu_dtype(*type);
        } else {
            at::autocast::set_cpu_enabled(true);
            at::autocast::set_autocast_cpu_dtype(*type);
        }
    }
    ~autocast_scope() {
        if (!active_) return;
        if (cuda_)
            at::autocast::set_enabled(false);
        else
            at::autocast::set_cpu_enabled(false);
        at::autocast::clear_cache();
    }
    autocast_scope(const autocast_scope&) = delete;
    autocast_scope& operator=(const autocast_scope&) = delete;

private:
    bool active_ = false;
    bool cuda_ = false;
};

// The logits in a model's output: a tensor, or the first tensor of a tuple or list (models
// that also return features).
torch::Tensor logits_of(const torch::IValue& out, const std::string& where) {
    if (out.isTensor()) return out.toTensor();
    if (out.isTuple() && !out.toTupleRef().elements().empty() && out.toTupleRef().elements()[0].isTensor())
        return out.toTupleRef().elements()[0].toTensor();
    if (out.isList() && out.toListRef().size() > 0 && out.toListRef()[0].isTensor()) return out.toListRef()[0].toTensor();
    throw error(where + ": the model returned " + out.tagKind() +
                "; mano needs a tensor of N x K logits (or a tuple whose first element is one)");
}

error not_torchscript(const std::string& path, const std::string& why) {
    return error(path + ": not a TorchScript model (" + one_line(why) +
                 "); save one with torch.jit.script(model).save(path) or torch.jit.trace(model, example).save(path)");
}

}  // namespace

struct model::impl {
    std::string path;
    torch::jit::Module module;
    torch::Device device{torch::kCPU};
    std::optional<at::ScalarType> amp;
    torch::Tensor host;    // the input batches' buffers
    torch::Tensor logits;  // the last batch's logits, float32 on the CPU
};

model::model(const std::string& path, const model_options& opts) : impl_(std::make_unique<impl>()) {
    impl_->path = path;
    impl_->device = parse_device(opts.device);
    impl_->amp = parse_amp(opts.amp, impl_->device);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw error(path + ": no such model file (--model takes a TorchScript .pt file)");
    if (std::filesystem::is_directory(path, ec)) throw error(path + ": is a folder; --model takes a TorchScript .pt file");
    try {
        impl_->module = torch::jit::load(path, impl_->device);
    } catch (const c10::Error& e) {
        throw not_torchscript(path, e.what_without_backtrace());
    } catch (const std::exception& e) {
        throw not_torchscript(path, e.what());
    }
    impl_->module.eval();
}

model::~model() = default;

const std::string& model::path() const noexcept { return impl_->path; }

std::string model::device() const { return impl_->device.str(); }

bool model::on_cuda() const noexcept { return impl_->device.is_cuda(); }

std::vector<float*> model::host_buffers(std::size_t count, std::size_t floats) {
    const std::vector<std::int64_t> shape{static_cast<std::int64_t>(count), static_cast<std::int64_t>(floats)};
    if (!impl_->host.defined() || impl_->host.sizes() != c10::IntArrayRef(shape))
        impl_->host = torch::empty(shape, torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(on_cuda()));
    std::vector<float*> out;
    for (std::size_t i = 0; i < count; ++i) out.push_back(impl_->host[static_cast<std::int64_t>(i)].data_ptr<float>());
    return out;
}

const float* model::forward(const float* batch, std::size_t n, const std::vector<std::size_t>& sample_shape,
                            const std::string& input, std::size_t& k) {
    std::vector<std::int64_t> shape{static_cast<std::int64_t>(n)};
    for (const auto extent : sample_shape) shape.push_back(static_cast<std::int64_t>(extent));
    const auto host = torch::from_blob(const_cast<float*>(batch), shape, torch::kFloat32);
    torch::Tensor out;
    try {
        c10::InferenceMode no_autograd;
        // pinned memory lets this copy run asynchronously; the logits' copy back waits for it
        const auto x = impl_->device.is_cuda() ? host.to(impl_->device, /*non_blocking=*/true) : host;
        autocast_scope amp(impl_->amp, impl_->device);
        out = logits_of(impl_->module.forward({x}), impl_->path);
        out = out.to(torch::kCPU, torch::kFloat32).contiguous();
    } catch (const error&) {
        throw;
    } catch (const c10::Error& e) {
        throw error(impl_->path + ": the model failed on a batch of shape " + c10::str(host.sizes()) + " from " + input +
                    " (" + one_line(e.what_without_backtrace()) + ")");
    } catch (const std::exception& e) {
        throw error(impl_->path + ": the model failed on a batch of shape " + c10::str(host.sizes()) + " from " + input +
                    " (" + one_line(e.what()) + ")");
    }
    if (out.dim() != 2 || out.size(0) != static_cast<std::int64_t>(n))
        throw error(impl_->path + ": the model returned a tensor of shape " + c10::str(out.sizes()) + " for " +
                    std::to_string(n) + " inputs from " + input + "; mano needs N x K logits");
    impl_->logits = out;
    k = static_cast<std::size_t>(out.size(1));
    return out.data_ptr<float>();
}

}  // namespace inference
}  // namespace mano
