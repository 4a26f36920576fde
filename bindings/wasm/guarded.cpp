// The failures of the Embind calls, kept for takeError() (guarded.hpp).
#include "guarded.hpp"

#include <emscripten/bind.h>

#include <new>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include <mano/mano.hpp>

namespace mano {
namespace wasm {

namespace {

struct failure {
    const char* kind;  // "input", "format", "memory" or "internal"
    std::string message;
};
std::optional<failure> last_error;

}  // namespace

// Records the exception being handled, for take_error(); one copy serves every binding.
// `error_kind`: what a mano::error means at this call ("input"; "format" for a file's bytes).
[[gnu::noinline]] void record_error(const char* error_kind) {
    try {
        throw;
    } catch (const mano::row_input_error& e) {  // which input: the CLI names its file instead
        const char* which = e.which == mano::row_input_error::input::second ? "second: " : "features: ";
        last_error = failure{"input", which + std::string(e.what())};
    } catch (const mano::error& e) {
        last_error = failure{error_kind, e.what()};
    } catch (const nlohmann::json::exception& e) {
        last_error = failure{"input", std::string("malformed JSON: ") + e.what()};
    } catch (const std::bad_alloc&) {
        last_error = failure{"memory", "out of memory: the WebAssembly heap could not grow (a 32-bit module has at most 2 GiB)"};
    } catch (const std::exception& e) {
        last_error = failure{"internal", std::string("internal error: ") + e.what()};
    } catch (...) {
        last_error = failure{"internal", "internal error: an unknown exception"};
    }
}


std::string take_error() {
    if (!last_error) return {};
    std::string out = nlohmann::json{{"kind", last_error->kind}, {"message", last_error->message}}.dump();
    last_error.reset();
    return out;
}

}  // namespace wasm
}  // namespace mano

EMSCRIPTEN_BINDINGS(mano_errors) { emscripten::function("takeError", &mano::wasm::take_error); }
