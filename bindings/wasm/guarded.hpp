#pragma once
// How every Embind call of the package fails (bindings/wasm/bindings.cpp, formats_bindings.cpp):
// nothing throws into JavaScript; a failure returns an empty value and leaves its kind and message
// for takeError(), because a C++ exception reaching JS is an opaque number and skips the
// destructors of the frames it leaves. And how bytes from JS cross into memory the core reads.
#include <emscripten/val.h>

#include <cstddef>
#include <string>
#include <vector>

namespace mano {
namespace wasm {

// Records the exception being handled, for take_error(); one copy serves every binding.
// `error_kind`: what a mano::error means at this call ("input"; "format" for a file's bytes).
void record_error(const char* error_kind);

// "" when the last call succeeded, else {"kind": "input"|"format"|"memory"|"internal", "message": ...}.
std::string take_error();

template <class F>
auto guarded(F&& f, const char* error_kind = "input") -> decltype(f()) {
    try {
        return f();
    } catch (...) {
        record_error(error_kind);
    }
    return decltype(f())();
}

// Copies the bytes of a Uint8Array into `into` (resized to hold them).
template <class T>
const T* copy_in(const emscripten::val& bytes, std::vector<T>& into) {
    const auto length = bytes["length"].as<std::size_t>();
    into.resize((length + sizeof(T) - 1) / sizeof(T));
    emscripten::val(emscripten::typed_memory_view(length, reinterpret_cast<unsigned char*>(into.data()))).call<void>("set", bytes);
    return into.data();
}

}  // namespace wasm
}  // namespace mano
