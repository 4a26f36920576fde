// The raw WebAssembly surface of the core, bound with Embind. web/src/ builds the JS API on it
// (option objects, typed arrays in, plain objects out). Nothing here throws into JavaScript: a
// failure returns an empty value and leaves its message for take_error(), because a C++
// exception reaching JS is an opaque number and skips the destructors of the frames it leaves.
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

#include "json_calls.hpp"
#include "io/csv_columns.hpp"
#include "io/header.hpp"

namespace {

using emscripten::val;
using nlohmann::json;
namespace api = mano::bindings;

struct failure {
    const char* kind;  // "input", "format", "memory" or "internal"
    std::string message;
};
std::optional<failure> last_error;

// Records the exception being handled, for take_error(); one copy serves every binding.
// `error_kind`: what a mano::error means at this call ("input"; "format" for a file's bytes).
[[gnu::noinline]] void record_error(const char* error_kind) {
    try {
        throw;
    } catch (const mano::row_input_error& e) {  // which input: the CLI names its file instead
        const char* which = e.which == mano::row_input_error::input::second ? "second: " : "features: ";
        last_error = failure{"input", which + std::string(e.what())};
    } catch (const mano::error& e) {
        last_error = failure{error_kind, e.what()};
    } catch (const json::exception& e) {
        last_error = failure{"input", std::string("malformed JSON: ") + e.what()};
    } catch (const std::bad_alloc&) {
        last_error = failure{"memory", "out of memory: the WebAssembly heap could not grow (a 32-bit module has at most 2 GiB)"};
    } catch (const std::exception& e) {
        last_error = failure{"internal", std::string("internal error: ") + e.what()};
    } catch (...) {
        last_error = failure{"internal", "internal error: an unknown exception"};
    }
}

// JSON text from JavaScript, parsed under mano's limits (the core's calls take values).
json in(const std::string& text, const std::string& kind) { return api::parse_input(text, kind); }

template <class F>
auto guarded(F&& f, const char* error_kind = "input") -> decltype(f()) {
    try {
        return f();
    } catch (...) {
        record_error(error_kind);
    }
    return decltype(f())();
}

// "" when the last call succeeded, else {"kind": "input"|"memory"|"internal", "message": ...}.
std::string take_error() {
    if (!last_error) return {};
    std::string out = json{{"kind", last_error->kind}, {"message", last_error->message}}.dump();
    last_error.reset();
    return out;
}

// The one scratch area inputs cross into: JS hands over a byte view of each chunk, and it is
// copied into memory the core reads. Sized by the largest chunk seen, so it stops growing once
// the JS side's fixed chunk size is reached.
struct scratch_area {
    std::vector<double> logits, second, features;  // doubles: 8-byte aligned for every dtype
    std::vector<std::int32_t> labels32;
    std::vector<std::int64_t> labels;
};
scratch_area scratch;

// Copies the bytes of a Uint8Array into `into` (resized to hold them).
template <class T>
const T* copy_in(const val& bytes, std::vector<T>& into) {
    const auto length = bytes["length"].as<std::size_t>();
    into.resize((length + sizeof(T) - 1) / sizeof(T));
    val(emscripten::typed_memory_view(length, reinterpret_cast<unsigned char*>(into.data()))).call<void>("set", bytes);
    return into.data();
}

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

// The header rules of .npy and .safetensors, shared with the native readers (native/io/header.hpp):
// web/src/loaders.js reads a file's first bytes and hands them over. Their errors are the file's
// (kind "format").

// How the JS readers decode an element type: {kind: "f"|"i"|"u", itemsize, little, dtype}, where
// dtype is the Matrix's ("float16", "bfloat16", "float32", "float64"; "int32" for integers).
json element_json(const std::optional<mano::io::detail::element_type>& e) {
    using mano::io::detail::scalar_kind;
    if (!e) return nullptr;
    const bool is_float = e->kind == scalar_kind::floating || e->kind == scalar_kind::bfloat;
    const char* dtype = e->kind == scalar_kind::bfloat ? "bfloat16"
                        : !is_float                    ? "int32"
                        : e->size == 2                 ? "float16"
                        : e->size == 4                 ? "float32"
                                                       : "float64";
    const char* kind = is_float ? "f" : e->kind == scalar_kind::signed_integer ? "i" : "u";
    // WebAssembly is little-endian: the data is big-endian exactly when it must be swapped.
    return {{"kind", kind}, {"itemsize", e->size}, {"little", !e->swap}, {"dtype", dtype}};
}

// The header of the .npy file `name` of `size` bytes, from its first min(size, NPY_MAX_PREFIX_BYTES)
// bytes: {descr, shape, shown (the shape as NumPy prints it), fortran, dataOffset, element}, where
// element is null for a dtype mano cannot read; otherwise the data's size is checked too.
std::string npy_header(const val& bytes, double size, const std::string& name) {
    return guarded([&] {
        namespace d = mano::io::detail;
        std::vector<unsigned char> buffer;
        const auto* data = copy_in(bytes, buffer);
        const auto total = static_cast<std::uint64_t>(size);
        d::memory_stream in(data, buffer.size(), name);
        const d::npy_header h = d::read_npy_header(name, in, total);
        const auto e = d::npy_element(h.descr);
        if (e) d::check_npy_data_size(name, h, e->size, total);
        return json{{"descr", h.descr},           {"shape", h.shape},
                    {"shown", d::shape_text(h.shape)}, {"fortran", h.fortran},
                    {"dataOffset", h.data_offset},   {"element", element_json(e)}}
            .dump(-1, ' ', false, json::error_handler_t::replace);  // a damaged descr may not be UTF-8
    }, "format");
}

// The length of the JSON header of the .safetensors file `name` of `size` bytes, from its first
// min(size, 8) bytes.
double safetensors_header_length(const val& bytes, double size, const std::string& name) {
    return guarded([&] {
        std::vector<unsigned char> first(8);
        copy_in(bytes, first);
        first.resize(8);
        return static_cast<double>(mano::io::detail::safetensors_header_length(name, static_cast<std::uint64_t>(size), first.data()));
    }, "format");
}

// The tensor `key` names (else the only one, else "logits") of the .safetensors file `name` of
// `size` bytes, from its JSON header (the bytes after the 8-byte length), every entry and the data
// section checked: {where, dtype, shape, shown, offset, bytes, element}.
std::string safetensors_header(const val& bytes, double size, const std::string& name, const std::string& key) {
    return guarded([&] {
        namespace d = mano::io::detail;
        std::string header(bytes["length"].as<std::size_t>(), '\0');
        val(emscripten::typed_memory_view(header.size(), reinterpret_cast<unsigned char*>(header.data()))).call<void>("set", bytes);
        const auto t = d::parse_safetensors_header(name, static_cast<std::uint64_t>(size), header, key, "logits",
                                                   "pass { key } to choose one");
        return json{{"where", t.where},   {"dtype", t.dtype},   {"shape", t.shape}, {"shown", d::shape_text(t.shape)},
                    {"offset", t.offset}, {"bytes", t.bytes}, {"element", element_json(d::safetensors_element(t.dtype))}}
            .dump(-1, ' ', false, json::error_handler_t::replace);
    }, "format");
}

// A CSV header's names, each followed by a NUL ("" without a header).
std::vector<std::string> header_names(const std::string& file, const std::string& names_text, double fields) {
    std::vector<std::string> names;
    for (std::size_t at = 0, end; (end = names_text.find('\0', at)) != std::string::npos; at = end + 1)
        names.push_back(names_text.substr(at, end - at));
    if (!names.empty() && names.size() != static_cast<std::size_t>(fields))
        throw mano::error(mano::printable(file + ": a name in its header holds a NUL byte"));
    return names;
}

// Which columns of a CSV are classes (native/io/csv_columns.hpp), from its header's names:
// {label: index or null, dropped, notes}. web/src/csv.js parses the rows.
std::string csv_columns(const std::string& file, const std::string& names_text, double fields, const std::string& label_column,
                        const std::string& option_name, bool index_only) {
    return guarded([&] {
        const auto c = mano::io::resolve_csv_columns(file, header_names(file, names_text, fields), static_cast<std::size_t>(fields),
                                                     label_column, option_name, index_only, false);
        return json{{"label", c.label ? json(*c.label) : json(nullptr)}, {"dropped", c.dropped}, {"notes", c.notes}}.dump();
    }, "format");
}

// The index rule (mano::io::check_index_column) on the first rows read: `first_rows` holds their
// logit columns as float64 bytes, row after row. "" when it passes.
std::string csv_index_column(const std::string& file, const std::string& names_text, double fields,
                             const std::string& label_column, const std::string& option_name, bool index_only,
                             const val& first_rows, double rows) {
    return guarded([&] {
        const auto names = header_names(file, names_text, fields);
        const auto n = static_cast<std::size_t>(fields);
        const auto c = mano::io::resolve_csv_columns(file, names, n, label_column, option_name, index_only, false);
        std::vector<double> values;
        copy_in(first_rows, values);
        const auto count = static_cast<std::size_t>(rows);
        if (values.size() != count * c.logit_columns(n) || count > mano::io::csv_index_rows)
            throw mano::error(file + ": the first rows' values do not fill " + std::to_string(count) + " rows");
        mano::io::check_index_column(file, names, c, n, values.data(), count, c.logit_columns(n));
        return std::string();
    }, "format");
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
    emscripten::function("npyHeader", &npy_header);
    emscripten::function("csvColumns", &csv_columns);
    emscripten::function("csvIndexColumn", &csv_index_column);
    emscripten::constant("CSV_INDEX_ROWS", static_cast<double>(mano::io::csv_index_rows));
    emscripten::constant("NPY_MAX_PREFIX_BYTES", static_cast<double>(mano::io::detail::npy_max_prefix_bytes));
    emscripten::function("safetensorsHeaderLength", &safetensors_header_length);
    emscripten::function("safetensorsHeader", &safetensors_header);
    emscripten::function("takeError", &take_error);
    emscripten::function("version", &version);
}
