#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <mano/mano.hpp>

#include "io/reader.hpp"

namespace mano_test {

inline std::string data_path(const std::string& relative) { return std::string(MANO_TEST_DATA) + "/" + relative; }

// The "cases" array of a golden file in tests/golden/ (written by the generators there).
inline nlohmann::json golden_cases(const std::string& file) {
    std::ifstream in(data_path("golden/" + file));
    if (!in) throw std::runtime_error("cannot open tests/golden/" + file + "; run its generator in tests/golden/");
    return nlohmann::json::parse(in).at("cases");
}

// A whole .npy file in memory, with a view over it.
struct npy_file {
    explicit npy_file(const std::string& path)
        : reader(mano::io::open_matrix(path)), view_storage(reader->read(0, reader->rows())) {}
    std::unique_ptr<mano::io::matrix_reader> reader;
    mano::logits_view view_storage;
    const mano::logits_view& view() const { return view_storage; }
};

inline std::vector<float> random_logits(std::size_t n, std::size_t k, double scale, unsigned seed) {
    std::mt19937_64 gen(seed);
    std::normal_distribution<double> normal(0.0, scale);
    std::vector<float> q(n * k);
    for (auto& x : q) x = static_cast<float>(normal(gen));
    return q;
}

// The kernels to run a test on: every compiled one this CPU runs. The others are named as
// skipped (once per test case), so a run on a machine without, say, AVX-512 says so.
inline std::vector<std::string> kernels_to_test() {
    const auto runs = mano::available_architectures();
    for (const auto& name : mano::compiled_architectures())
        if (std::find(runs.begin(), runs.end(), name) == runs.end())
            WARN("skipped kernel " << name << ": this CPU does not run it");
    return runs;
}

inline bool close(double a, double b, double rel) {
    return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b));
}

}  // namespace mano_test
