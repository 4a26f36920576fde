// The raw WebAssembly surface of the core, bound with Embind. web/src/ builds the JS API on it
// (option objects, typed arrays in, plain objects out). Nothing here throws into JavaScript
// (guarded.hpp); the file-header rules are bound in formats_bindings.cpp.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <mano/mano.hpp>

#include "guarded.hpp"
#include "json_calls.hpp"

namespace {

using emscripten::val;
using mano::wasm::copy_in;
using mano::wasm::guarded;
using nlohmann::json;
namespace api = mano::bindings;

// JSON text from JavaScript, parsed under mano's limits (the core's calls take values).
json in(const std::string& text, const std::string& kind) { return api::parse_input(text, kind); }

// The one scratch area inputs cross into: JS hands over a byte view of each chunk, and it is
// copied into memory the core reads. Sized by the largest chunk seen, so it stops growing once
// the JS side's fixed chunk size is reached.
struct scratch_area {
    std::vector<double> logits, second, features;  // doubles: 8-byte aligned for every dtype
    std::vector<std::int32_t> labels32;
    std::vector<std::int64_t> labels;
};
scratch_area scratch;

mano::dtype parse_dtype(const std::string& name) {
    if (name == "float32") return mano::dtype::float32;
    if (name == "float64") return mano::dtype::float64;
    if (name == "float16") return mano::dtype::float16;
    if (name == "bfloat16") return mano::dtype::bfloat16;
    throw mano::error("dtype must be float32, float64, float16 or bfloat16 (got '" + name + "')");
}

mano::logits_view view_of(const double* data, const std::string& type, std::size_t rows, std::size_t cols) {
    switch (parse_dtype(type)) {
        case mano::dtype::float32: return mano::logits_view(reinterpret_cast<const float*>(data), rows, cols);
        case mano::dtype::float64: return mano::logits_view(data, rows, cols);
        case mano::dtype::float16:
            return mano::logits_view(reinterpret_cast<const std::uint16_t*>(data), mano::dtype::float16, rows, cols);
        case mano::dtype::bfloat16:
            return mano::logits_view(reinterpret_cast<const std::uint16_t*>(data), mano::dtype::bfloat16, rows, cols);
    }
    throw mano::error("unknown dtype");
}

const std::int64_t* labels_of(const val& bytes) {
    copy_in(bytes, scratch.labels32);
    scratch.labels.assign(scratch.labels32.begin(), scratch.labels32.end());
    return scratch.labels.data();
}

class raw_accumulator {
public:
    explicit raw_accumulator(mano::accumulator a) : acc_(std::move(a)) {}

    // `rows` logits rows of `type` as bytes; labels (Int32 bytes), a second model's logits (same
    // type and shape) and feature rows (float64 bytes, `feature_cols` wide) may be null.
    bool push(const val& logits, std::size_t rows, const std::string& type, const val& labels, const val& second,
              const val& features, std::size_t feature_cols, double first_row) {
        return guarded([&] {
            const auto target = view_of(copy_in(logits, scratch.logits), type, rows, acc_.columns());
            mano::row_inputs extra;
            extra.first_row = static_cast<std::size_t>(first_row);
            std::optional<mano::logits_view> second_view, feature_view;
            if (!labels.isNull()) extra.labels = labels_of(labels);
            if (!second.isNull()) {
                second_view = view_of(copy_in(second, scratch.second), type, rows, acc_.columns());
                extra.second = &*second_view;
            }
            if (!features.isNull()) {
                feature_view = mano::logits_view(copy_in(features, scratch.features), rows, feature_cols);
                extra.features = &*feature_view;
            }
            acc_.push(target, extra);
            return true;
        });
    }
    // as_shard: `other`'s own rows come in as the shard its state names (Accumulator.merge);
    // otherwise they join this one's, as the chunks of one source do (scoreStream)
    bool merge(const raw_accumulator& other, bool as_shard) {
        return guarded([&] {
            if (as_shard)
                acc_.merge_as_shard(other.acc_);
            else
                acc_.merge(other.acc_);
            return true;
        });
    }
    std::string result() const { return guarded([&] { return acc_.finalize().to_json().dump(); }); }
    std::string state() const { return guarded([&] { return acc_.to_json().dump(); }); }
    std::unique_ptr<raw_accumulator> clone() const {
        return guarded([&] { return std::make_unique<raw_accumulator>(acc_); });
    }
    double rows() const { return static_cast<double>(acc_.rows()); }
    double cols() const { return static_cast<double>(acc_.columns()); }  // of a pushed row
    std::string architecture() const { return acc_.architecture(); }

private:
    mano::accumulator acc_;
};

std::unique_ptr<raw_accumulator> make_accumulator(std::size_t columns, const std::string& options_json) {
    return guarded([&] { return std::make_unique<raw_accumulator>(api::make_accumulator(columns, in(options_json, "options"))); });
}

std::unique_ptr<raw_accumulator> accumulator_from_state(const std::string& state_json) {
    return guarded([&] { return std::make_unique<raw_accumulator>(api::accumulator_from_state(api::parse_state(state_json))); });
}

// api::prepare_options with the source set's arrays as bytes (null: not given).
std::string prepare_options(const std::string& partial, const val& source_logits, std::size_t rows, std::size_t cols,
                            const std::string& type, const val& source_labels, bool fit_temperature,
                            const val& source_features, std::size_t feature_cols) {
    return guarded([&] {
        api::source_inputs source;
        source.source_option = "options.source";
        source.marginal_option = "labelMarginal";
        source.fit_temperature = fit_temperature;
        std::optional<mano::logits_view> view;
        if (!source_logits.isNull()) {
            view = view_of(copy_in(source_logits, scratch.logits), type, rows, cols);
            source.logits = &*view;
            if (!source_labels.isNull()) source.labels = labels_of(source_labels);
        }
        if (!source_features.isNull()) {
            source.feature_rows_data = copy_in(source_features, scratch.features);
            source.feature_cols = feature_cols;
            if (feature_cols > 0)
                source.feature_rows = source_features["length"].as<std::size_t>() / (sizeof(double) * feature_cols);
        }
        return api::prepare_options(in(partial, "options"), source).dump();
    });
}

std::string evaluate(const std::string& sets) { return guarded([&] { return api::evaluate(in(sets, "sets")).dump(); }); }

// The family workflow one set at a time (api::family_run): the package answers each request of
// next() with give, giveNone or fail, synchronously over arrays and one awaited read at a time
// over Files. JS never runs inside these frames, so no JS exception crosses them.
class raw_family_run {
public:
    explicit raw_family_run(api::family_run run) : run_(std::move(run)) {}
    std::string next() const { return guarded([&] { return run_.next().dump(); }); }
    // labels_json: "" when the pass did not ask for them
    bool give(const std::string& result_json, const std::string& options_json, const std::string& labels_json) {
        return guarded([&] {
            const json result = in(result_json, "result"), options = in(options_json, "options");
            return run_.give(result, options, labels_json.empty() ? json(nullptr) : in(labels_json, "labels")), true;
        });
    }
    bool give_none() { return guarded([&] { return run_.give_none(), true; }); }
    bool fail(const std::string& message) { return guarded([&] { return run_.fail(message), true; }); }
    std::string finish() { return guarded([&] { return run_.finish().dump(); }); }

private:
    api::family_run run_;
};

// The family workflow over arrays by the core's one synchronous driver (api::score_family): `score(index,
// pass JSON)` gives {result, options, labels ("": not asked for)} as JSON texts, null (a set given as a
// result), {error} (an InputError: a variant pass leaves that order out) or {abort} (rethrown by the caller).
std::string score_family(const std::string& sets, const std::string& family, const val& score) {
    return guarded([&] {
        std::vector<std::string> warnings;
        const auto scorer = [&](std::size_t index, const json& pass) -> std::optional<api::scored_json> {
            const val got = score(static_cast<double>(index), pass.dump());
            if (got.isNull()) return std::nullopt;
            if (!got["abort"].isUndefined()) throw std::runtime_error("the scorer failed");
            if (!got["error"].isUndefined()) throw mano::error(got["error"].as<std::string>());
            const json result = in(got["result"].as<std::string>(), "result");
            const json options = in(got["options"].as<std::string>(), "options");
            const std::string labels = got["labels"].as<std::string>();
            return api::scored_json{result, options, labels.empty() ? json(nullptr) : in(labels, "labels")};
        };
        const json scored = api::score_family(in(sets, "sets"), in(family, "family options"), scorer, &warnings);
        return json{{"scored", scored}, {"warnings", warnings}}.dump();
    });
}

std::unique_ptr<raw_family_run> family_run(const std::string& sets, const std::string& family) {
    return guarded([&] { return std::make_unique<raw_family_run>(api::family_run(in(sets, "sets"), in(family, "family options"))); });
}
std::string evaluate_family(const std::string& s) { return guarded([&] { return api::evaluate_family(in(s, "scored family")).dump(); }); }
std::string calibrate_family(const std::string& s) { return guarded([&] { return api::calibrate_family(in(s, "scored family")).dump(); }); }
std::string monitor(const std::string& points, double reference, double threshold, const std::string& slope) {
    return guarded([&] {
        if (!(reference >= 0 && reference <= 9007199254740992.0 && reference == std::floor(reference)))
            throw mano::error("the reference period must be a whole number of points >= 0");
        const json slope_value = in(slope, "slope");
        return api::monitor(in(points, "points"), static_cast<std::size_t>(reference), threshold, slope_value).dump();
    });
}
std::string calibrate(const std::string& sets, const std::string& options_json) {
    return guarded([&] { const json options = in(options_json, "options"); return api::calibrate(in(sets, "sets"), options).dump(); });
}
std::string predict(const std::string& calibration_json, const std::string& result_json, double level) {
    return guarded([&] {
        const json calibration = api::parse_calibration(calibration_json);
        return api::predict(calibration, in(result_json, "result"), level).dump();
    });
}
std::string scoring_options(const std::string& calibration_json, double rows, double cols, const std::string& input) {
    return guarded([&] {
        return api::scoring_options(api::parse_calibration(calibration_json), static_cast<std::size_t>(rows),
                                    static_cast<std::size_t>(cols), input)
            .dump();
    });
}

// Audit mode (json_calls.hpp): counts and seeds arrive as doubles, whole numbers the package checked.
std::uint64_t whole(double x) { return static_cast<std::uint64_t>(x); }
std::string audit_sample(double n_rows, double budget, double seed) {
    return guarded([&] { return api::audit_sample(whole(n_rows), whole(budget), whole(seed)).dump(); });
}
std::string audit_file(double n_rows, double k, double budget, double seed, const std::string& source) {
    return guarded([&] { return api::audit_file(whole(n_rows), whole(k), whole(budget), whole(seed), source); });
}
std::string parse_audit(const std::string& text, const std::string& file, double n_rows, double k, const std::string& set_name) {
    return guarded([&] { return api::parse_audit(text, file, whole(n_rows), whole(k), set_name).dump(); });
}
std::string audit_rows(const std::string& labeled_json, const std::string& name, double n_rows, double k) {
    return guarded([&] { return api::audit_rows(in(labeled_json, name), name, whole(n_rows), whole(k)).dump(); });
}
std::string predict_audited(const std::string& calibration_json, const std::string& result_json,
                            const std::string& audited_json, double level, const std::string& warnings_json) {
    return guarded([&] {
        const json calibration = api::parse_calibration(calibration_json), result = in(result_json, "result");
        const json audited = in(audited_json, "audited rows' result");
        json warnings = warnings_json.empty() ? json(nullptr) : in(warnings_json, "audit warnings");
        if (!warnings_json.empty() && warnings.is_null()) warnings = json::array({nullptr});  // refused: not a list
        return api::predict_audited(calibration, result, audited, level, warnings).dump();
    });
}

std::string predict_scores(const std::string& calibration_json, const std::string& method_name,
                           const std::string& scores, double level) {
    return guarded([&] {
        const json calibration = api::parse_calibration(calibration_json);
        return api::predict_scores(calibration, method_name, in(scores, "scores"), level).dump();
    });
}
std::string fit_of(const std::string& calibration_json, const std::string& method_name) {
    return guarded([&] { return api::fit_of(api::parse_calibration(calibration_json), method_name).dump(); });
}
std::string default_methods(std::size_t cols, double n, const std::string& inputs_json, const std::string& input) {
    return guarded([&] { return api::default_methods(cols, static_cast<std::size_t>(n), in(inputs_json, "inputs"), input).dump(); });
}

// What the package says of a result whose rows looked like probabilities, and the classes of rows
// of `cols` values of an input kind and back (src/mano/scan/input_kind.hpp).
std::string probabilities_warning(const std::string& where, const std::string& setting) {
    return mano::probabilities_warning(where, setting);
}
double classes_of(const std::string& input, double cols) {
    return guarded([&] { return static_cast<double>(mano::classes_of(mano::parse_input_kind(input), static_cast<std::size_t>(cols))); });
}
double columns_of(const std::string& input, double classes) {
    return guarded([&] { return static_cast<double>(mano::columns_of(mano::parse_input_kind(input), static_cast<std::size_t>(classes))); });
}

std::string methods() { return api::methods().dump(); }

// The options table (src/mano/scan/options_table.hpp): checks a request's values, returns the table.
std::string options_table(const std::string& request) {
    return guarded([&] { return mano::options_request(nlohmann::json::parse(request)).dump(); });
}

std::string version() { return mano::version_string; }

}  // namespace

EMSCRIPTEN_BINDINGS(mano) {
    emscripten::constant("maxIntervalLevel", mano::max_interval_level);
    emscripten::class_<raw_accumulator>("Accumulator")
        .function("push", &raw_accumulator::push)
        .function("merge", &raw_accumulator::merge)
        .function("result", &raw_accumulator::result)
        .function("state", &raw_accumulator::state)
        .function("clone", &raw_accumulator::clone)
        .function("rows", &raw_accumulator::rows)
        .function("cols", &raw_accumulator::cols)
        .function("architecture", &raw_accumulator::architecture);
    emscripten::function("makeAccumulator", &make_accumulator);
    emscripten::function("accumulatorFromState", &accumulator_from_state);
    emscripten::function("prepareOptions", &prepare_options);
    emscripten::function("evaluate", &evaluate);
    emscripten::function("calibrate", &calibrate);
    emscripten::class_<raw_family_run>("FamilyRun")
        .function("next", &raw_family_run::next)
        .function("give", &raw_family_run::give)
        .function("giveNone", &raw_family_run::give_none)
        .function("fail", &raw_family_run::fail)
        .function("finish", &raw_family_run::finish);
    emscripten::function("familyRun", &family_run);
    emscripten::function("scoreFamily", &score_family);
    emscripten::function("evaluateFamily", &evaluate_family);
    emscripten::function("calibrateFamily", &calibrate_family);
    emscripten::function("monitor", &monitor);
    emscripten::function("predict", &predict);
    emscripten::function("predictScores", &predict_scores);
    emscripten::function("fitOf", &fit_of);
    emscripten::function("auditSample", &audit_sample);
    emscripten::function("auditFile", &audit_file);
    emscripten::function("parseAudit", &parse_audit);
    emscripten::function("auditRows", &audit_rows);
    emscripten::function("predictAudited", &predict_audited);
    // the core's audit limits (mano/audit/audit_sample.hpp), for the package's own checks and messages
    emscripten::constant("AUDIT_MIN_ROWS", static_cast<double>(mano::audit_min_rows));
    emscripten::constant("AUDIT_MAX_ROWS", static_cast<double>(mano::audit_max_rows));
    emscripten::constant("AUDIT_MAX_BYTES", static_cast<double>(mano::audit_max_bytes));
    emscripten::function("scoringOptions", &scoring_options);
    emscripten::function("defaultMethods", &default_methods);
    emscripten::function("probabilitiesWarning", &probabilities_warning);
    emscripten::function("classesOf", &classes_of);
    emscripten::function("columnsOf", &columns_of);
    emscripten::function("methods", &methods);
    emscripten::function("optionsTable", &options_table);
    emscripten::function("version", &version);
}
