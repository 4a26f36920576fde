// The nuclear norms' Gram update (kernel/gram_impl.hpp), each compiled architecture against
// plain double sums of double products: every entry of the upper triangle to double rounding,
// nothing else written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "mano/kernel/kernel.hpp"
#include "support.hpp"

TEST_CASE("each architecture's Gram update adds P^T P's upper triangle to double rounding", "[gram]") {
    // nonnegative terms summed in another order (blocks, FMA): within n * 2^-53 relative
    const double unit = std::ldexp(1.0, -52);
    std::mt19937 gen(7);
    std::exponential_distribution<double> expo(1.0);
    const auto runs = mano_test::kernels_to_test();
    for (const auto& kernel : mano::detail::compiled_kernels()) {
        if (std::find(runs.begin(), runs.end(), kernel.name) == runs.end()) continue;
        for (const std::size_t k : {1, 2, 5, 17, 33, 100, 257}) {
            for (const std::size_t n : {1, 3, 31, 300, 1100}) {
                INFO(kernel.name << " K=" << k << " N=" << n);
                std::vector<double> p(n * k);
                for (std::size_t i = 0; i < n; ++i) {
                    double sum = 0;
                    for (std::size_t j = 0; j < k; ++j) sum += p[i * k + j] = std::pow(expo(gen), 3.0);
                    for (std::size_t j = 0; j < k; ++j) p[i * k + j] /= sum;
                }
                // the lower triangle holds a mark that must stay
                std::vector<double> gram(k * k, 0.0);
                for (std::size_t a = 0; a < k; ++a)
                    for (std::size_t b = 0; b < a; ++b) gram[a * k + b] = 0.25;
                kernel.gram(p.data(), n, k, gram.data());
                std::size_t bad = 0;
                for (std::size_t a = 0; a < k; ++a) {
                    for (std::size_t b = 0; b < k; ++b) {
                        const double got = gram[a * k + b];
                        if (b < a) {
                            bad += got != 0.25;
                            continue;
                        }
                        double want = 0;
                        for (std::size_t i = 0; i < n; ++i) want += p[i * k + a] * p[i * k + b];
                        bad += !(std::abs(got - want) <= (static_cast<double>(n) + 2) * unit * want);
                    }
                }
                CHECK(bad == 0);
            }
        }
    }
}
