// COT's exact optimal transport cost against POT's ot.emd2 (tests/golden/make_transport_golden.py),
// bounds and equalities that follow from the problem itself, and its input errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>

#include <mano/kernel/architecture.hpp>
#include <mano/shift/transport.hpp>

#include "mano/kernel/kernel.hpp"

#include "support.hpp"

namespace {

std::vector<double> random_softmax(std::size_t n, std::size_t k, double scale, unsigned seed) {
    const auto q = mano_test::random_logits(n, k, scale, seed);
    std::vector<double> p(n * k);
    for (std::size_t i = 0; i < n; ++i) {
        const auto* row = &q[i * k];
        const double top = *std::max_element(row, row + k);
        double sum = 0;
        for (std::size_t c = 0; c < k; ++c) sum += p[i * k + c] = std::exp(row[c] - top);
        for (std::size_t c = 0; c < k; ++c) p[i * k + c] /= sum;
    }
    return p;
}

std::vector<std::size_t> argmax_rows(const std::vector<double>& p, std::size_t k) {
    std::vector<std::size_t> top(p.size() / k);
    for (std::size_t i = 0; i < top.size(); ++i)
        top[i] = static_cast<std::size_t>(std::max_element(&p[i * k], &p[i * k] + k) - &p[i * k]);
    return top;
}

}  // namespace

TEST_CASE("transport cost matches POT's ot.emd2", "[transport][golden]") {
    const auto cases = mano_test::golden_cases("transport.json");
    REQUIRE(cases.size() >= 18);
    for (const auto& c : cases) {
        INFO("case '" << c.at("name").get<std::string>() << "'");
        const mano_test::npy_file file(mano_test::data_path(c.at("file").get<std::string>()));
        REQUIRE(file.view().type() == mano::dtype::float64);
        const auto cost = mano::transport_cost(static_cast<const double*>(file.view().data()), file.reader->rows(),
                                               file.reader->cols(), c.at("marginal").get<std::vector<double>>());
        CHECK(std::abs(cost - c.at("expected_cost").get<double>()) <= 1e-9);
    }
}

TEST_CASE("transport cost of a hand-solved 2 x 2 problem", "[transport]") {
    const std::vector<double> p = {0.9, 0.1, 0.2, 0.8};
    // each class to the row that favours it: (0.1 + 0.2) / 2
    CHECK(mano::transport_cost(p.data(), 2, 2, {0.5, 0.5}) == Approx(0.15).margin(1e-15));
    // all mass on class 0: (0.1 + 0.8) / 2
    CHECK(mano::transport_cost(p.data(), 2, 2, {1.0, 0.0}) == Approx(0.45).margin(1e-15));
}

TEST_CASE("transport cost at N = 10000 obeys its bounds and equalities", "[transport]") {
    for (const std::size_t k : {10u, 100u}) {
        INFO("K = " << k);
        const std::size_t n = k == 10 ? 10000 : 2000;
        const auto p = random_softmax(n, k, 3.0, 17 + static_cast<unsigned>(k));
        const auto top = argmax_rows(p, k);
        double mean_max = 0;
        std::vector<double> mean_p(k, 0.0), predicted(k, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            mean_max += p[i * k + top[i]] / n;
            predicted[top[i]] += 1.0 / n;
            for (std::size_t c = 0; c < k; ++c) mean_p[c] += p[i * k + c] / n;
        }
        // Every row pays at least 1 - max_c p_ic; sending each row to its argmax pays exactly that
        // and is a feasible plan when the marginal is the predicted-class histogram.
        CHECK(std::abs(mano::transport_cost(p.data(), n, k, predicted) - (1 - mean_max)) <= 1e-12);
        // Between that floor and the independent coupling, which costs 1 - sum_c pi_c mean_i p_ic.
        const std::vector<double> uniform(k, 1.0 / k);
        const double cost = mano::transport_cost(p.data(), n, k, uniform);
        const double independent = 1 - std::inner_product(uniform.begin(), uniform.end(), mean_p.begin(), 0.0);
        CHECK(cost > 1 - mean_max + 1e-6);
        CHECK(cost < independent - 1e-6);
        // The cost does not depend on the order of the rows.
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), std::mt19937(5));
        std::vector<double> shuffled(n * k);
        for (std::size_t i = 0; i < n; ++i) std::copy_n(&p[order[i] * k], k, &shuffled[i * k]);
        CHECK(std::abs(mano::transport_cost(shuffled.data(), n, k, uniform) - cost) <= 1e-12);
    }
}

TEST_CASE("transport cost refuses bad input with a message that says what to fix", "[transport][validation]") {
    const std::vector<double> p = {0.7, 0.2, 0.1, 0.1, 0.1, 0.8, 0.3, 0.3, 0.4};
    const std::vector<double> uniform(3, 1.0 / 3);
    CHECK_THROWS_WITH(mano::transport_cost(p.data(), 0, 3, uniform), Catch::Contains("0 rows"));
    CHECK_THROWS_WITH(mano::transport_cost(p.data(), 9, 1, {1.0}), Catch::Contains("at least 2 columns"));
    CHECK_THROWS_WITH(mano::transport_cost(nullptr, 3, 3, uniform), Catch::Contains("null pointer"));
    CHECK_THROWS_WITH(mano::transport_cost(p.data(), 3, 3, {0.5, 0.5}),
                      Catch::Contains("2 entries") && Catch::Contains("3 columns") && Catch::Contains("one mass per class"));
    CHECK_THROWS_WITH(mano::transport_cost(p.data(), 3, 3, {0.6, -0.1, 0.5}),
                      Catch::Contains("marginal[1]") && Catch::Contains("non-negative"));
    CHECK_THROWS_WITH(mano::transport_cost(p.data(), 3, 3, {0.5, std::numeric_limits<double>::quiet_NaN(), 0.5}),
                      Catch::Contains("marginal[1]") && Catch::Contains("finite"));
    CHECK_THROWS_WITH(mano::transport_cost(p.data(), 3, 3, {0.5, 0.3, 0.1}),
                      Catch::Contains("sums to 0.9") && Catch::Contains("divide it by its sum"));
    CHECK_THROWS_WITH(mano::transport_cost(p.data(), 3, 3, {0.5, 0.3, 0.2 + 1e-8}), Catch::Contains("not 1"));
    CHECK_NOTHROW(mano::transport_cost(p.data(), 3, 3, {0.5, 0.3, 0.2 + 5e-10}));

    auto bad = p;
    bad[2 * 3 + 1] = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH(mano::transport_cost(bad.data(), 3, 3, uniform),
                      Catch::Contains("row 2, column 1") && Catch::Contains("not a probability"));
    bad[2 * 3 + 1] = 3.5;
    CHECK_THROWS_WITH(mano::transport_cost(bad.data(), 3, 3, uniform),
                      Catch::Contains("row 2, column 1 is 3.5") && Catch::Contains("not logits"));
    CHECK_THROWS_WITH(mano::transport_cost(p.data(), std::size_t{1} << 30, 3, uniform), Catch::Contains("too many"));
}

namespace {

// The rows as float, cut into blocks of `block` rows, as an estimator keeps them.
struct float_rows {
    std::vector<float> values;
    mano::row_blocks blocks;
    std::vector<double> widened;  // the float values back in double: the problem the auction solves
    float_rows(const double* p, std::size_t n, std::size_t k, std::size_t block)
        : values(p, p + n * k), widened(values.begin(), values.end()) {
        for (std::size_t first = 0; first < n; first += block)
            blocks.push_back({values.data() + first * k, std::min(block, n - first)});
    }
};

// Every kernel this CPU runs gives the auction's cost of the float rows: within 2e-9 of the exact
// solvers' cost of the same values (its certificate is 1e-9), and returns it.
double auction_cost(const std::vector<double>& p, std::size_t n, std::size_t k, const std::vector<double>& marginal) {
    const float_rows rows(p.data(), n, k, 97);
    const double exact = mano::transport_cost(rows.widened.data(), n, k, marginal);
    double cost = 0;
    for (const auto& arch : mano::available_architectures()) {
        INFO("kernel " << arch);
        cost = mano::transport_cost(rows.blocks, k, marginal, mano::detail::shift_kernels_of(arch));
        CHECK(std::abs(cost - exact) <= 2e-9);
    }
    return cost;
}

}  // namespace

TEST_CASE("the auction on float rows matches POT's ot.emd2 and the exact solvers", "[transport][golden]") {
    for (const auto& c : mano_test::golden_cases("transport.json")) {
        INFO("case '" << c.at("name").get<std::string>() << "'");
        const mano_test::npy_file file(mano_test::data_path(c.at("file").get<std::string>()));
        const auto* data = static_cast<const double*>(file.view().data());
        const std::size_t n = file.reader->rows(), k = file.reader->cols();
        const std::vector<double> p(data, data + n * k);
        const double cost = auction_cost(p, n, k, c.at("marginal").get<std::vector<double>>());
        CHECK(std::abs(cost - c.at("expected_cost").get<double>()) <= 1e-6);
    }
}

TEST_CASE("the auction stays exact and quick on rows with much structure", "[transport]") {
    std::mt19937 random(23);
    for (const std::size_t k : {2u, 10u, 300u}) {
        for (const std::size_t n : {1000u, 997u}) {
            INFO("K = " << k << ", N = " << n);
            std::vector<double> same(n * k), onehot(n * k, 0.0), grid(n * k), flat(n * k);
            const auto base = random_softmax(1, k, 2.0, 5);
            std::uniform_int_distribution<int> level(0, 2);
            std::uniform_real_distribution<double> tiny(0, 1e-6);
            for (std::size_t i = 0; i < n; ++i) {
                std::copy(base.begin(), base.end(), same.begin() + i * k);
                onehot[i * k + (i % 10 == 0 ? random() % k : 0)] = 1;
                double g = 0, f = 0;
                for (std::size_t c = 0; c < k; ++c)
                    g += grid[i * k + c] = level(random) + (c == i % k ? 1 : 0), f += flat[i * k + c] = 1 + tiny(random);
                for (std::size_t c = 0; c < k; ++c) grid[i * k + c] /= g, flat[i * k + c] /= f;
            }
            std::vector<double> frequencies(k);
            for (std::size_t c = 0; c < k; ++c) frequencies[c] = 1.0 + static_cast<double>(c % 3);
            const double total = std::accumulate(frequencies.begin(), frequencies.end(), 0.0);
            for (double& x : frequencies) x /= total;
            for (const auto* rows : {&same, &onehot, &grid, &flat}) {
                auction_cost(*rows, n, k, std::vector<double>(k, 1.0 / static_cast<double>(k)));
                auction_cost(*rows, n, k, frequencies);
            }
        }
    }
}
