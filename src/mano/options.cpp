#include "mano/options.hpp"

#include <cmath>
#include <string>

#include "mano/error.hpp"

namespace mano {

const char* normalization_name(normalization n) noexcept {
    switch (n) {
        case normalization::softrun: return "softrun";
        case normalization::softmax: return "softmax";
        case normalization::taylor: return "taylor";
    }
    return "unknown";
}

normalization parse_normalization(const std::string& name) {
    if (name == "softrun") return normalization::softrun;
    if (name == "softmax") return normalization::softmax;
    if (name == "taylor") return normalization::taylor;
    throw error("normalization '" + name + "' is not one of softrun, softmax, taylor");
}

void options::validate() const {
    if (!(std::isfinite(p) && p > 1))
        throw error("p must be a finite number greater than 1 (got " + std::to_string(p) + ")");
    if (!std::isfinite(eta)) throw error("eta must be a finite number");
    if (taylor_order < 1)
        throw error("taylor_order must be at least 1 (got " + std::to_string(taylor_order) + ")");
    if (taylor_order > 170)
        throw error("taylor_order must be at most 170 (1/n! underflows double beyond; got " +
                    std::to_string(taylor_order) + ")");
    if (batch_size < 0)
        throw error("batch_size must be 0 (whole set) or a positive number of rows (got " +
                    std::to_string(batch_size) + ")");
    if (criterion && !std::isfinite(*criterion)) throw error("criterion must be a finite number");
}

}  // namespace mano
