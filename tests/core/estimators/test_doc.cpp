// DoC: the estimate stays an accuracy where the source and target confidences are far apart.
#include <catch2/catch.hpp>

#include <mano/shift/source_fit.hpp>

#include "../support.hpp"

TEST_CASE("DoC's accuracy stays in [0, 1] where the confidence gap would carry it out", "[source]") {
    // A source set confident and always wrong (accuracy 0, confidence ~1) and a target of flat rows
    // (confidence 1/3): source accuracy - (source confidence - target confidence) is about -2/3.
    const std::size_t n = 30, k = 3;
    std::vector<float> source(n * k, 0.0f), target(n * k, 0.0f);
    std::vector<std::int64_t> labels(n);
    for (std::size_t i = 0; i < n; ++i) {
        source[i * k + i % k] = 20.0f;
        labels[i] = static_cast<std::int64_t>((i + 1) % k);
    }
    mano::options o;
    o.methods = {mano::method::doc};
    o.source = mano::fit_source(mano::logits_view(source.data(), n, k), labels.data(), 1.0);
    REQUIRE(o.source->accuracy == 0.0);
    mano::accumulator acc(k, o);
    acc.push(mano::logits_view(target.data(), n, k));
    CHECK(acc.finalize()[mano::method::doc]->value == 0.0);
}
