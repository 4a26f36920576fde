// The subcommands of the LibTorch front end, in a mano built without it (native/torch).
#include "cli/commands.hpp"

namespace mano {
namespace cli {

namespace {

[[noreturn]] void unavailable(const std::string& what) {
    throw error(what + ": this mano was built without LibTorch (install libtorch-dev and libstb-dev, then rebuild: "
                       "cmake -DMANO_WITH_TORCH=ON)");
}

}  // namespace

int run_infer(infer_command&) { unavailable("infer"); }

int run_calibrate_synthesized(calibrate_command&) { unavailable("calibrate --model"); }

}  // namespace cli
}  // namespace mano
