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

// A problem in one of the inputs pushed beside the logits (a second model's logits, features), so
// that a front end can name that input's file rather than the logits'.
class row_input_error : public error {
public:
    enum class input { second, features };
    row_input_error(input which, const std::string& message) : error(message), which(which) {}
    const input which;
};

}  // namespace mano
