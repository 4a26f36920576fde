#pragma once

#include <stdexcept>
#include <string>

namespace mano {

// Every problem caused by user input (bad logits, shapes, options, state) is reported as a
// mano::error whose message names what is at fault and, where possible, how to fix it.
class error : public std::runtime_error {
public:
    explicit error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace mano
