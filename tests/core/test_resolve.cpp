// The method resolver every front end calls (src/mano/scan/resolve.hpp): the methods named, checked
// for their inputs, or the table's defaults, with why each other default was left out.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "mano/scan/resolve.hpp"
#include "support.hpp"

namespace {

std::vector<std::string> names(const std::vector<mano::method>& methods) {
    std::vector<std::string> out;
    for (const auto m : methods) out.emplace_back(mano::method_name(m));
    return out;
}

bool has_note(const mano::method_choice& c, const std::string& start) {
    for (const auto& n : c.notes)
        if (n.rfind(start, 0) == 0) return true;
    return false;
}

}  // namespace

TEST_CASE("resolve_methods gives the table's defaults for a shape and its inputs", "[resolve]") {
    for (const std::size_t n : {0u, 100u, 1000000u}) {
        for (const unsigned inputs : {0u, 1u, 3u, 15u}) {
            const auto c = mano::resolve_methods({10, n, mano::input_kind::logits, inputs, {}});
            CHECK(c.methods == mano::default_methods(10, n, inputs));
        }
    }
    // a binary column is K = 2
    CHECK(mano::resolve_methods({1, 50, mano::input_kind::binary_logit, 0, {}}).methods == mano::default_methods(2, 50, 0));
}

TEST_CASE("resolve_methods says why each other default was left out", "[resolve]") {
    const auto none = mano::resolve_methods({10, 100, mano::input_kind::logits, 0, {}});
    CHECK(has_note(none, "atc_mc left out: needs source"));
    CHECK_FALSE(has_note(none, "mano left out"));
    const auto unknown_n = mano::resolve_methods({10, 0, mano::input_kind::logits, 0, {}});
    CHECK(has_note(unknown_n, "cot left out: keeps every row"));
    const auto wide = mano::resolve_methods({mano::nuclear_default_max_k + 1, 10, mano::input_kind::logits, 0, {}});
    CHECK(has_note(wide, "nuclear left out: on by default up to " + std::to_string(mano::nuclear_default_max_k) + " classes"));
    const auto big = mano::resolve_methods({10, mano::cot_default_max_logits, mano::input_kind::logits, 0, {}});
    CHECK(has_note(big, "cot left out: on by default up to " + std::to_string(mano::cot_default_max_logits) + " logits"));
}

TEST_CASE("resolve_methods keeps the methods named, in their order, and refuses one without its inputs", "[resolve]") {
    using mano::method;
    const auto c = mano::resolve_methods({10, 100, mano::input_kind::logits, 0, {method::entropy, method::mano}});
    CHECK(names(c.methods) == std::vector<std::string>{"entropy", "mano"});
    CHECK(c.notes.empty());
    CHECK_THROWS_WITH(mano::resolve_methods({10, 100, mano::input_kind::logits, 0, {method::atc_mc}}),
                      "methods: atc_mc needs source");
    const auto words = [](method m, unsigned) { return std::string("--methods ") + mano::method_name(m) + " needs more"; };
    CHECK_THROWS_WITH(mano::resolve_methods({10, 100, mano::input_kind::logits, 0, {method::atc_mc}}, words),
                      "--methods atc_mc needs more");
    // the shape is checked first, whatever is named
    CHECK_THROWS_WITH(mano::resolve_methods({1, 100, mano::input_kind::logits, 0, {method::mano}}),
                      Catch::Contains("need at least 2 columns"));
}
