#include "mano/architecture.hpp"

#include <cstdlib>

#include <xsimd/config/xsimd_cpuid.hpp>

#include "mano/detail/kernel.hpp"
#include "mano/error.hpp"
#include "mano/text.hpp"

namespace mano {
namespace detail {

#define MANO_DECLARE_KERNEL(name)                                                          \
    void run_rows_##name(const float* rows_f, const double* rows_d, std::size_t count,     \
                         std::size_t k, const kernel_params& params, float* scratch,    \
                         row_stats* out, const row_outputs& rows_out);
#ifdef MANO_KERNEL_AVX512
MANO_DECLARE_KERNEL(avx512)
#endif
#ifdef MANO_KERNEL_AVX2
MANO_DECLARE_KERNEL(avx2)
#endif
#ifdef MANO_KERNEL_SSE4_2
MANO_DECLARE_KERNEL(sse4_2)
#endif
#ifdef MANO_KERNEL_SSE2
MANO_DECLARE_KERNEL(sse2)
#endif
#ifdef MANO_KERNEL_WASM
MANO_DECLARE_KERNEL(wasm)
#endif
#undef MANO_DECLARE_KERNEL

const std::vector<kernel_entry>& compiled_kernels() {
    static const std::vector<kernel_entry> kernels = {
#ifdef MANO_KERNEL_AVX512
        {"avx512", [] { auto a = xsimd::available_architectures(); return a.avx512bw && a.fma3_avx2; },
         &run_rows_avx512},
#endif
#ifdef MANO_KERNEL_AVX2
        {"avx2", [] { return static_cast<bool>(xsimd::available_architectures().fma3_avx2); },
         &run_rows_avx2},
#endif
#ifdef MANO_KERNEL_SSE4_2
        {"sse4.2", [] { return static_cast<bool>(xsimd::available_architectures().sse4_2); },
         &run_rows_sse4_2},
#endif
#ifdef MANO_KERNEL_SSE2
        {"sse2", [] { return static_cast<bool>(xsimd::available_architectures().sse2); },
         &run_rows_sse2},
#endif
#ifdef MANO_KERNEL_WASM
        {"wasm-simd128", [] { return true; }, &run_rows_wasm},
#endif
    };
    return kernels;
}

}  // namespace detail

std::vector<std::string> available_architectures() {
    std::vector<std::string> names;
    for (const auto& kernel : detail::compiled_kernels())
        if (kernel.supported()) names.emplace_back(kernel.name);
    return names;
}

std::string resolve_architecture(const std::string& requested) {
    std::string name = requested;
    std::string origin = "architecture option";
    if (name.empty()) {
        const char* env = std::getenv("MANO_ARCH");
        if (env != nullptr && *env != '\0') {
            name = env;
            origin = "MANO_ARCH environment variable";
        }
    }
    const auto available = available_architectures();
    if (available.empty()) throw error("no compiled SIMD kernel runs on this CPU");
    if (name.empty() || name == "auto") return available.front();
    for (const auto& a : available)
        if (a == name) return a;
    std::string list;
    for (const auto& a : available) list += (list.empty() ? "" : ", ") + a;
    bool compiled = false;
    for (const auto& kernel : detail::compiled_kernels()) compiled |= (name == kernel.name);
    throw error(origin + " '" + printable(name, 60) + "' " +
                (compiled ? "is not supported by this CPU" : "is not a known architecture") +
                "; available here: " + list);
}

}  // namespace mano
