#include "mano/scan/resolve.hpp"

#include "mano/base/error.hpp"

namespace mano {

namespace {

std::string joined(const std::vector<std::string>& names) {
    std::string text;
    for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
    return text;
}

// Why default `m` is not among the defaults for K classes, N rows and these inputs ("" when it is).
std::string left_out_because(const method_info& m, std::size_t k, std::size_t n, unsigned inputs) {
    if (const unsigned missing = m.needs & ~inputs) return "needs " + joined(input_names(missing));
    if (m.default_max_k != 0 && k > m.default_max_k)
        return "on by default up to " + std::to_string(m.default_max_k) + " classes (K = " + std::to_string(k) + ")";
    if (m.default_max_logits == 0) return "";
    if (n == 0) return "keeps every row: on by default only where the row count is known";
    if (static_cast<double>(n) * static_cast<double>(k) > static_cast<double>(m.default_max_logits))
        return "on by default up to " + std::to_string(m.default_max_logits) + " logits (N x K = " +
               std::to_string(n) + " x " + std::to_string(k) + ")";
    return "";
}

}  // namespace

method_choice resolve_methods(const method_request& request, const missing_inputs_message& missing) {
    const std::size_t k = classes_of(request.input, request.columns);  // refuses a shape the input kind cannot take
    method_choice out;
    if (!request.named.empty()) {
        for (const method m : request.named) {
            if (const unsigned lacks = info_of(m).needs & ~request.inputs)
                throw error(missing ? missing(m, lacks)
                                    : std::string("methods: ") + method_name(m) + " needs " + joined(input_names(lacks)));
            out.methods.push_back(m);
        }
        return out;
    }
    out.methods = default_methods(k, request.rows, request.inputs);
    for (const auto& m : method_table) {
        if (!m.by_default) continue;
        const std::string why = left_out_because(m, k, request.rows, request.inputs);
        if (!why.empty()) out.notes.push_back(std::string(m.name) + " left out: " + why);
    }
    return out;
}

}  // namespace mano
