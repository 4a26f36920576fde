#pragma once
// The methods a scan computes, chosen once for every front end (the CLI's option_resolver, the
// Python module, bindings/common/json_calls.cpp and so npm's defaultMethods): the methods named,
// each checked for its inputs, or the table's defaults for this shape, these inputs and their
// size limits (registry.hpp), with why each other default was left out.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "mano/scan/input_kind.hpp"
#include "mano/scan/registry.hpp"

namespace mano {

// What the choice depends on: rows of `columns` values of `input` (K = classes_of(input,
// columns)), `rows` of them (0: not known yet), the inputs given (method_input bits) and the
// methods named (empty: the defaults).
struct method_request {
    std::size_t columns = 0;
    std::size_t rows = 0;
    input_kind input = input_kind::logits;
    unsigned inputs = needs_logits_only;
    std::vector<method> named;
};

// The methods, in the order named (or table order), and one note per default left out.
struct method_choice {
    std::vector<method> methods;
    std::vector<std::string> notes;
};

// The error line for a method named without its inputs (`missing`: method_input bits), in the
// front end's words; the default is "methods: atc_mc needs source".
using missing_inputs_message = std::function<std::string(method m, unsigned missing)>;

method_choice resolve_methods(const method_request& request, const missing_inputs_message& missing = {});

}  // namespace mano
