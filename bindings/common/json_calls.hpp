#pragma once
// What the language bindings (bindings/wasm for JavaScript, bindings/python) share: the core's
// calls with options, results, calibrations and sets as JSON values (text only at the Embind
// boundary), so that both front ends validate them with one piece of code and give the same
// messages. Each binding only moves its arrays into logits views and turns mano::error into its
// language's exception.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <mano/mano.hpp>

namespace mano {
namespace bindings {

// JSON text given to a binding, parsed as mano's readers parse such a file: refused when it is
// larger than the file kind's limit, nests deeper than 64 levels or has a key twice in one object.
// The Embind layer parses every text it is given here; the Python module, which passes dicts and
// lists, only the texts a user gives (a state, a calibration).
nlohmann::json parse_input(const std::string& text, const std::string& kind,
                           std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max());
nlohmann::json parse_calibration(const std::string& text);  // within the calibration reader's limit
nlohmann::json parse_state(const std::string& text);        // within the state reader's limit

// What a labeled source set and source features give the options (all optional), as arrays:
// workflow::source_inputs with the feature rows not yet summed into moments.
struct source_inputs : workflow::source_inputs {
    const double* feature_rows_data = nullptr;  // source feature rows, feature_rows x feature_cols
    std::size_t feature_rows = 0, feature_cols = 0;
};

// The full options: `partial` (snake_case keys, any subset) over the defaults, plus what a
// labeled source set teaches: the temperature (when fit_temperature) and the source model of the
// methods that need one (those in `partial`'s methods, or the defaults), and the Frechet source
// feature moments. label_marginal "source" is the source labels' class frequencies.
nlohmann::json prepare_options(const nlohmann::json& partial, const source_inputs& source);

// An accumulator of rows of `columns` values of the options' input kind (K = classes_of(input, columns)).
accumulator make_accumulator(std::size_t columns, const nlohmann::json& options);
accumulator accumulator_from_state(const nlohmann::json& state);

// The report `mano eval --json` prints (without its normalization section).
nlohmann::json evaluate(const nlohmann::json& sets);

// {"calibration": the file `mano calibrate` writes, "notes": [why a method was left out]}, for
// sets given as results ([{"name", "group"?, "result"}], result.accuracy). The options may carry
// "family": false to keep each set's own softrun branch (default true: one branch chosen for all
// the sets from their softrun variants).
nlohmann::json calibrate(const nlohmann::json& sets, const nlohmann::json& options);

// What a scorer gives back for one pass: the result and the options it was scored with, and the
// set's labels as a list when the pass asked for them ("labels": true), else null.
struct scored_json {
    nlohmann::json result, options, labels;
};

// The family workflow (mano/workflow/family.hpp) over JSON values: workflow::score_family, the
// one synchronous driver, with `score(index, pass)` scoring set `index` with the pass's options
// ({"pass", "normalization"?, "taylor_order"?, "methods"?} over the options the binding resolved
// for it), nothing when the set cannot be scored (given as a result). sets: [{"name",
// "group"?}]; family: workflow::family_options. Returns the scored family; `warnings` gets why an
// extra Taylor order was left out of a set's choice, each naming its set.
using json_scorer = std::function<std::optional<scored_json>(std::size_t index, const nlohmann::json& pass)>;
nlohmann::json score_family(const nlohmann::json& sets, const nlohmann::json& family, const json_scorer& score,
                            std::vector<std::string>* warnings);

// The same workflow stepped one set at a time (workflow::family_scoring), for a front end whose
// reads are asynchronous (npm's Worker over Files): next() is {"index", "pass"} or null; answer
// it with give(result, options, labels: the set's labels as a list when the pass asked for them,
// else null), give_none() (a set given as a result) or fail(message); then finish() is
// {"scored": the scored family, "warnings": [...]}.
class family_run {
public:
    family_run(const nlohmann::json& sets, const nlohmann::json& family);
    nlohmann::json next() const;
    void give(const nlohmann::json& result, const nlohmann::json& options, const nlohmann::json& labels);
    void give_none();
    void fail(const std::string& message);
    std::vector<std::string> warnings() const;  // each naming its set
    nlohmann::json finish();

private:
    std::vector<std::string> names_;
    workflow::family_scoring run_;
};

// mano eval over a scored family: {"report": what mano eval --json prints, "notes": [...]}.
nlohmann::json evaluate_family(const nlohmann::json& scored);

// mano calibrate over a scored family: {"calibration", "notes"}.
nlohmann::json calibrate_family(const nlohmann::json& scored);

// The monitoring rules (mano/workflow/monitoring.hpp) over a timeline: points as
// points_from_json; reference > 0: the threshold from that many first points, else `threshold`;
// slope: the calibrated line's slope or null. Returns assessment::to_json().
nlohmann::json monitor(const nlohmann::json& points, std::size_t reference, double threshold, const nlohmann::json& slope);

nlohmann::json predict(const nlohmann::json& calibration, const nlohmann::json& result, double level);
// Audit mode (mano/audit/ppi.hpp, mano/audit/audit_sample.hpp; docs/audit.md), as `mano audit` and
// `mano predict --audit` run it:
// audit_sample: the rows to label, {"rows": [ascending], "n_rows", "seed"} (seed <= 2^53 - 1);
// audit_file: the same draw as the CSV text mano audit writes (`source` names the logits in its
// comment line); parse_audit: a labeled audit file's text (`file` names it in messages) for a set
// of n_rows x k logits read from `set_name` ("" when it has no name), {"rows": [ascending],
// "labels": [...], "warnings"?}; predict_audited: predict() with "audit" added, from the set's
// result (scored with scoring_options) and the result of its audited rows scored with the same
// options and their labels, the audit carrying `warnings` (parse_audit's "warnings", a list;
// null for none); audit_rows: labeled rows given as lists, {"rows", "labels", "seed"?,
// "n_rows"?} (`name` names them in messages; seed and n_rows as audit_sample gave them, and then
// the rows must be that draw), read as parse_audit reads a file (mano::audit_rows), the same shape
// out.
nlohmann::json audit_rows(const nlohmann::json& labeled, const std::string& name, std::uint64_t n_rows, std::size_t k);
nlohmann::json audit_sample(std::uint64_t n_rows, std::uint64_t budget, std::uint64_t seed);
std::string audit_file(std::uint64_t n_rows, std::size_t k, std::uint64_t budget, std::uint64_t seed, const std::string& source);
nlohmann::json parse_audit(const std::string& text, const std::string& file, std::uint64_t n_rows, std::size_t k,
                           const std::string& set_name);
nlohmann::json predict_audited(const nlohmann::json& calibration, const nlohmann::json& result,
                               const nlohmann::json& audited, double level, const nlohmann::json& warnings);

// The accuracy a calibration implies for each score in `scores` (a list) of one method:
// [prediction::to_json()], the calibration's own uncertainty only (e.g. to draw its prediction band).
nlohmann::json predict_scores(const nlohmann::json& calibration, const std::string& method_name,
                              const nlohmann::json& scores, double level);

// One method's fit in the user's terms (calibration.hpp): {"link", "equation", "score_range": [low,
// high] on the score's own scale}, for a front end that draws or names it.
nlohmann::json fit_of(const nlohmann::json& calibration, const std::string& method_name);

// The options to score n rows of `columns` values of input kind `input` ("logits", ...) with for a
// calibration's predictions (src/mano/prediction/prediction.hpp, scoring_options; n = 0:
// unknown): {"options", "left_out": [the methods left out by size]}. Refuses an inconsistent
// calibration, another input kind and another K, before any row is scored.
nlohmann::json scoring_options(const nlohmann::json& calibration, std::size_t n, std::size_t columns, const std::string& input);

// The method table's input bits of input names ("source", "second", "features",
// "source_features"; `what` names the list in messages).
unsigned input_bits(const nlohmann::json& names, const std::string& what);

// The methods computed when none are named (mano/scan/resolve.hpp), for n rows of `columns`
// values of input kind `input` (K = classes_of(input, columns)) and the inputs named in `inputs`
// (a list of the table's input names).
nlohmann::json default_methods(std::size_t columns, std::size_t n, const nlohmann::json& inputs, const std::string& input);

// The estimator table (mano methods --json).
nlohmann::json methods();

}  // namespace bindings
}  // namespace mano
