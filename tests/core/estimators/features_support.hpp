// What the feature-based estimators' tests (test_frechet.cpp, test_dispersion.cpp) share: the
// feature files of tests/data/golden, their reference values (tests/golden/features.json), and
// comparisons.
#pragma once

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <mano/scan/features.hpp>
#include <nlohmann/json.hpp>

#include "../support.hpp"

namespace mano_test::feature_test {

struct features {
    explicit features(const std::string& relative) : file(mano_test::data_path(relative)) {
        REQUIRE(file.view().type() == mano::dtype::float64);
    }
    const double* data() const { return static_cast<const double*>(file.view().data()); }
    std::size_t rows() const { return file.view().rows(); }
    std::size_t dim() const { return file.view().cols(); }
    std::vector<double> copy() const { return {data(), data() + rows() * dim()}; }
    mano_test::npy_file file;
};

inline nlohmann::json golden() {
    std::ifstream in(mano_test::data_path("golden/features.json"));
    REQUIRE(in);
    return nlohmann::json::parse(in);
}

// 1e-6 relative, or 1e-9 absolute for values near 0 (a distance between identical sets)
inline bool matches(double got, double expected) {
    return std::abs(got - expected) <= std::max(1e-6 * std::abs(expected), 1e-9);
}

inline bool all_close(const std::vector<double>& a, const std::vector<double>& b, double rel) {
    if (a.size() != b.size()) return false;
    double scale = 0;
    for (const double x : b) scale = std::max(scale, std::abs(x));
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::abs(a[i] - b[i]) > rel * scale) return false;
    return true;
}

inline mano::feature_moments moments_of(const double* rows, std::size_t n, std::size_t d) {
    mano::feature_moments m(d);
    m.push(rows, n);
    return m;
}

inline mano::feature_moments moments_of(const features& f) { return moments_of(f.data(), f.rows(), f.dim()); }

inline std::vector<std::int64_t> predicted_of(const nlohmann::json& c) { return c.at("predicted").get<std::vector<std::int64_t>>(); }

}  // namespace mano_test::feature_test
