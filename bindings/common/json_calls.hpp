#pragma once
// What the language bindings (bindings/wasm for JavaScript, bindings/python) share: the core's
// calls with options, results, calibrations and sets as JSON text, so that both front ends parse
// and validate them with one piece of code and give the same messages. Each binding only moves
// its arrays into logits views and turns mano::error into its language's exception.

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
nlohmann::json parse_input(const std::string& text, const std::string& kind,
                           std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max());

// What a labeled source set and source features give the options (all optional), as arrays:
// workflow::source_inputs with the feature rows not yet summed into moments.
struct source_inputs : workflow::source_inputs {
    const double* feature_rows_data = nullptr;  // source feature rows, feature_rows x feature_cols
    std::size_t feature_rows = 0, feature_cols = 0;
};

// The full options JSON: `partial` (snake_case keys, any subset) over the defaults, plus what a
// labeled source set teaches: the temperature (when fit_temperature) and the source model of the
// methods that need one (those in `partial`'s methods, or the defaults), and the Frechet source
// feature moments. label_marginal "source" is the source labels' class frequencies.
std::string prepare_options(const std::string& partial, const source_inputs& source);

// An accumulator of rows of `columns` values of the options' input kind (K = classes_of(input, columns)).
accumulator make_accumulator(std::size_t columns, const std::string& options_json);
accumulator accumulator_from_state(const std::string& state_json);

// The report `mano eval --json` prints (without its normalization section).
std::string evaluate(const std::string& sets);

// {"calibration": the file `mano calibrate` writes, "notes": [why a method was left out]}, for
// sets given as results ([{"name", "group"?, "result"}], result.accuracy). The options may carry
// "family": false to keep each set's own softrun branch (default true: one branch chosen for all
// the sets from their softrun variants).
std::string calibrate(const std::string& sets, const std::string& options_json);

// The family workflow (mano/workflow/family.hpp) in JSON. `score(index, pass)` scores set `index` with
// the pass's options ({"pass", "normalization"?, "taylor_order"?, "methods"?} over the options
// the binding resolved for it) and gives back the result's and the options' JSON, or nothing
// when the set cannot be scored (given as a result). sets: [{"name", "group"?}]; family_json:
// workflow::family_options. Returns the scored family's JSON; `warnings` gets why an extra
// Taylor order was left out of a set's choice.
// What a scorer gives back for one pass: the result's and the options' JSON, and the set's labels
// as a JSON list when the pass asked for them ("labels": true), else "".
struct scored_json {
    std::string result, options, labels;
};
using json_scorer = std::function<std::optional<scored_json>(std::size_t index, const std::string& pass)>;
std::string score_family(const std::string& sets, const std::string& family_json, const json_scorer& score,
                         std::vector<std::string>* warnings);

// The same workflow one set at a time (workflow::family_scoring in JSON), for a front end whose
// reads are asynchronous (npm's Worker over Files): next() is {"index", "pass"} or null; answer
// it with give(result, options, labels: the set's labels as a JSON list when the pass asked for
// them, else ""), give_none() (a set given as a result) or fail(message); then
// finish() is {"scored": the scored family, "warnings": [...]}.
class family_run {
public:
    family_run(const std::string& sets, const std::string& family_json);
    std::string next() const;
    void give(const std::string& result_json, const std::string& options_json, const std::string& labels_json);
    void give_none();
    void fail(const std::string& message);
    std::vector<std::string> warnings() const;  // each naming its set
    std::string finish();

private:
    std::vector<std::string> names_;
    workflow::family_scoring run_;
};

// mano eval over a scored family: {"report": what mano eval --json prints, "notes": [...]}.
std::string evaluate_family(const std::string& scored);

// mano calibrate over a scored family: {"calibration", "notes"}.
std::string calibrate_family(const std::string& scored);

// The monitoring rules (mano/workflow/monitoring.hpp) over a timeline: points_json as points_from_json;
// reference > 0: the threshold from that many first points, else `threshold`; slope_json: the
// calibrated line's slope or null. Returns assessment::to_json().
std::string monitor(const std::string& points_json, std::size_t reference, double threshold, const std::string& slope_json);

std::string predict(const std::string& calibration_json, const std::string& result_json, double level);
// Audit mode (mano/audit/ppi.hpp, mano/audit/audit_sample.hpp; docs/audit.md), as `mano audit` and
// `mano predict --audit` run it:
// audit_sample: the rows to label, {"rows": [ascending], "n_rows", "seed"} (seed <= 2^53 - 1);
// audit_file: the same draw as the CSV text mano audit writes (`source` names the logits in its
// comment line); parse_audit: a labeled audit file's text (`file` names it in messages) for a set
// of n_rows x k logits read from `set_name` ("" when it has no name), {"rows": [ascending],
// "labels": [...], "warnings"?}; predict_audited: predict() with "audit" added, from the set's
// result (scored with scoring_options) and the result of its audited rows scored with the same
// options and their labels, the audit carrying `warnings_json` (parse_audit's "warnings", a JSON
// list; "" for none); audit_rows: labeled rows given as lists, {"rows", "labels", "seed"?,
// "n_rows"?} (`name` names them in messages; seed and n_rows as audit_sample gave them, and then
// the rows must be that draw), read as parse_audit reads a file (mano::audit_rows), the same shape
// out.
std::string audit_rows(const std::string& labeled_json, const std::string& name, std::uint64_t n_rows, std::size_t k);
std::string audit_sample(std::uint64_t n_rows, std::uint64_t budget, std::uint64_t seed);
std::string audit_file(std::uint64_t n_rows, std::size_t k, std::uint64_t budget, std::uint64_t seed, const std::string& source);
std::string parse_audit(const std::string& text, const std::string& file, std::uint64_t n_rows, std::size_t k,
                        const std::string& set_name);
std::string predict_audited(const std::string& calibration_json, const std::string& result_json,
                            const std::string& audited_json, double level, const std::string& warnings_json);

// The accuracy a calibration implies for each score in `scores` (a JSON list) of one method:
// [prediction::to_json()], the calibration's own uncertainty only (e.g. to
// draw its prediction band).
std::string predict_scores(const std::string& calibration_json, const std::string& method_name,
                           const std::string& scores, double level);

// The options to score n rows of `columns` values of input kind `input` ("logits", ...) with for a
// calibration's predictions (src/mano/prediction/prediction.hpp, scoring_options; n = 0:
// unknown): {"options", "left_out": [the methods left out by size]}. Refuses an inconsistent
// calibration, another input kind and another K, before any row is scored.
std::string scoring_options(const std::string& calibration_json, std::size_t n, std::size_t columns, const std::string& input);

// The methods computed when none are named, for n rows of `columns` values of input kind `input`
// (K = classes_of(input, columns)) and the inputs named in `inputs_json` (a JSON list of the
// table's input names: "source", "second", ...).
std::string default_methods(std::size_t columns, std::size_t n, const std::string& inputs_json, const std::string& input);

// The estimator table (mano methods --json).
std::string methods();

}  // namespace bindings
}  // namespace mano
