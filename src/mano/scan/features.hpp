#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace mano {

// Streaming mean and covariance of D-dimensional feature rows (e.g. penultimate-layer
// activations). Every push and merge combines centred moments (Chan, Golub, LeVeque), so large
// feature means cost no precision. push() is all-or-nothing: on an error the state is unchanged.
class feature_moments {
public:
    explicit feature_moments(std::size_t d);

    // `n` rows of D features each, row-major. A NaN or infinity is a row_input_error naming its row:
    // `first_row`, or by default the number of rows pushed before, numbers the first of these.
    void push(const double* rows, std::size_t n, std::optional<std::size_t> first_row = {});
    // Adds `other`'s rows (same D required).
    void merge(const feature_moments& other);

    nlohmann::json to_json() const;
    static feature_moments from_json(const nlohmann::json& state);

    std::size_t n() const noexcept { return n_; }
    std::size_t dim() const noexcept { return d_; }
    const std::vector<double>& mean() const noexcept { return mean_; }
    // Unbiased covariance (divides by n - 1, like numpy.cov), D x D row-major; needs n >= 2.
    std::vector<double> covariance() const;

private:
    // Adds a group of `n` rows given by its mean and its D x D scatter matrix (lower half read).
    void combine(std::size_t n, const double* mean, const double* scatter);

    std::size_t d_;
    std::size_t n_ = 0;
    std::vector<double> mean_;
    std::vector<double> scatter_;  // sum_i (x_i - mean)(x_i - mean)^T, D x D, symmetric
};

// Throws row_input_error at the first NaN or infinity of `n` rows of `d` features, naming its row
// (`first_row` numbers the first of these rows in the whole set) and column.
void check_features(const double* rows, std::size_t n, std::size_t d, std::size_t first_row);

// Frechet distance between the Gaussians fitted to two feature sets:
// ||mu1 - mu2||^2 + Tr(S1 + S2 - 2 (S1 S2)^(1/2)). Singular covariances (fewer rows than
// dimensions, constant features) are fine. Needs at least 2 rows in each set.
double frechet_distance(const feature_moments& source, const feature_moments& target);

// Streaming Dispersion score (Xie et al. 2023, "On the Importance of Feature Separability in
// Predicting Out-Of-Distribution Error"): how far apart the features of the predicted classes
// lie. Keeps a count and a mean feature vector per predicted class: O(C' D) memory.
class class_dispersion {
public:
    explicit class_dispersion(std::size_t d);

    // `n` rows of D features each (row-major) and the predicted class of each row (>= 0).
    void push(const double* rows, const std::int64_t* predicted, std::size_t n);
    void merge(const class_dispersion& other);

    nlohmann::json to_json() const;
    static class_dispersion from_json(const nlohmann::json& state);

    std::size_t n() const noexcept { return n_; }
    std::size_t dim() const noexcept { return d_; }
    // Number of distinct predicted classes seen (C').
    std::size_t classes() const noexcept { return classes_.size(); }
    // log( sum_c n_c ||mu_c - mu||^2 / (C' - 1) ); needs at least two predicted classes.
    double score() const;

private:
    struct class_stats {
        std::size_t n = 0;
        std::vector<double> mean;
    };

    std::size_t d_;
    std::size_t n_ = 0;
    std::map<std::int64_t, class_stats> classes_;
};

}  // namespace mano
