// `mano infer` and `mano calibrate --model` in a mano built with LibTorch: they run in
// mano-torch, installed beside mano, which is this command linked with LibTorch.
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include <unistd.h>

#include "cli/commands.hpp"

namespace mano {
namespace cli {

namespace {

std::string torch_binary() {
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) throw error(std::string("cannot find the mano executable's folder (/proc/self/exe: ") + std::strerror(errno) + ")");
    std::string path(self, static_cast<std::size_t>(n));
    return path.substr(0, path.find_last_of('/') + 1) + "mano-torch";
}

[[noreturn]] void hand_over(const std::string& what) {
    const std::string binary = torch_binary();
    execv(binary.c_str(), command_line);
    throw error(what + ": cannot run " + binary + " (" + std::strerror(errno) +
                "), the LibTorch half of mano; build it (cmake --build BUILD --target mano_torch_cli) or reinstall mano");
}

}  // namespace

int run_infer(infer_command&) { hand_over("infer"); }

int run_calibrate_synthesized(calibrate_command&) { hand_over("calibrate --model"); }

}  // namespace cli
}  // namespace mano
