#include "mano/scan/features.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <Eigen/Dense>

#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"

namespace mano {

namespace {

using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Rows are centred in blocks of about this many features: bounded scratch, GEMM-sized updates.
constexpr std::size_t block_features = 1 << 16;

void require_dim(std::size_t d) {
    if (d == 0) throw error("features need at least 1 column (D >= 1); got 0");
}

}  // namespace

void check_features(const double* rows, std::size_t n, std::size_t d, std::size_t first_row) {
    if (n > 0 && rows == nullptr) throw error("features: null data with " + std::to_string(n) + " rows");
    for (std::size_t i = 0; i < n * d; ++i) {
        if (std::isfinite(rows[i])) continue;
        const char* what = std::isnan(rows[i]) ? "NaN" : rows[i] > 0 ? "+Inf" : "-Inf";
        throw row_input_error(row_input_error::input::features,
                              "row " + std::to_string(first_row + i / d) + ", column " + std::to_string(i % d) +
                                  ": feature is " + what + " (rows and columns count from 0); features must be finite");
    }
}

namespace {

void require_same_dim(std::size_t a, std::size_t b, const char* what) {
    if (a != b)
        throw error(std::string("cannot merge ") + what + " of features with different dimensions (D = " +
                    std::to_string(a) + " and " + std::to_string(b) + "); use the same feature layer for every shard");
}

bool all_finite(const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// Eigenvalues of a symmetric PSD matrix with rounding noise (tiny or negative values) set to 0.
Eigen::VectorXd psd_eigenvalues(Eigen::VectorXd values) {
    const double tol = std::max(values.maxCoeff(), 0.0) * static_cast<double>(values.size()) *
                       std::numeric_limits<double>::epsilon();
    for (Eigen::Index i = 0; i < values.size(); ++i)
        if (values(i) <= tol) values(i) = 0;
    return values;
}

Eigen::MatrixXd psd_sqrt(const Eigen::MatrixXd& s) {
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(s);
    const Eigen::VectorXd root = psd_eigenvalues(eig.eigenvalues()).cwiseSqrt();
    return eig.eigenvectors() * root.asDiagonal() * eig.eigenvectors().transpose();
}

}  // namespace

feature_moments::feature_moments(std::size_t d) : d_(d) {
    require_dim(d);
    mean_.assign(d, 0.0);
    scatter_.assign(d * d, 0.0);
}

void feature_moments::push(const double* rows, std::size_t n, std::optional<std::size_t> first_row) {
    check_features(rows, n, d_, first_row.value_or(n_));
    const std::size_t block_rows = std::max<std::size_t>(64, block_features / d_);
    const auto d = static_cast<Eigen::Index>(d_);
    for (std::size_t first = 0; first < n; first += block_rows) {
        const std::size_t count = std::min(block_rows, n - first);
        const Eigen::Map<const row_matrix> x(rows + first * d_, static_cast<Eigen::Index>(count), d);
        Eigen::RowVectorXd mean = x.colwise().mean();
        row_matrix centred = x.rowwise() - mean;
        // second pass: removes the rounding error of the first mean (corrected two-pass algorithm)
        const Eigen::RowVectorXd residual = centred.colwise().mean();
        mean += residual;
        centred.rowwise() -= residual;
        Eigen::MatrixXd scatter = Eigen::MatrixXd::Zero(d, d);
        scatter.selfadjointView<Eigen::Lower>().rankUpdate(centred.transpose());
        combine(count, mean.data(), scatter.data());
    }
}

void feature_moments::merge(const feature_moments& other) {
    require_same_dim(d_, other.d_, "feature moments");
    combine(other.n_, other.mean_.data(), other.scatter_.data());
}

void feature_moments::combine(std::size_t n, const double* mean, const double* scatter) {
    if (n == 0) return;
    const auto d = static_cast<Eigen::Index>(d_);
    const double na = static_cast<double>(n_), nb = static_cast<double>(n), total = na + nb;
    Eigen::Map<Eigen::VectorXd> mu(mean_.data(), d);
    Eigen::Map<Eigen::MatrixXd> s(scatter_.data(), d, d);
    const Eigen::VectorXd delta = Eigen::Map<const Eigen::VectorXd>(mean, d) - mu;
    // Chan et al.: the union's scatter is both scatters plus the spread between the two means
    s.triangularView<Eigen::Lower>() += Eigen::Map<const Eigen::MatrixXd>(scatter, d, d);
    s.selfadjointView<Eigen::Lower>().rankUpdate(delta, na * nb / total);
    s.triangularView<Eigen::StrictlyUpper>() = s.transpose().triangularView<Eigen::StrictlyUpper>();
    mu += delta * (nb / total);
    n_ += n;
}

std::vector<double> feature_moments::covariance() const {
    if (n_ < 2)
        throw error("a covariance needs at least 2 feature rows; got " + std::to_string(n_));
    std::vector<double> cov(scatter_);
    for (double& x : cov) x /= static_cast<double>(n_ - 1);
    return cov;
}

nlohmann::json feature_moments::to_json() const {
    std::vector<double> upper;  // the scatter matrix is symmetric: its upper triangle, row by row
    upper.reserve(d_ * (d_ + 1) / 2);
    for (std::size_t i = 0; i < d_; ++i)
        for (std::size_t j = i; j < d_; ++j) upper.push_back(scatter_[i * d_ + j]);
    return {{"format", "mano-feature-moments"}, {"version", 1}, {"d", d_},
            {"n", n_}, {"mean", mean_}, {"scatter_upper", upper}};
}

feature_moments feature_moments::from_json(const nlohmann::json& j) {
    try {
        detail::check_state_header(j, "mano-feature-moments", "feature moments state");
        feature_moments m(detail::count_of(j, "d", "feature moments"));
        const std::size_t d = m.d_;
        m.n_ = detail::count_of(j, "n", "feature moments");
        m.mean_ = detail::numbers_of(j, "mean", "feature moments state");
        const auto upper = detail::numbers_of(j, "scatter_upper", "feature moments state");
        if (m.mean_.size() != d || upper.size() != d * (d + 1) / 2)
            throw error("feature moments state: \"mean\" needs " + std::to_string(d) + " values and \"scatter_upper\" " +
                        std::to_string(d * (d + 1) / 2) + " for D = " + std::to_string(d));
        for (std::size_t i = 0, k = 0; i < d; ++i)
            for (std::size_t jj = i; jj < d; ++jj, ++k) m.scatter_[i * d + jj] = m.scatter_[jj * d + i] = upper[k];
        bool sane = all_finite(m.mean_) && all_finite(upper);
        for (std::size_t i = 0; i < d; ++i) sane = sane && m.scatter_[i * d + i] >= 0;
        if (!sane) throw error("feature moments state: non-finite values or a negative variance");
        return m;
    } catch (const nlohmann::json::exception& e) {
        throw error("feature moments state: " + detail::json_error_text(e));
    }
}

double frechet_distance(const feature_moments& source, const feature_moments& target) {
    if (source.dim() != target.dim())
        throw error("the Frechet distance needs source and target features of the same dimension; got D = " +
                    std::to_string(source.dim()) + " and " + std::to_string(target.dim()));
    for (const auto* set : {&source, &target})
        if (set->n() < 2)
            throw error(std::string("the Frechet distance needs at least 2 rows in each set to estimate a covariance; the ") +
                        (set == &source ? "source" : "target") + " has " + std::to_string(set->n()));
    const auto d = static_cast<Eigen::Index>(source.dim());
    const std::vector<double> cov1 = source.covariance(), cov2 = target.covariance();
    const Eigen::Map<const Eigen::MatrixXd> s1(cov1.data(), d, d), s2(cov2.data(), d, d);
    const Eigen::VectorXd diff = Eigen::Map<const Eigen::VectorXd>(source.mean().data(), d) -
                                 Eigen::Map<const Eigen::VectorXd>(target.mean().data(), d);
    // S1 S2 and S1^(1/2) S2 S1^(1/2) share their eigenvalues, and the latter is symmetric PSD even
    // when S1 or S2 is singular: Tr((S1 S2)^(1/2)) is the sum of their square roots.
    const Eigen::MatrixXd root1 = psd_sqrt(s1);
    const Eigen::MatrixXd middle = root1 * s2 * root1;
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(0.5 * (middle + middle.transpose()),
                                                            Eigen::EigenvaluesOnly);
    const double trace_root = psd_eigenvalues(eig.eigenvalues()).cwiseSqrt().sum();
    // a squared distance: only rounding can take it below 0
    const double distance = std::max(0.0, diff.squaredNorm() + s1.trace() + s2.trace() - 2 * trace_root);
    if (!std::isfinite(distance))
        throw error("the Frechet distance of these features overflows double precision (their means or covariances are "
                    "too large to square); scale the features down");
    return distance;
}

class_dispersion::class_dispersion(std::size_t d) : d_(d) { require_dim(d); }

void class_dispersion::push(const double* rows, const std::int64_t* predicted, std::size_t n) {
    check_features(rows, n, d_, n_);
    if (n > 0 && predicted == nullptr) throw error("features: null predicted classes with " + std::to_string(n) + " rows");
    for (std::size_t i = 0; i < n; ++i)
        if (predicted[i] < 0)
            throw error("row " + std::to_string(n_ + i) + ": predicted class is " + std::to_string(predicted[i]) +
                        "; predicted classes are class indices and must be >= 0");
    for (std::size_t i = 0; i < n; ++i) {
        auto& c = classes_[predicted[i]];
        if (c.mean.empty()) c.mean.assign(d_, 0.0);
        c.n += 1;
        const double weight = 1.0 / static_cast<double>(c.n);
        const double* x = rows + i * d_;
        for (std::size_t k = 0; k < d_; ++k) c.mean[k] += (x[k] - c.mean[k]) * weight;  // Welford
    }
    n_ += n;
}

void class_dispersion::merge(const class_dispersion& other) {
    require_same_dim(d_, other.d_, "Dispersion states");
    for (const auto& [label, o] : other.classes_) {
        auto& c = classes_[label];
        if (c.mean.empty()) c.mean.assign(d_, 0.0);
        c.n += o.n;
        const double weight = static_cast<double>(o.n) / static_cast<double>(c.n);
        for (std::size_t k = 0; k < d_; ++k) c.mean[k] += (o.mean[k] - c.mean[k]) * weight;
    }
    n_ += other.n_;
}

double class_dispersion::score() const {
    if (n_ == 0) throw error("no rows: push features and predicted classes before asking for the Dispersion score");
    if (classes_.size() < 2)
        throw error("all rows are predicted as one class; Dispersion needs at least two predicted classes (all " +
                    std::to_string(n_) + " rows are predicted as class " + std::to_string(classes_.begin()->first) + ")");
    const auto d = static_cast<Eigen::Index>(d_);
    Eigen::VectorXd mu = Eigen::VectorXd::Zero(d);
    std::size_t seen = 0;
    for (const auto& entry : classes_) {
        seen += entry.second.n;
        mu += (Eigen::Map<const Eigen::VectorXd>(entry.second.mean.data(), d) - mu) *
              (static_cast<double>(entry.second.n) / static_cast<double>(seen));
    }
    double between = 0;
    for (const auto& entry : classes_)
        between += static_cast<double>(entry.second.n) *
                   (Eigen::Map<const Eigen::VectorXd>(entry.second.mean.data(), d) - mu).squaredNorm();
    if (!(between > 0))
        throw error("every predicted class has the same mean feature vector, so the between-class dispersion is 0 "
                    "and its log is -infinity; check that the features vary between rows");
    if (!std::isfinite(between))
        throw error("the class means of these features are too far apart to square in double precision (the "
                    "between-class dispersion overflows); scale the features down");
    // the authors' code (common/distance.py): log of the between-class dispersion over C' - 1, no 1/N
    return std::log(between / static_cast<double>(classes_.size() - 1));
}

nlohmann::json class_dispersion::to_json() const {
    nlohmann::json classes = nlohmann::json::array();
    for (const auto& [label, c] : classes_) classes.push_back({{"class", label}, {"n", c.n}, {"mean", c.mean}});
    return {{"format", "mano-class-dispersion"}, {"version", 1}, {"d", d_}, {"classes", classes}};
}

class_dispersion class_dispersion::from_json(const nlohmann::json& j) {
    try {
        detail::check_state_header(j, "mano-class-dispersion", "Dispersion state");
        class_dispersion state(detail::count_of(j, "d", "class dispersion"));
        for (const auto& jc : j.at("classes")) {
            const auto label = detail::integer_of(jc.at("class"), "class dispersion", "class",
                                                  std::numeric_limits<std::int64_t>::min(),
                                                  std::numeric_limits<std::int64_t>::max());
            class_stats c{detail::count_of(jc, "n", "class dispersion"), detail::numbers_of(jc, "mean", "class dispersion")};
            if (label < 0 || c.n == 0 || c.mean.size() != state.d_ || !all_finite(c.mean) ||
                !state.classes_.emplace(label, std::move(c)).second)
                throw error("Dispersion state: class " + std::to_string(label) +
                            " needs a label >= 0 that appears once, n >= 1 and " + std::to_string(state.d_) +
                            " finite mean values");
            state.n_ += state.classes_.at(label).n;
        }
        return state;
    } catch (const nlohmann::json::exception& e) {
        throw error("Dispersion state: " + detail::json_error_text(e));
    }
}

}  // namespace mano
