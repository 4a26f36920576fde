#pragma once
// The workflow over a family of labeled sets that every front end runs (docs/architecture.md,
// "The workflow"): the scoring passes, the branch of MaNo chosen once for all the sets, and the
// evaluation and calibration of what was scored. family_scoring alone orders the passes (family.cpp
// runs first_pass, variant_passes, add_variant and choose_branch for it); the front ends only read
// rows (a file, an array, a browser File) and answer its requests: the CLI, the Python package
// and npm's synchronous calls through score_family(), the one loop over it; npm's Worker, whose
// reads are asynchronous, steps it one request at a time (next, give) through the bindings.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/calibration/calibration.hpp"
#include "mano/scan/options.hpp"
#include "mano/scan/result.hpp"

namespace mano {
namespace workflow {

// [{"name", "group"?, "result"}] (results as result::to_json writes them) as labeled sets.
std::vector<labeled_set> labeled_sets_from_json(const nlohmann::json& sets);

// What a front end asks of a family of labeled sets.
struct family_options {
    // One softrun branch of MaNo chosen for all the sets (normalization "family"); false keeps
    // the options' own normalization (softrun: each set's own criterion, the paper's literal rule).
    bool family = true;
    // The Taylor orders weighed beside the options' own taylor_order (--taylor-orders).
    std::vector<int> taylor_orders = {2};
    // Label-shifted copies of every set scored from rows (calibrate's; evaluate has none).
    std::optional<label_shift_copies> copies;

    // {"family": bool, "taylor_orders": [...], "label_shift_copies"?: {...}}, every key optional;
    // each order in [1, max_taylor_order].
    static family_options from_json(const nlohmann::json& j);
};

// One scoring pass over the sets: how it changes the options a front end resolved for a set
// (for the set's shape, with the source set).
struct pass {
    // first: every set once; variant: MaNo alone at another Taylor order; rescore: every set on
    // the chosen branch; copy: a label-shifted copy of a set (its `rows`, in this order, repeats
    // included, with their labels). A front end that cannot score a set again (given as a
    // result) tells by it.
    enum class role { first, variant, rescore, copy } kind = role::first;
    std::optional<normalization> norm;
    std::optional<int> taylor_order;
    bool mano_only = false;  // MaNo alone: an extra Taylor order for the branch choice
    // the set's labels are wanted with its result (scored_set::labels): its copies are drawn by class
    bool labels = false;
    std::vector<std::uint64_t> rows;  // a copy's rows of the set
    std::size_t copy = 0;             // which copy of the set

    options apply(options o) const;
    // {"pass": "first" | "variant" | "rescore" | "copy", and the option keys this pass sets:
    // "normalization"?, "taylor_order"?, "methods"?: ["mano"], "correctness_histogram"?: true;
    // "labels"?: true; a copy's "rows" and "copy"}.
    // Every pass but the variants collects the correctness histogram: calibrate fits the
    // correctness model (audits) on it.
    nlohmann::json to_json() const;
};

// The first pass: every set with its options, on softrun for a family (softrun keeps both of
// MaNo's branches, so that one can be chosen afterwards).
pass first_pass(const family_options& f);

// The passes that add the other Taylor orders to each set's MaNo variants, for a family whose
// options (`used`, the first set's) score MaNo; none otherwise, nor where a set has 2 classes
// (`fewest_classes`: the least K of the sets), where the Taylor rows are not defined
// (options.hpp, taylor_defined).
std::vector<pass> variant_passes(const family_options& f, const options& used, std::size_t fewest_classes);

// Puts what a variant pass scored (`variant`: MaNo alone, on one Taylor order) among the MaNo
// variants of the set's first-pass result.
void add_variant(result& first, const pass& p, const result& variant);

// Whether the first pass needs a branch chosen: a family whose options score MaNo.
bool chooses_branch(const family_options& f, const options& used);

// The branch chosen for all the sets from their first-pass variants (choose_normalization), and
// the pass that scores every set on it.
struct branch {
    normalization_choice choice;
    pass rescore;
};
branch choose_branch(const std::vector<labeled_set>& first, const options& used);

// A set as a scorer gives it back: its result, and the options it was scored with; its labels
// when the pass asked for them (pass::labels).
struct scored_set {
    result scores;
    options used;
    std::vector<std::int64_t> labels;
};

// Scores set `index` with pass `p` (p.apply() on the options the front end resolved for that
// set). nullopt: this set cannot be scored (given as a result, not rows); a variant pass then
// leaves it out of the choice, the rescoring keeps its first result, and on the first pass it is
// an error. A mano::error it
// throws from a variant pass leaves that order out of that set's choice (`warn` says so).
using set_scorer = std::function<std::optional<scored_set>(std::size_t index, const pass& p)>;

// Says why something was left out, naming the set by its index.
using set_warning = std::function<void(std::size_t index, const std::string& message)>;

// The sets of one family, scored.
struct scored_family {
    std::vector<labeled_set> sets;   // on the chosen branch when one was chosen
    options used;                    // the options of the first set (the branch included)
    std::optional<normalization_choice> choice;
    std::vector<labeled_set> per_set;  // the first pass, MaNo on each set's own criterion (with a choice)
    std::vector<std::string> notes;    // e.g. which softrun baselines left because a set kept its scan
    std::optional<label_shift_copies> copies;  // when the sets include label-shifted copies

    // {"sets": [{"name", "group"?, "result", "weight"?, "copy_of"?}], "used": options,
    // "notes": [...], "choice"?, "per_set"?, "label_shift_copies"?}
    nlohmann::json to_json() const;
    static scored_family from_json(const nlohmann::json& j);
};

// The whole scoring of a family, one set at a time: the first pass, the variant passes, the
// branch choice and the rescoring on it, then the label-shifted copies (family_options::copies)
// of each set scored from rows, on the family's options. A front end asks next() which set to score with which
// pass, scores it (synchronously or not) and answers with give() or fail(), until next() has
// nothing more; finish() then gives the scored family. `names` and `groups` (same length, "" =
// none) name the sets.
class family_scoring {
public:
    family_scoring(std::vector<std::string> names, std::vector<std::string> groups, family_options f);

    struct request {
        std::size_t index;
        pass p;
    };
    std::optional<request> next() const;  // nullopt: every pass is done
    // The answer to next(): the set scored, or nullopt when it cannot be (given as a result, not
    // rows; an error on the first pass).
    void give(std::optional<scored_set> scored);
    // The scorer failed: on a variant pass that order leaves this set's choice (a warning says
    // so); on another pass it throws mano::error(message).
    void fail(const std::string& message);
    // What was left out and why, by set index, in the order it happened.
    const std::vector<std::pair<std::size_t, std::string>>& warnings() const { return warnings_; }
    scored_family finish();  // once next() is nullopt

private:
    enum class stage { first, variants, rescore, copies, done };
    void advance();         // to the next set of this pass, or the next pass
    void start_rescore();   // the branch chosen from the first pass and its variants
    void keep_given_sets();  // the sets given as results, moved onto the chosen branch
    void start_copies();     // after the last pass over the sets: their copies, or done
    bool final_pass() const;  // this pass's results are the family's (their labels are kept)
    pass copy_pass() const;  // of set_, copy_
    std::vector<std::string> names_, groups_;
    family_options family_;
    stage stage_ = stage::first;
    std::size_t set_ = 0, variant_ = 0, copy_ = 0;
    std::vector<pass> variants_;
    pass rescore_;
    std::vector<std::vector<std::int64_t>> labels_;  // of each set scored from rows (copies are drawn from them)
    std::size_t originals_ = 0;
    scored_family out_;
    std::vector<std::size_t> kept_;  // sets given as results, on the rescoring pass
    std::vector<std::pair<std::size_t, std::string>> warnings_;
};

// family_scoring with a synchronous scorer: a mano::error it throws on a variant pass is fail()'s
// message, on another pass it propagates as it is; each warning goes to `warn` as it happens.
scored_family score_family(const std::vector<std::string>& names, const std::vector<std::string>& groups,
                           const family_options& f, const set_scorer& score, const set_warning& warn);

// mano eval over a scored family: the report, with the branch chosen and MaNo's summary on each
// set's own criterion for comparison (per_set; a line goes to `notes` when it has none).
struct family_evaluation {
    evaluation_report report;
    std::optional<normalization_choice> choice;
    std::optional<evaluation_summary> per_set;

    // report.to_json() with "normalization": choice.to_json() and its "per_set" summary.
    nlohmann::json to_json() const;
};
family_evaluation evaluate(const scored_family& scored, std::vector<std::string>* notes);

// mano calibrate over a scored family: the lines on the scored sets, the branch recorded.
calibration calibrate(const scored_family& scored, std::vector<std::string>* notes);

}  // namespace workflow
}  // namespace mano
