// MaNo: the core against the float64 NumPy reference (tests/golden/make_golden.py) on every SIMD
// architecture this CPU offers, and properties the paper proves or the definitions imply, checked
// on data the reference never saw.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <optional>

#include <nlohmann/json.hpp>

#include "../support.hpp"

using mano_test::close;
using mano_test::random_logits;

namespace {

// sigma rows computed directly from the definitions, in double, for the identity checks.
std::vector<double> normalized_rows(const std::vector<float>& q, std::size_t k, mano::normalization norm,
                                    int order) {
    std::vector<double> out(q.size());
    for (std::size_t i = 0; i < q.size() / k; ++i) {
        double* row = &out[i * k];
        if (norm == mano::normalization::softmax) {
            double m = -INFINITY;
            for (std::size_t c = 0; c < k; ++c) m = std::max(m, double(q[i * k + c]));
            for (std::size_t c = 0; c < k; ++c) row[c] = std::exp(q[i * k + c] - m);
        } else {
            for (std::size_t c = 0; c < k; ++c) {
                double v = 0, term = 1;
                for (int j = 0; j <= order; ++j) {
                    v += term;
                    term *= q[i * k + c] / (j + 1);
                }
                row[c] = v;
            }
            const double lo = *std::min_element(row, row + k);
            for (std::size_t c = 0; c < k; ++c) row[c] -= lo;
        }
        const double total = std::accumulate(row, row + k, 0.0);
        for (std::size_t c = 0; c < k; ++c) row[c] = total > 0 ? row[c] / total : 1.0 / k;
    }
    return out;
}

mano::options options_from(const nlohmann::json& j) {
    mano::options o;
    o.p = j.value("p", o.p);
    o.eta = j.value("eta", o.eta);
    o.taylor_order = j.value("taylor_order", o.taylor_order);
    o.norm = mano::parse_normalization(j.value("normalization", std::string("softrun")));
    o.batch_size = j.value("batch_size", std::int64_t{0});
    if (j.contains("fixed_criterion")) o.criterion = j.at("fixed_criterion").get<double>();
    return o;
}

}  // namespace

TEST_CASE("golden vectors match the NumPy reference on every architecture", "[golden]") {
    const auto cases = mano_test::golden_cases("mano.json");
    REQUIRE(cases.size() >= 40);
    const auto archs = mano_test::kernels_to_test();
    REQUIRE(!archs.empty());
    for (const auto& c : cases) {
        const mano_test::npy_file file(mano_test::data_path(c.at("file").get<std::string>()));
        const auto& expected = c.at("expected");
        for (const auto& arch : archs) {
            INFO("case '" << c.at("name").get<std::string>() << "' on " << arch);
            auto opts = options_from(c.at("options"));
            opts.architecture = arch;
            const auto r = mano::score(file.view(), opts);
            CHECK(r.n == file.reader->rows());
            CHECK(r.k == file.reader->cols());
            CHECK(mano::normalization_name(r.mano->used) == expected.at("normalization").get<std::string>());
            CHECK(close(r.mano->criterion, expected.at("criterion").get<double>(), 1e-6));
            CHECK(close(r.value(mano::method::mano).value(), expected.at("score").get<double>(), 1e-6));
            if (expected.contains("batches")) CHECK(r.mano->batches == expected.at("batches").get<std::size_t>());
        }
    }
}

TEST_CASE("softrun picks softmax only when the criterion is strictly above eta", "[accumulator]") {
    const auto q = random_logits(50, 6, 2.0, 15);
    mano::options o;
    o.criterion = o.eta;
    CHECK(mano::score(mano::logits_view(q.data(), 50, 6), o).mano->used == mano::normalization::taylor);
    o.criterion = std::nextafter(o.eta, 10.0);
    CHECK(mano::score(mano::logits_view(q.data(), 50, 6), o).mano->used == mano::normalization::softmax);
}

TEST_CASE("Theorem 3.2: S^p = 1/K - p(p-1)/K * mean Tsallis entropy", "[invariant]") {
    for (const std::size_t k : {3, 10, 37, 200}) {
        for (const double p : {1.5, 2.0, 4.0, 7.5}) {
            for (const auto norm : {mano::normalization::softmax, mano::normalization::taylor}) {
                const std::size_t n = 150;
                const auto q = random_logits(n, k, 2.5, 7 * k + static_cast<unsigned>(p * 10));
                mano::options o;
                o.p = p;
                o.norm = norm;
                o.taylor_order = 3;
                const auto r = mano::score(mano::logits_view(q.data(), n, k), o);
                const auto sigma = normalized_rows(q, k, norm, 3);
                double mean_tsallis = 0;
                for (std::size_t i = 0; i < n; ++i) {
                    double power_sum = 0;
                    for (std::size_t c = 0; c < k; ++c) power_sum += std::pow(sigma[i * k + c], p);
                    mean_tsallis += (1 - power_sum) / (p * (p - 1)) / n;
                }
                // K * S^p = 1 - p(p-1) * mean H; the right side cancels to ~1e-15 for large K and p,
                // so the comparison is relative with an absolute floor at double rounding level.
                const double lhs = k * std::pow(r.value(mano::method::mano).value(), p), rhs = 1.0 - p * (p - 1) * mean_tsallis;
                INFO("K=" << k << " p=" << p << " " << mano::normalization_name(norm) << " lhs=" << lhs << " rhs=" << rhs);
                CHECK(std::abs(lhs - rhs) <= 1e-6 * lhs + 1e-13);
            }
        }
    }
}

TEST_CASE("one-hot rows give S = K^(-1/p)", "[invariant]") {
    for (const std::size_t k : {2, 10, 1000}) {
        for (const double p : {2.0, 4.0, 7.5}) {
            const std::size_t n = 20;
            std::vector<float> soft(n * k, -1000.0f), taylor(n * k, 0.0f);
            for (std::size_t i = 0; i < n; ++i) {
                soft[i * k + (i % k)] = 0.0f;      // exp(-1000) is exactly 0
                taylor[i * k + (i % k)] = 100.0f;  // every other entry takes the row minimum
            }
            mano::options o;
            o.p = p;
            o.norm = mano::normalization::softmax;
            INFO("K=" << k << " p=" << p);
            CHECK(close(mano::score(mano::logits_view(soft.data(), n, k), o).value(mano::method::mano).value(), std::pow(k, -1.0 / p), 1e-9));
            if (k == 2) continue;  // no Taylor normalization at K = 2 (options.hpp, taylor_defined)
            o.norm = mano::normalization::taylor;
            // the Taylor values are powered in float lanes: float rounding, ~1e-9 here
            CHECK(close(mano::score(mano::logits_view(taylor.data(), n, k), o).value(mano::method::mano).value(), std::pow(k, -1.0 / p), 1e-8));
        }
    }
}

TEST_CASE("uniform rows give S = 1/K and criterion = log K", "[invariant]") {
    for (const std::size_t k : {2, 10, 150, 1000}) {
        const std::size_t n = 30;
        std::vector<float> q(n * k);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t c = 0; c < k; ++c) q[i * k + c] = static_cast<float>(i) * 0.75f - 9.0f;
        for (const auto norm : {mano::normalization::softrun, mano::normalization::softmax, mano::normalization::taylor}) {
            if (k == 2 && norm == mano::normalization::taylor) continue;  // not defined (options.hpp)
            mano::options o;
            o.norm = norm;
            const auto r = mano::score(mano::logits_view(q.data(), n, k), o);
            INFO("K=" << k << " " << mano::normalization_name(norm));
            CHECK(close(r.value(mano::method::mano).value(), 1.0 / k, 1e-9));
            CHECK(close(r.mano->criterion, std::log(double(k)), 1e-9));
        }
    }
}

TEST_CASE("softmax scores and the criterion ignore a constant added to a row", "[invariant]") {
    const std::size_t n = 200, k = 23;
    const auto base = random_logits(n, k, 3.0, 99);
    std::vector<double> q(base.begin(), base.end()), shifted(q);
    std::mt19937 gen(5);
    std::uniform_real_distribution<double> offset(-50, 50);
    for (std::size_t i = 0; i < n; ++i) {
        const double c = offset(gen);
        for (std::size_t j = 0; j < k; ++j) shifted[i * k + j] += c;
    }
    mano::options o;
    o.norm = mano::normalization::softmax;
    const auto a = mano::score(mano::logits_view(q.data(), n, k), o);
    const auto b = mano::score(mano::logits_view(shifted.data(), n, k), o);
    CHECK(close(a.value(mano::method::mano).value(), b.value(mano::method::mano).value(), 1e-6));
    CHECK(close(a.mano->criterion, b.mano->criterion, 1e-6));
}

TEST_CASE("scores lie between 1/K and K^(-1/p), criterion >= log K", "[invariant]") {
    unsigned seed = 1;
    for (const std::size_t k : {2, 5, 64, 333}) {
        for (const double scale : {0.01, 1.0, 10.0, 300.0}) {
            for (const auto norm : {mano::normalization::softrun, mano::normalization::softmax, mano::normalization::taylor}) {
                if (k == 2 && norm == mano::normalization::taylor) continue;  // not defined (options.hpp)
                for (const double p : {1.01, 3.0, 12.0}) {
                    const auto q = random_logits(40, k, scale, ++seed);
                    mano::options o;
                    o.norm = norm;
                    o.p = p;
                    const auto r = mano::score(mano::logits_view(q.data(), 40, k), o);
                    INFO("K=" << k << " scale=" << scale << " p=" << p << " " << mano::normalization_name(norm));
                    CHECK(r.value(mano::method::mano).value() >= 1.0 / k * (1 - 1e-9));
                    CHECK(r.value(mano::method::mano).value() <= std::pow(k, -1.0 / p) * (1 + 1e-9));
                    CHECK(r.value(mano::method::mano).value() >= 0);
                    CHECK(r.value(mano::method::mano).value() <= 1);
                    CHECK(r.mano->criterion >= std::log(double(k)) * (1 - 1e-9));
                }
            }
        }
    }
}

namespace {

// n binary rows [0, z] with z of the given scale, and MaNo of their softmax rows in double from
// the definition: ((1/2N) sum_i (1 - s_i)^p + s_i^p)^(1/p), s_i = sigmoid(z_i).
std::vector<float> binary_rows(std::size_t n, double scale, unsigned seed) {
    auto z = random_logits(n, 1, scale, seed);
    std::vector<float> q(2 * n, 0.0f);
    for (std::size_t i = 0; i < n; ++i) q[2 * i + 1] = z[i] + 1.0f;  // a model that leans to class 1
    return q;
}

double softmax_mano_of_binary(const std::vector<float>& q, double p) {
    double total = 0;
    for (std::size_t i = 0; i < q.size() / 2; ++i) {
        const double s = 1 / (1 + std::exp(-(double(q[2 * i + 1]) - double(q[2 * i]))));
        total += std::pow(1 - s, p) + std::pow(s, p);
    }
    return std::pow(total / double(q.size()), 1 / p);
}

}  // namespace

TEST_CASE("at K = 2 softrun scores the softmax branch and normalization taylor is refused", "[accumulator]") {
    const std::size_t n = 500;
    for (const double scale : {0.5, 2.0, 30.0}) {
        const auto q = binary_rows(n, scale, 71);
        mano::options o;
        o.methods = {mano::method::mano, mano::method::confscore, mano::method::confscore_softrun,
                     mano::method::nuclear, mano::method::nuclear_softrun};
        for (const std::optional<double> fixed : {std::optional<double>{}, std::optional<double>{0.1}}) {
            o.criterion = fixed;  // a criterion below eta: the Taylor branch above K = 2
            const auto r = mano::score(mano::logits_view(q.data(), n, 2), o);
            INFO("scale " << scale << (fixed ? " fixed criterion" : ""));
            CHECK(r.mano->used == mano::normalization::softmax);
            // sigma^p is summed in float lanes: float rounding, as for the golden vectors
            CHECK(close(r.value(mano::method::mano).value(), softmax_mano_of_binary(q, o.p), 1e-6));
            // the softrun baselines read softmax rows: ConfScore's and Nuclear's own values
            CHECK(close(r.value(mano::method::confscore_softrun).value(), r.value(mano::method::confscore).value(), 1e-12));
            CHECK(close(r.value(mano::method::nuclear_softrun).value(), r.value(mano::method::nuclear).value(), 1e-12));
            if (!fixed) CHECK(r.mano->variants.size() == 1);
            if (!fixed) CHECK(r.mano->variants.count("softmax") == 1);
        }
        o.criterion.reset();
        o.norm = mano::normalization::taylor;
        CHECK_THROWS_WITH(mano::score(mano::logits_view(q.data(), n, 2), o),
                          Catch::Contains("normalization taylor is not defined for 2 classes") &&
                              Catch::Contains("mano, confscore_softrun, nuclear_softrun") &&
                              Catch::Contains("use normalization softmax"));
        o.methods = {mano::method::confscore};  // reads no branch: scored as with any normalization
        CHECK(close(mano::score(mano::logits_view(q.data(), n, 2), o).value(mano::method::confscore).value(),
                    mano::score(mano::logits_view(q.data(), n, 2), mano::options{}).value(mano::method::confscore).value(), 1e-15));
    }
}

TEST_CASE("the softrun baselines and the nuclear norms stay within their bounds", "[invariant]") {
    // max_k sigma_ik lies in [1/K, 1] and ||sigma||_* / sqrt(N min(N, K)) in [0, 1] by definition;
    // rows whose Taylor values tie at the minimum, and one-hot rows, are where rounding leaves them
    unsigned seed = 100;
    for (const std::size_t k : {2, 3, 5, 64}) {
        for (const double scale : {0.01, 1.0, 10.0, 300.0, -1.0}) {
            const std::size_t n = 300;
            auto q = random_logits(n, k, std::abs(scale), ++seed);
            if (scale < 0)  // one confident class per row, the others at -1, the Taylor minimum
                for (std::size_t i = 0; i < n; ++i)
                    for (std::size_t c = 0; c < k; ++c) q[i * k + c] = c == i % k ? 40.0f : -1.0f;
            for (const auto norm : {mano::normalization::softrun, mano::normalization::softmax, mano::normalization::taylor}) {
                if (k == 2 && norm == mano::normalization::taylor) continue;
                mano::options o;
                o.norm = norm;
                o.methods = {mano::method::mano, mano::method::confscore, mano::method::nuclear,
                             mano::method::confscore_softrun, mano::method::nuclear_softrun};
                for (const auto& arch : mano::available_architectures()) {
                    o.architecture = arch;
                    const auto r = mano::score(mano::logits_view(q.data(), n, k), o);
                    INFO("K=" << k << " scale=" << scale << " " << mano::normalization_name(norm) << " on " << arch);
                    for (const auto m : {mano::method::confscore, mano::method::confscore_softrun}) {
                        CHECK(r.value(m).value() <= 1.0);
                        CHECK(r.value(m).value() >= 1.0 / double(k));
                    }
                    for (const auto m : {mano::method::nuclear, mano::method::nuclear_softrun}) {
                        CHECK(r.value(m).value() <= 1.0);
                        CHECK(r.value(m).value() >= 0.0);
                    }
                }
            }
        }
    }
}
