#pragma once
// The estimators mano computes, in one table: everything that lists methods (the CLI's method
// list, help and `mano methods`, the default method set, the inputs each method needs, the
// bindings' methods(), the TypeScript names and the dashboard, the report scripts) reads it.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mano {

namespace detail {
// An estimator's implementation: its state, how a block of rows adds to it, merge, its JSON
// section of a state, finalize (estimators/estimator.hpp). Each lives in src/mano/estimators/, made
// by the factory its table row names.
class estimator;
struct estimator_setup;
// The labeled source set, for the estimators that fit something on it (method_info::fit_source):
// its rows, labels and options' T, checked, with the kernel's passes over them
// (shift/source_rows.hpp).
class source_rows;

using estimator_factory = std::unique_ptr<estimator> (*)(const estimator_setup&);
// What an estimator learns from the labeled source set, as JSON kept in source_model::fitted.
using source_fitter = nlohmann::json (*)(const source_rows&);

std::unique_ptr<estimator> make_mano(const estimator_setup&);
std::unique_ptr<estimator> make_confscore(const estimator_setup&);
std::unique_ptr<estimator> make_entropy(const estimator_setup&);
std::unique_ptr<estimator> make_nuclear(const estimator_setup&);
std::unique_ptr<estimator> make_mde(const estimator_setup&);
std::unique_ptr<estimator> make_cot(const estimator_setup&);
std::unique_ptr<estimator> make_atc_mc(const estimator_setup&);
std::unique_ptr<estimator> make_atc_ne(const estimator_setup&);
std::unique_ptr<estimator> make_doc(const estimator_setup&);
std::unique_ptr<estimator> make_agreement(const estimator_setup&);
std::unique_ptr<estimator> make_dispersion(const estimator_setup&);
std::unique_ptr<estimator> make_frechet(const estimator_setup&);
std::unique_ptr<estimator> make_confscore_softrun(const estimator_setup&);
std::unique_ptr<estimator> make_nuclear_softrun(const estimator_setup&);
std::unique_ptr<estimator> make_cott(const estimator_setup&);
nlohmann::json fit_cott(const source_rows&);
std::unique_ptr<estimator> make_mlls(const estimator_setup&);
nlohmann::json fit_mlls(const source_rows&);
std::unique_ptr<estimator> make_cbpe(const estimator_setup&);
nlohmann::json fit_cbpe(const source_rows&);
}  // namespace detail

// The estimators, in the table's order (the order of results, columns and state lists).
enum class method {
    mano, confscore, entropy, nuclear, mde, cot, atc_mc, atc_ne, doc, agreement, dispersion, frechet,
    confscore_softrun, nuclear_softrun, cott, mlls, cbpe
};

// What a method's one number is: a score that rises or falls with accuracy (mapped to accuracy
// by a calibration), or an estimate of the accuracy itself.
enum class method_returns { score, accuracy };

// The inputs besides the target logits (a bit set).
enum method_input : unsigned {
    needs_logits_only = 0,
    needs_source = 1,           // labeled source validation logits (ATC, DoC)
    needs_second = 2,           // a second model's logits on the same inputs (AgreeScore)
    needs_features = 4,         // the target set's penultimate features
    needs_source_features = 8,  // the source set's penultimate features
};

// How the cost grows with N rows of K classes (or D features).
enum class method_cost {
    linear,     // one pass, O(N·K) time, O(K) memory (O(D) with features)
    quadratic,  // O(N·K²) time and O(K²) memory: a Gram matrix (O(N·D²), O(D²) with features)
    keeps_rows  // O(N·K) memory, and a solver over all the rows (COT's exact transport, superlinear
                // in N·K; MLLS's EM, O(N·K) per iteration)
};

// One row of the method table, every fact a named field (the table below builds each row with the
// named setters, so no fact is a position in a list).
struct method_info {
    method id = method::mano;
    const char* name = "";  // as in the JSON result and on the command line
    method_returns returns = method_returns::score;
    unsigned needs = needs_logits_only;  // method_input bits
    // On by default whenever its inputs are given, for K up to default_max_k classes and N·K up to
    // default_max_logits logits (0: no limit); otherwise only when asked for by name.
    bool by_default = true;
    std::size_t default_max_k = 0;
    std::size_t default_max_logits = 0;
    method_cost cost = method_cost::linear;
    // Its estimate leans on the calibration sets' class proportions, so it does not back the
    // recommended estimate of a set whose predicted proportions fall outside them.
    bool assumes_class_proportions = false;
    const char* summary = "";  // one line: what it computes
    // The number its result gives besides the score or accuracy and the standard error (ATC's
    // "threshold", COT's "error"); nullptr: none.
    const char* detail = nullptr;
    detail::estimator_factory make = nullptr;
    // What it fits on the labeled source set (nullptr: nothing of its own; ATC and DoC use
    // source_model's fields).
    detail::source_fitter fit_source = nullptr;
    // Its definition (plain text; p = softmax(q / T) rows, sigma = MaNo's softrun rows) and how
    // it fails: the methods reference (docs/methods.md) is generated from these.
    const char* formula = "";
    const char* fails = "";
    // How many K x K Gram matrices an accumulator of it keeps: the threaded scan caps its threads
    // so that their total stays bounded (host/scan.cpp).
    unsigned gram_matrices = 0;
    // It reads MaNo's softrun rows (sigma): under a branch chosen for a family of sets it is
    // calibrated only where every set was scored on that branch (normalization_choice.cpp), and a
    // prediction leaves it out where the set took the other branch (prediction.cpp).
    bool on_softrun_branch = false;
    // Its result carries the score of each softrun branch (MaNo's variants, result.hpp), from
    // which a family's normalization is chosen (normalization_choice.cpp).
    bool softrun_variants = false;
    // Its estimate is the label-shift regime's: predictions use it on sets the label-shift check
    // accepts, with the model it fitted on the source (prediction.cpp, label_shift_check.hpp).
    bool estimates_label_shift = false;

    constexpr method_info needing(unsigned inputs) const { auto m = *this; m.needs = inputs; return m; }
    constexpr method_info opt_in() const { auto m = *this; m.by_default = false; return m; }
    constexpr method_info by_default_up_to(std::size_t k, std::size_t logits) const {
        auto m = *this; m.default_max_k = k; m.default_max_logits = logits; return m;
    }
    constexpr method_info costing(method_cost c) const { auto m = *this; m.cost = c; return m; }
    constexpr method_info assuming_class_proportions() const { auto m = *this; m.assumes_class_proportions = true; return m; }
    constexpr method_info reporting(const char* number) const { auto m = *this; m.detail = number; return m; }
    constexpr method_info fitting_on_source(detail::source_fitter f) const { auto m = *this; m.fit_source = f; return m; }
    constexpr method_info keeping_gram_matrices(unsigned n) const { auto m = *this; m.gram_matrices = n; return m; }
    constexpr method_info reading_softrun_rows() const { auto m = *this; m.on_softrun_branch = true; return m; }
    constexpr method_info with_softrun_variants() const { auto m = *this; m.softrun_variants = true; return m; }
    constexpr method_info estimating_label_shift() const { auto m = *this; m.estimates_label_shift = true; return m; }
    constexpr method_info summarized(const char* text) const { auto m = *this; m.summary = text; return m; }
    constexpr method_info defined_by(const char* text) const { auto m = *this; m.formula = text; return m; }
    constexpr method_info fails_when(const char* text) const { auto m = *this; m.fails = text; return m; }
};

// A row with what every method has; the setters above add the rest.
constexpr method_info row(method id, const char* name, method_returns returns, detail::estimator_factory make) {
    method_info m;
    m.id = id;
    m.name = name;
    m.returns = returns;
    m.make = make;
    return m;
}


// The nuclear norms sum a K x K Gram matrix, O(N K^2): beyond this many classes they are opt-in
// only, so that the default set stays within 10x MaNo alone (whole `mano score` processes on
// 2e7 float32 logits, 2 cores, measured: 7x at K = 64, 8.5x at K = 100; docs/benchmarks/speed.md).
inline constexpr std::size_t nuclear_default_max_k = 100;
// The methods that keep every row solve a transport problem: up to this many classes by
// successive shortest paths over the classes (transport.cpp), whose time is bounded by N K^2
// whatever the data (at 2e6 logits on one core, measured: 1.3 s at K = 10 and 2.7 s at K = 100
// on rows built to be hard, 7.5 s at K = 128); beyond, by an epsilon-scaling auction whose time
// depends on the data (shift/transport.hpp). So they are defaults, and run in predictions, only up
// to this many classes.
inline constexpr std::size_t keeps_rows_max_k = 100;
inline constexpr std::size_t cot_default_max_k = keeps_rows_max_k;
// The methods that keep every row (COT, COTT: all N x K rows, and a solver of ~100 bytes per
// pair) run only up to this many logits where nobody asked for them by name for this set: in the
// default set (for a set of known size) and in predictions from a calibration
// (calibration.hpp, scoring_options). Asked for by name, they run at any size.
inline constexpr std::size_t keeps_rows_max_logits = 2'000'000;
inline constexpr std::size_t cot_default_max_logits = keeps_rows_max_logits;

inline constexpr method_info method_table[] = {
    row(method::mano, "mano", method_returns::score, &detail::make_mano)
        .with_softrun_variants()
        .summarized("MaNo: the L_p norm of the softrun-normalized prediction matrix (Xie et al., NeurIPS 2024)")
        .defined_by("S = ((1/NK) Σ_ik σ_ik^p)^(1/p); σ = softmax(q) when Φ > η, else the Taylor rows (Σ_{j≤n} q^j/j! − row min) / row sum; Φ = −(1/NK) Σ_ik log softmax(q)_ik. "
                 "At K = 2 σ = softmax(q), a binary model's own probabilities, whatever Φ: there the smaller Taylor value is the row min, so the paper's Taylor rows are one-hot ([0, 1] or [1, 0]) on every row and S would read its maximum 2^(−1/p) on every set (the softrun ConfScore 1); `--normalization taylor` is refused at K = 2")
        .fails_when("A model that is confidently wrong (confident collapse) scores high as its accuracy falls; sets scored on different softrun branches are on different scales (calibrate with the family normalization); the score moves with the class mix under label shift."),
    row(method::confscore, "confscore", method_returns::score, &detail::make_confscore)
        .summarized("ConfScore: the mean maximum softmax probability")
        .defined_by("(1/N) Σ_i max_k p_ik")
        .fails_when("Overconfident models make it optimistic, more so the larger the shift; confident collapse fools it completely."),
    row(method::entropy, "entropy", method_returns::score, &detail::make_entropy)
        .summarized("Entropy: the mean softmax entropy in nats (falls as accuracy rises)")
        .defined_by("(1/N) Σ_i −Σ_k p_ik log p_ik")
        .fails_when("As ConfScore: it trusts the model's confidence (it falls as accuracy rises)."),
    row(method::nuclear, "nuclear", method_returns::score, &detail::make_nuclear)
        .by_default_up_to(nuclear_default_max_k, 0)
        .costing(method_cost::quadratic)
        .assuming_class_proportions()
        .keeping_gram_matrices(1)
        .summarized("Nuclear: the nuclear norm of the softmax matrix over sqrt(N·min(N, K)) (Deng et al., 2023)")
        .defined_by("‖P‖_* / √(N·min(N, K)), P the N×K matrix of rows p_i, ‖·‖_* the sum of its singular values")
        .fails_when("Assumes the calibration sets' class proportions: label shift moves it with no change in accuracy (predictions use MLLS instead on sets that pass the label-shift check: docs/cli.md, Regimes). O(N K²) time."),
    row(method::mde, "mde", method_returns::score, &detail::make_mde)
        .summarized("MDE: the mean energy's distance to the log-sum-exp of the energies (Peng et al., 2024); compare sets of equal size")
        .defined_by("LSE_i(E_i) − (1/N) Σ_i E_i, with the energies E_i = −LSE_k(q_ik / T)")
        .fails_when("Grows with the number of rows (log N enters through the LSE over rows): compare or calibrate sets of equal size only."),
    row(method::cot, "cot", method_returns::accuracy, &detail::make_cot)
        .by_default_up_to(cot_default_max_k, cot_default_max_logits)
        .costing(method_cost::keeps_rows)
        .assuming_class_proportions()
        .reporting("error")
        .summarized("COT: 1 - the optimal transport cost from the label marginal to the softmax rows (Lu et al., NeurIPS 2023)")
        .defined_by("1 − min_π Σ_ci π_ci (1 − p_ic), over transport plans π from the label marginal (uniform by default) to the N rows p_i of mass 1/N each")
        .fails_when("Assumes the label marginal: under label shift it charges the model for the class mix (predictions use MLLS instead on sets that pass the label-shift check: docs/cli.md, Regimes). Keeps every row (O(N K) memory) and solves an exact transport problem."),
    row(method::atc_mc, "atc_mc", method_returns::accuracy, &detail::make_atc_mc)
        .needing(needs_source)
        .reporting("threshold")
        .summarized("ATC-MC: the share of rows whose maximum softmax clears a threshold fitted on the source (Garg et al., 2022)")
        .defined_by("(1/N) Σ_i [max_k p_ik ≥ t], t the first of the source's distinct scores, ascending, with the smallest |#incorrect above t − #correct at or below t| (the source's share then matches its accuracy)")
        .fails_when("Trusts the model's confidence as ConfScore does, through the source's threshold: confident collapse fools it."),
    row(method::atc_ne, "atc_ne", method_returns::accuracy, &detail::make_atc_ne)
        .needing(needs_source)
        .reporting("threshold")
        .summarized("ATC-NE: ATC on the negative entropy")
        .defined_by("(1/N) Σ_i [Σ_k p_ik log p_ik ≥ t], t fitted on the source as for ATC-MC")
        .fails_when("As ATC-MC: it trusts the model's confidence (its entropy) through the source's threshold, so confident collapse fools it."),
    row(method::doc, "doc", method_returns::accuracy, &detail::make_doc)
        .needing(needs_source)
        .summarized("DoC: the source accuracy minus the drop in mean confidence (Guillory et al., 2021)")
        .defined_by("acc_source − (conf_source − conf), conf the mean max_k p_ik, clipped to [0, 1]")
        .fails_when("Assumes confidence falls one for one with accuracy; overconfidence under shift makes it optimistic."),
    row(method::agreement, "agreement", method_returns::accuracy, &detail::make_agreement)
        .needing(needs_second)
        .summarized("AgreeScore: the share of rows where a second model predicts the same class")
        .defined_by("(1/N) Σ_i [argmax_k q_ik = argmax_k q'_ik], q' a second model's logits on the same inputs")
        .fails_when("Two models that fail the same way agree while wrong: optimistic on shifts both models share."),
    row(method::dispersion, "dispersion", method_returns::score, &detail::make_dispersion)
        .needing(needs_features)
        .summarized("Dispersion: the log spread of the features' class means, by predicted class (Xie et al., 2023)")
        .defined_by("log( Σ_c n_c ‖μ_c − μ‖² / (C' − 1) ), μ_c the mean feature of the n_c rows predicted c, μ the overall mean, C' the classes predicted")
        .fails_when("Undefined with fewer than 2 predicted classes, unstable when predictions collapse onto a few."),
    row(method::frechet, "frechet", method_returns::score, &detail::make_frechet)
        .needing(needs_features | needs_source_features)
        .costing(method_cost::quadratic)
        .summarized("Frechet: the Frechet distance between the source and target feature distributions (Deng and Zheng, 2021)")
        .defined_by("‖μ_s − μ‖² + Tr(Σ_s + Σ − 2 (Σ_s Σ)^(1/2)), over the source and target feature means and covariances")
        .fails_when("Measures how far the features moved, not whether the move hurts: a benign shift can move it as much as a harmful one."),
    row(method::confscore_softrun, "confscore_softrun", method_returns::score, &detail::make_confscore_softrun)
        .reading_softrun_rows()
        .summarized("ConfScore on MaNo's softrun normalization instead of softmax")
        .defined_by("(1/N) Σ_i max_k σ_ik")
        .fails_when("As ConfScore, and MaNo's branch caveat."),
    row(method::nuclear_softrun, "nuclear_softrun", method_returns::score, &detail::make_nuclear_softrun)
        .by_default_up_to(nuclear_default_max_k, 0)
        .costing(method_cost::quadratic)
        .assuming_class_proportions()
        .keeping_gram_matrices(2)
        .reading_softrun_rows()
        .summarized("Nuclear on MaNo's softrun normalization instead of softmax")
        .defined_by("‖σ‖_* / √(N·min(N, K)), σ the N×K softrun rows")
        .fails_when("As Nuclear, and MaNo's branch caveat."),
    row(method::cott, "cott", method_returns::accuracy, &detail::make_cott)
        .needing(needs_source)
        .opt_in()
        .costing(method_cost::keeps_rows)
        .assuming_class_proportions()
        .reporting("threshold")
        .fitting_on_source(&detail::fit_cott)
        .summarized("COTT: 1 - the mass COT's plan moves at a cost above a threshold fitted on the source (Lu et al., NeurIPS 2023)")
        .defined_by("1 − Σ_ci π_ci [1 − p_ic > t], π COT's optimal plan, t the cost above which the source's plan moves a mass equal to the source error")
        .fails_when("As COT (the label marginal, every row kept), and it needs a labeled source set."),
    row(method::mlls, "mlls", method_returns::accuracy, &detail::make_mlls)
        .estimating_label_shift()
        .needing(needs_source)
        .by_default_up_to(keeps_rows_max_k, keeps_rows_max_logits)
        .costing(method_cost::keeps_rows)
        .reporting("iterations")
        .fitting_on_source(&detail::fit_mlls)
        .summarized("MLLS: the mean prior-adjusted probability of the predicted class, the class priors re-estimated by EM on posteriors calibrated on the source (Saerens et al., 2002)")
        .defined_by("P_i = softmax(a log p_i + b), a and b minimizing the source NLL (bias-corrected temperature scaling; b = 0 beyond 100 classes); EM from w = 1: Q_ik = w_k P_ik / Σ_j w_j P_ij, w_k = (1/N) Σ_i Q_ik / π_k (π the source class frequencies; add-½ counts and b = 0 when a class has no source rows), until no prior moves by 1e-10 (at most 20000 iterations, else a warning); accuracy (1/N) Σ_i Q_{i,argmax_k q_ik}, priors (1/N) Σ_i Q_i")
        .fails_when("Right only under label shift (the class mix moves, each class's inputs do not): on corrupted inputs the source calibration is overconfident and so is MLLS; predictions use it only on sets the label-shift check accepts. Keeps every row (O(N K) memory) and iterates over them."),
    row(method::cbpe, "cbpe", method_returns::accuracy, &detail::make_cbpe)
        .needing(needs_source)
        .fitting_on_source(&detail::fit_cbpe)
        .summarized("CBPE: the mean calibrated confidence, the temperature fitted on the source (NannyML's confidence-based performance estimation)")
        .defined_by("(1/N) Σ_i max_k P_ik, P = softmax(a log p), a minimizing the source NLL (temperature scaling on top of T)")
        .fails_when("Right only where the source calibration holds (label shift); overconfident on corrupted inputs, as ConfScore."),
};
inline constexpr int method_count = static_cast<int>(std::size(method_table));

constexpr bool method_table_in_order() {
    for (int i = 0; i < method_count; ++i)
        if (static_cast<int>(method_table[i].id) != i) return false;
    return true;
}
static_assert(method_table_in_order(), "method_table lists the methods in the order of enum class method");

inline constexpr const method_info& info_of(method m) { return method_table[static_cast<int>(m)]; }

constexpr int label_shift_methods() {
    int n = 0;
    for (const auto& m : method_table) n += m.estimates_label_shift ? 1 : 0;
    return n;
}
static_assert(label_shift_methods() == 1, "exactly one method estimates the label-shift regime");
// The method whose estimate is the label-shift regime's (MLLS).
constexpr method label_shift_method() {
    for (const auto& m : method_table)
        if (m.estimates_label_shift) return m.id;
    return method::mano;
}
inline const char* method_name(method m) noexcept { return info_of(m).name; }
// Throws mano::error listing the known names.
method parse_method(const std::string& name);

// The methods on by default for K classes, N rows and the given inputs (method_input bits), in
// table order. N = 0 means not known yet (an accumulator, fed rows later): a method with a
// default_max_logits (one that keeps every row) is then left out, so that a default stream's
// memory stays bounded; ask for it by name to keep the rows.
std::vector<method> default_methods(std::size_t k, std::size_t n = 0, unsigned inputs = needs_logits_only);

// "score" or "accuracy"; "linear", "quadratic" or "keeps_rows"; the input names of a bit set
// ("source", "second", "features", "source_features").
const char* returns_name(method_returns r) noexcept;
const char* cost_name(method_cost c) noexcept;
std::vector<std::string> input_names(unsigned inputs);

// The table as JSON ({"methods": [{"name", "returns", "needs", "default", "default_max_k"?,
// "default_max_logits"?, "cost", "assumes_class_proportions", "summary", "formula", "fails",
// "detail"?, "fits_on_source", "gram_matrices", "on_softrun_branch", "softrun_variants",
// "estimates_label_shift"}]}): `mano methods --json` and the bindings' methods().
nlohmann::json methods_json();

}  // namespace mano
