#pragma once

#include <string>
#include <vector>

namespace mano {

// Every kernel architecture compiled into this build, best first, whatever the running CPU
// (for example {"avx512", "avx2", "sse4.2", "sse2", "scalar"}; the last is always "scalar",
// but in WebAssembly, whose one kernel is "wasm-simd128").
std::vector<std::string> compiled_architectures();

// The compiled architectures that the running CPU supports, best first.
std::vector<std::string> available_architectures();

// The architecture a given request resolves to: `requested` if not empty, else the MANO_ARCH
// environment variable if set, else the best available. Throws mano::error for an unknown or
// unsupported name, listing the available ones.
std::string resolve_architecture(const std::string& requested);

}  // namespace mano
