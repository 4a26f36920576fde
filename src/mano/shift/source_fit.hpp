#pragma once
// Fitting what the source-based baselines (ATC-MC, ATC-NE, DoC, temperature scaling) learn from
// labeled source validation logits (scan/source_model.hpp); their definitions are in
// docs/methods.md (atc_mc, atc_ne, doc).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/base/parallel.hpp"
#include "mano/scan/logits_view.hpp"
#include "mano/scan/registry.hpp"
#include "mano/scan/source_model.hpp"

namespace mano {

// The fitted temperature lies in [temperature_min, temperature_max]; a source set whose NLL is
// still falling at either bound has no fitted temperature and fit_temperature throws.
constexpr double temperature_min = 1e-3;
constexpr double temperature_max = 1e3;

// The T > 0 minimizing the mean negative log-likelihood of softmax(q / T) at the true labels.
// `architecture`: the kernel that computes it (resolve_architecture's rules; "" the best);
// `parallel`: who runs the passes over the rows (source_rows.hpp: the same numbers either way).
double fit_temperature(const logits_view& logits, const std::int64_t* labels, const std::string& architecture = "",
                       const parallel_for& parallel = run_in_order);

// The ATC threshold on source scores given which source predictions were correct.
double atc_threshold(std::vector<double> scores, const std::vector<bool>& correct);

// Accuracy, ConfScore and both ATC thresholds of labeled source logits under softmax(q / T);
// temperature 1 means no scaling. Of `methods`, those with a fit_source in the method table fit
// theirs too (into source_model::fitted).
source_model fit_source(const logits_view& logits, const std::int64_t* labels, double temperature,
                        const std::vector<method>& methods = {}, const std::string& architecture = "",
                        const parallel_for& parallel = run_in_order);

// Throws mano::error naming the first source row with a label outside [0, K) or a logit that is
// not finite, as fit_source does; fits nothing.
void check_source(const logits_view& logits, const std::int64_t* labels, const parallel_for& parallel = run_in_order);

// The class frequencies of n labels in [0, k): COT's label marginal "source". Throws mano::error
// naming the first label outside [0, k), or when n is 0.
std::vector<double> label_frequencies(const std::int64_t* labels, std::size_t n, std::size_t k);

}  // namespace mano
