// The nuclear-norm estimators (Nuclear, Nuclear with softrun) against an SVD of the softmax rows
// (Eigen, an independent route), with their states of rows or of a Gram matrix.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <Eigen/SVD>

#include "../support.hpp"

using mano_test::close;
using mano_test::random_logits;

TEST_CASE("nuclear norms of fewer rows than classes keep the rows and match an SVD", "[accumulator]") {
    // sum of singular values of the double softmax rows, from Eigen's SVD of P itself (an independent
    // route: mano uses the eigenvalues of P P^T while N <= K, of P^T P beyond)
    const auto reference = [](const std::vector<float>& q, std::size_t n, std::size_t k) {
        Eigen::MatrixXd p(n, k);
        for (std::size_t i = 0; i < n; ++i) {
            double top = q[i * k], sum = 0;
            for (std::size_t j = 0; j < k; ++j) top = std::max(top, static_cast<double>(q[i * k + j]));
            for (std::size_t j = 0; j < k; ++j) sum += p(i, j) = std::exp(q[i * k + j] - top);
            p.row(i) /= sum;
        }
        const Eigen::JacobiSVD<Eigen::MatrixXd> svd(p);
        return svd.singularValues().sum() / std::sqrt(static_cast<double>(n) * std::min(n, k));
    };
    const std::size_t k = 300;
    const auto q = random_logits(450, k, 3.0, 41);
    mano::options o;
    o.methods = {mano::method::nuclear, mano::method::nuclear_softrun};
    o.norm = mano::normalization::softmax;
    for (const std::size_t n : {1, 7, 299, 300, 301, 450}) {
        INFO("N=" << n << " K=" << k);
        const mano::logits_view view(q.data(), n, k);
        const auto r = mano::score(view, o);
        CHECK(close(*r.value(mano::method::nuclear), reference(q, n, k), 1e-7));  // the kernel's exps are float: ~2e-8
        CHECK(close(*r.value(mano::method::nuclear_softrun), *r.value(mano::method::nuclear), 1e-12));
        // the state holds the rows while N <= K, the Gram matrix beyond; both survive JSON
        mano::accumulator acc(k, o);
        acc.push(view);
        const auto state = acc.to_json();
        CHECK(state.at("methods").at("nuclear").contains(n <= k ? "rows" : "gram"));
        CHECK(close(*mano::accumulator::from_json(state).finalize().value(mano::method::nuclear), *r.value(mano::method::nuclear), 1e-12));
        // two halves merged: rows + rows can become a Gram matrix
        mano::accumulator a(k, o), b(k, o);
        a.push(view.slice(0, n / 2));
        b.push(view.slice(n / 2, n - n / 2));
        a.merge(mano::accumulator::from_json(b.to_json()));
        CHECK(close(*a.finalize().value(mano::method::nuclear), *r.value(mano::method::nuclear), 1e-10));
    }
    mano::accumulator acc(k, o);
    acc.push(mano::logits_view(q.data(), 5, k));
    auto state = acc.to_json();
    state["methods"]["nuclear"]["rows"].erase(state["methods"]["nuclear"]["rows"].begin());
    CHECK_THROWS_WITH(mano::accumulator::from_json(state), Catch::Contains("method nuclear: \"rows\" keeps 1499 values") &&
                                                              Catch::Contains("5 rows of K = 300 need 1500"));
}
