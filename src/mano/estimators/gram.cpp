#include "mano/estimators/gram.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <Eigen/Eigenvalues>

#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {
namespace detail {

namespace {

using row_major = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double sum_of_roots(const Eigen::MatrixXd& symmetric) {
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(symmetric, Eigen::EigenvaluesOnly);
    // rounding can make zero eigenvalues slightly negative
    return solver.eigenvalues().cwiseMax(0.0).cwiseSqrt().sum();
}

}  // namespace

void gram_sum::to_gram(std::vector<double> buffer) {
    if (!gram_.empty()) return;
    gram_ = std::move(buffer);
    gram_.assign(k_ * k_, 0.0);
    if (rows_ > 0) kernel_(kept_.data(), rows_, k_, gram_.data());
    kept_.clear();
    kept_.shrink_to_fit();
}

void gram_sum::add(const double* rows, std::size_t count) {
    if (count == 0) return;
    if (gram_.empty() && rows_ + count <= k_) {
        kept_.insert(kept_.end(), rows, rows + count * k_);
    } else {
        to_gram();
        kernel_(rows, count, k_, gram_.data());
    }
    rows_ += count;
}

void gram_sum::add(const gram_sum& other) {
    if (other.gram_.empty()) {
        add(other.kept_.data(), other.rows_);
        return;
    }
    to_gram();
    for (std::size_t i = 0; i < gram_.size(); ++i) gram_[i] += other.gram_[i];
    rows_ += other.rows_;
}

double gram_sum::nuclear(std::size_t n) const {
    double total;
    if (gram_.empty()) {
        // the kept rows: the eigenvalues of P P^T (rows_ x rows_)
        const Eigen::Map<const row_major> p(kept_.data(), static_cast<Eigen::Index>(rows_), static_cast<Eigen::Index>(k_));
        total = rows_ == 0 ? 0.0 : sum_of_roots(p * p.transpose());
    } else {
        const auto kk = static_cast<Eigen::Index>(k_);
        const Eigen::Map<const Eigen::MatrixXd> g(gram_.data(), kk, kk);
        total = sum_of_roots(g.selfadjointView<Eigen::Lower>());
    }
    // at most 1 for rows of Euclidean norm at most 1 (||P||_* <= sqrt(rank) ||P||_F): the
    // eigensolver's rounding must not push balanced one-hot rows above it
    return std::min(1.0, total / std::sqrt(static_cast<double>(n) * static_cast<double>(std::min(n, k_))));
}

nlohmann::json gram_sum::to_json() const {
    if (gram_.empty()) return {{"rows", kept_}};
    return {{"gram", gram_}};
}

gram_sum gram_sum::from_json(const nlohmann::json& j, std::size_t k, std::size_t n, const std::string& what,
                             gram_kernel kernel, bool zero_rows) {
    gram_sum g(k, kernel);
    g.rows_ = n;
    if (j.contains("gram")) {
        g.gram_ = detail::numbers_in(j.at("gram"), what + "\"gram\"");
        if (g.gram_.size() != k * k)
            throw error(what + "\"gram\" has " + std::to_string(g.gram_.size()) + " values; K = " + std::to_string(k) +
                        " needs " + std::to_string(k * k));
        // sums of products of probabilities: each in [0, n]; only the upper triangle is kept
        // (row-major, as the Gram kernel writes it), and since each row sums to 1 the whole
        // symmetric matrix sums to n
        const double top = static_cast<double>(n) * (1 + 1e-9) + 1e-9;
        double total = 0;
        for (std::size_t a = 0; a < k; ++a)
            for (std::size_t b = 0; b < k; ++b) {
                const double x = g.gram_[a * k + b];
                if (!(x >= 0 && x <= top)) throw error(what + "\"gram\" holds " + number_text(x) + ", outside [0, n]");
                if (b < a && x != 0)
                    throw error(what + "\"gram\" has values below its diagonal, where mano keeps none (a transposed matrix?)");
                total += b == a ? x : 2 * x;
            }
        const double rows = static_cast<double>(n);
        if (!(total <= rows * (1 + 1e-5) && (zero_rows || total >= rows * (1 - 1e-5))))
            throw error(what + "\"gram\" sums to " + number_text(total) + " where n = " + std::to_string(n) +
                        " probability rows give n");
    } else {
        g.kept_ = detail::numbers_of(j, "rows", what);
        if (g.kept_.size() != n * k || n > k)
            throw error(what + "\"rows\" keeps " + std::to_string(g.kept_.size()) + " values; " + std::to_string(n) +
                        " rows of K = " + std::to_string(k) + " need " + std::to_string(n * k) +
                        (n > k ? ", and more rows than K are kept as a Gram matrix" : ""));
        for (const double x : g.kept_)
            if (!(x >= 0 && x <= 1)) throw error(what + "\"rows\" holds " + number_text(x) + ", not a probability");
        for (std::size_t r = 0; r < n; ++r) {
            double sum = 0;
            for (std::size_t c = 0; c < k; ++c) sum += g.kept_[r * k + c];
            if (!(std::abs(sum - 1) <= 1e-5 || (zero_rows && sum == 0)))
                throw error(what + "\"rows\" holds a row that sums to " + number_text(sum) + ", not a probability row");
        }
    }
    return g;
}

}  // namespace detail
}  // namespace mano
