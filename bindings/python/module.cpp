// mano._core: the C++ side of the Python package (bindings/python/mano). NumPy arrays are read
// where they lie (arrays.hpp: any float16/32/64 array whose rows are contiguous, any row stride:
// no copy; other layouts, such as Fortran order, a chunk of rows at a time), with the GIL released
// while the core runs. Options, results, states and calibrations cross as dicts and lists
// (json_values.hpp) through the calls the WebAssembly binding uses too
// (bindings/common/json_calls.hpp); the package's modules (mano/_scoring.py, _sets.py, _files.py)
// give them their Python shape. A mano::error becomes
// mano.InputError (a ValueError) with the CLI's message. This file: the options, the file
// readers and the module's table.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <mano/mano.hpp>
#include <mano/scan/resolve.hpp>

#include "accumulator_binding.hpp"
#include "arrays.hpp"
#include "audit_binding.hpp"
#include "json_calls.hpp"
#include "json_values.hpp"
#include "host/calibration_file.hpp"
#include "host/scan.hpp"
#include "monitor_binding.hpp"
#include "io/csv_columns.hpp"
#include "io/json.hpp"
#include "io/manifest.hpp"
#include "io/reader.hpp"

namespace py = pybind11;
namespace api = mano::bindings;
using nlohmann::json;
using namespace mano_python;

namespace {

// Options JSON as the package passes it: the core's options, plus "architecture" (the kernel to
// use; not part of the options the core writes into states and calibrations).
// Takes "architecture" out of an options object ("" when absent); one this CPU lacks is refused
// now, naming those it has.
std::string take_architecture(json& j) {
    if (!j.is_object() || !j.contains("architecture")) return {};
    if (!j.at("architecture").is_string()) throw mano::error("architecture must be a string, e.g. \"avx2\"");
    std::string arch = j.at("architecture").get<std::string>();
    j.erase("architecture");
    if (!arch.empty()) mano::resolve_architecture(arch);
    return arch;
}

mano::options options_of(json j) {
    const std::string arch = take_architecture(j);
    mano::options o = mano::options::from_json(j);
    o.architecture = arch;
    return o;
}

py::object options_value(const mano::options& o) {
    json j = o.to_json();
    if (!o.architecture.empty()) j["architecture"] = o.architecture;
    return to_python(j);
}

// The options `mano score` would use for N rows of K classes with these inputs (mano/scan/resolve.hpp).
mano::options resolve(const json& given_options, std::size_t rows, std::size_t cols, unsigned row_inputs) {
    mano::options opts = options_of(given_options);
    const std::size_t k = mano::classes_of(opts.input, cols);
    const unsigned given = row_inputs | (opts.source ? unsigned(mano::needs_source) : 0u) |
                           (opts.source_features ? unsigned(mano::needs_source_features) : 0u);
    opts.methods = mano::resolve_methods({cols, rows, opts.input, given, opts.methods}).methods;
    if (opts.source && opts.source->k != k)
        throw mano::error("source: the source logits have " + std::to_string(opts.source->k) +
                          " classes but the target logits have " + std::to_string(k));
    return opts;
}

py::object resolve_options(const py::object& options, std::size_t rows, std::size_t cols, bool second, bool features) {
    const unsigned inputs = (second ? unsigned(mano::needs_second) : 0u) | (features ? unsigned(mano::needs_features) : 0u);
    return options_value(resolve(from_python(options, "options"), rows, cols, inputs));
}

// mano.score: every row scanned with the options resolved for this shape, the result as a dict.
py::object score(const py::object& logits_in, const py::object& options_json, const py::object& labels,
                  const py::object& second, const py::object& features, unsigned threads) {
    const py::array array = as_array(logits_in, "logits");  // alive while its reader reads it
    array_reader logits(array, "logits");
    extras ex(labels, second, features, logits.rows(), logits.cols());
    const mano::options opts = resolve(from_python(options_json, "options"), logits.rows(), logits.cols(), ex.inputs());
    return to_python(scan_array(logits, ex, opts, threads).finalize().to_json());
}

py::object prepare_options(const py::object& partial, const py::object& source_logits, const py::object& source_labels,
                            bool fit_temperature, const py::object& source_features, unsigned threads) {
    api::source_inputs source;
    source.source_option = "source=(logits, labels)";
    source.fit_temperature = fit_temperature;
    // the fits' passes over the source rows on `threads` threads (0: every core), as the CLI's
    source.parallel = mano::host::thread_runner(mano::host::thread_count(threads));
    const auto widened = [](array_reader& reader) {
        std::vector<double> out(reader.rows() * reader.cols());
        if (reader.rows() > 0) mano::widen_rows(reader.read(0, reader.rows()), 0, reader.rows(), out.data());
        return out;
    };
    std::vector<double> feature_copy;
    std::vector<std::int64_t> labels;
    std::optional<array_reader> logits_reader;
    std::optional<mano::logits_view> view;
    if (auto a = optional_array(source_logits, "source logits")) {
        // the source rows as the array holds them (a view into it, or the reader's own copy where
        // it is strided), as the CLI holds a file's; the array outlives this call
        logits_reader.emplace(*a, "source logits");
        array_reader& reader = *logits_reader;
        if (reader.rows() > 0) view.emplace(reader.read(0, reader.rows()));
        else view.emplace(static_cast<const double*>(nullptr), 0, reader.cols());
        source.logits = &*view;
        if (auto l = optional_array(source_labels, "source labels")) {
            labels = labels_of(*l, reader.rows(), "source labels");
            source.labels = labels.data();
        }
    }
    if (auto a = optional_array(source_features, "source features")) {
        array_reader reader(*a, "source features");
        feature_copy = widened(reader);
        source.feature_rows_data = feature_copy.data();
        source.feature_rows = reader.rows();
        source.feature_cols = reader.cols();
    }
    json given = from_python(partial, "options");
    const std::string arch = take_architecture(given);
    json prepared;
    {
        py::gil_scoped_release release;
        prepared = api::prepare_options(given, source);
    }
    if (!arch.empty()) prepared["architecture"] = arch;
    return to_python(prepared);
}

mano::io::read_options read_options_of(const std::string& key, const py::object& shape, const std::string& label_column,
                                       const py::object& header) {
    mano::io::read_options o;
    o.key = key;
    if (!shape.is_none()) o.shape = shape.cast<std::pair<std::size_t, std::size_t>>();
    o.label_column = label_column;
    o.label_column_option = "label_column";
    if (!header.is_none()) o.header = header.cast<bool>();
    return o;
}

// A logits (or features) file mano reads, whole, as an array of its element type (bfloat16 as
// float32: NumPy has no bfloat16), and the reader's notes (a CSV's columns left out or taken as labels).
py::tuple read_matrix(const std::string& path, const std::string& key, const py::object& shape,
                      const std::string& label_column, const py::object& header) {
    const auto opts = read_options_of(key, shape, label_column, header);
    std::unique_ptr<mano::io::matrix_reader> reader;
    {
        py::gil_scoped_release release;
        reader = mano::io::open_matrix(path, opts);
    }
    const auto rows = reader->rows(), cols = reader->cols();
    const auto type = reader->type();
    py::dtype dt = type == mano::dtype::float64 ? py::dtype::of<double>()
                   : type == mano::dtype::float16 ? py::dtype("float16")
                                                  : py::dtype::of<float>();
    py::array out(dt, {rows, cols});
    auto* dst = static_cast<unsigned char*>(out.mutable_data());
    const std::size_t item = static_cast<std::size_t>(out.itemsize());
    {
        py::gil_scoped_release release;
        const std::size_t step = std::max<std::size_t>(1, copy_chunk_bytes / std::max<std::size_t>(1, cols * item));
        std::vector<float> widened;
        for (std::size_t row = 0; row < rows; row += step) {
            const std::size_t count = std::min(step, rows - row);
            const auto v = reader->read(row, count);
            unsigned char* at = dst + row * cols * item;
            if (type == mano::dtype::bfloat16) {
                mano::float_rows(v, 0, count, reinterpret_cast<float*>(at));
                continue;
            }
            const auto* src = static_cast<const unsigned char*>(v.data());
            for (std::size_t r = 0; r < count; ++r)
                std::memcpy(at + r * cols * item, src + r * v.row_stride() * item, cols * item);
        }
    }
    return py::make_tuple(out, reader->notes());
}

py::array_t<std::int64_t> read_labels(const std::string& path, const std::string& key, const std::string& label_column,
                                      const py::object& header, const py::object& expected_rows) {
    auto opts = read_options_of(key, py::none(), label_column, header);
    if (!expected_rows.is_none()) opts.expected_rows = expected_rows.cast<std::uint64_t>();
    std::vector<std::int64_t> labels;
    {
        py::gil_scoped_release release;
        labels = mano::io::read_labels(path, opts);
    }
    py::array_t<std::int64_t> out(static_cast<py::ssize_t>(labels.size()));
    if (!labels.empty()) std::memcpy(out.mutable_data(), labels.data(), labels.size() * sizeof(std::int64_t));
    return out;
}

// A table's columns (a DataFrame's names, mano/_scoring.py) through a CSV header's rule
// (native/io/csv_columns.hpp): (the label column or None, the columns left out, the notes).
py::tuple table_columns(const std::string& what, const std::vector<std::string>& names) {
    const auto c = mano::io::resolve_csv_columns(what, names, names.size(), "", "label_column", false, false);
    return py::make_tuple(c.label ? py::object(py::int_(*c.label)) : py::object(py::none()), c.dropped, c.notes);
}

// The CSV readers' index rule (mano::io::check_index_column) on a table's first rows: its logit
// columns, as table_columns left them.
void check_index_column(const std::string& what, const std::vector<std::string>& names,
                        const py::array_t<double, py::array::c_style | py::array::forcecast>& first_rows) {
    const auto c = mano::io::resolve_csv_columns(what, names, names.size(), "", "label_column", false, false);
    const std::size_t cols = c.logit_columns(names.size());
    const auto rows = static_cast<std::size_t>(first_rows.ndim() == 2 ? first_rows.shape(0) : 0);
    if (first_rows.ndim() != 2 || static_cast<std::size_t>(first_rows.shape(1)) != cols || rows > mano::io::csv_index_rows)
        throw mano::error(what + ": the first rows given are not the table's logit columns");
    mano::io::check_index_column(what, names, c, names.size(), first_rows.data(), rows, cols);
}

// A manifest as JSON: {"path", "source"?: {"logits", "labels"}, "sets": [{"name", "group"?,
// "logits", "labels"?}]}, paths resolved against the manifest's folder.
py::object read_manifest(const std::string& path, bool allow_outside) {
    const auto m = mano::io::read_manifest(path, allow_outside ? mano::io::outside_paths::allow : mano::io::outside_paths::refuse);
    json j{{"path", m.path}, {"sets", json::array()}};
    if (m.source) j["source"] = {{"logits", m.source->logits}, {"labels", m.source->labels}};
    for (const auto& s : m.sets) {
        json set{{"name", s.name}, {"logits", s.logits}};
        if (!s.group.empty()) set["group"] = s.group;
        if (!s.labels.empty()) set["labels"] = s.labels;
        j["sets"].push_back(set);
    }
    return to_python(j);
}

// A calibration file as `mano calibrate` writes it, checked.
py::object read_calibration(const std::string& path) { return to_python(mano::host::read_calibration(path).to_json()); }

// A state file as `mano score --state` writes it (within the state reader's limit).
py::object read_state(const std::string& path) {
    return to_python(mano::io::read_json(path, "accumulator state", mano::io::state_max_bytes));
}

// The shape of a logits file, from its header (no rows are read), and its reader's notes.
std::tuple<std::size_t, std::size_t, std::vector<std::string>> matrix_shape(const std::string& path, const std::string& key, const py::object& shape,
                                                 const std::string& label_column, const py::object& header) {
    const auto opts = read_options_of(key, shape, label_column, header);
    py::gil_scoped_release release;
    const auto reader = mano::io::open_matrix(path, opts);
    return {reader->rows(), reader->cols(), reader->notes()};
}

// `mano score FILE --state`: every row of a logits file (labels from `labels_path` when given, or
// from a CSV's label column) scanned with the native reader on `threads` threads, the options
// resolved for its shape when they name no methods; and the reader's notes.
std::pair<py_accumulator, std::vector<std::string>> scan_file(const std::string& path, const py::object& options_json, const std::string& key,
                         const py::object& shape, const std::string& label_column, const py::object& header,
                         const std::string& labels_path, unsigned threads) {
    const auto opts = read_options_of(key, shape, label_column, header);
    const json options_given = from_python(options_json, "options");
    py::gil_scoped_release release;
    auto reader = mano::io::open_matrix(path, opts);
    // labels: their own file, or a CSV's label column (as the CLI reads them)
    const bool has_labels = !labels_path.empty() || reader->has_labels();
    const std::string& labels_from = labels_path.empty() ? path : labels_path;
    std::vector<std::int64_t> labels;
    if (has_labels) {
        auto label_options = opts;
        label_options.key.clear();  // a key names the logits; labels in a container are the member "labels"
        label_options.shape.reset();
        label_options.expected_rows = reader->rows();
        labels = mano::io::read_labels(labels_from, label_options);
        if (labels.size() != reader->rows())
            throw mano::error(labels_from + ": " + std::to_string(labels.size()) + " labels for the " +
                              std::to_string(reader->rows()) + " rows of " + path);
    }
    const mano::options o = resolve(options_given, reader->rows(), reader->cols(), 0);
    mano::host::scan_inputs in;
    in.logits = reader.get();
    if (has_labels) in.labels = &labels;
    try {
        return {py_accumulator(mano::host::scan(in, 0, reader->rows(), o, mano::host::thread_count(threads), nullptr)),
                reader->notes()};
    } catch (const mano::error& e) {
        throw mano::host::file_error(path, e);
    }
}

// Rows of a logits file (ascending, within it), read as `mano predict --audit` reads the audited
// rows (io::read_rows): float64 files as float64, every other type as float32.
py::array read_rows(const std::string& path, const std::vector<std::uint64_t>& rows) {
    std::unique_ptr<mano::io::matrix_reader> reader;
    {
        py::gil_scoped_release release;
        reader = mano::io::open_matrix(path, {});
    }
    const std::size_t n = rows.size(), k = reader->cols();
    py::array out = reader->type() == mano::dtype::float64 ? py::array(py::dtype::of<double>(), {n, k})
                                                           : py::array(py::dtype::of<float>(), {n, k});
    void* data = out.mutable_data();
    {
        py::gil_scoped_release release;
        try {
            mano::io::read_rows(*reader, rows, data);
        } catch (const mano::error& e) {
            throw mano::host::file_error(path, e);
        }
    }
    return out;
}

// The family workflow (mano/workflow/family.hpp), run by the core's one driver: `score(index,
// pass)` is the package's scorer (None, or the result, the options and the labels, None when the
// pass did not ask for them); an InputError it raises is a mano::error to the workflow, which
// leaves an extra Taylor order out of that set's choice.
py::tuple score_family(const py::object& sets, const py::object& family, const py::function& score,
                       const py::object& input_error) {
    std::vector<std::string> warnings;
    const auto scorer = [&](std::size_t i, const json& pass) -> std::optional<api::scored_json> {
        py::object got;
        try {
            got = score(i, to_python(pass));
        } catch (py::error_already_set& e) {
            if (e.matches(input_error)) throw mano::error(py::str(e.value()).cast<std::string>());
            throw;
        }
        if (got.is_none()) return std::nullopt;
        const auto answer = got.cast<py::tuple>();
        if (answer.size() != 3) throw mano::error("a family scorer gives (result, options, labels) or None");
        return api::scored_json{from_python(answer[0], "result"), from_python(answer[1], "options"),
                                from_python(answer[2], "labels")};
    };
    const json scored = api::score_family(from_python(sets, "sets"), from_python(family, "family options"), scorer, &warnings);
    return py::make_tuple(to_python(scored), warnings);
}

void add_accumulator(py::module_& m) {
    py::class_<py_accumulator>(m, "Accumulator")
        .def(py::init([](std::size_t k, const py::object& options) {
                 return py_accumulator(mano::accumulator(k, options_of(from_python(options, "options"))));
             }),
             py::arg("k"), py::arg("options"))
        // a state as a dict, or as JSON text (read under the state reader's limits)
        .def_static("from_state", [](const py::object& state) {
            const json j = py::isinstance<py::str>(state) ? api::parse_state(state.cast<std::string>())
                                                          : from_python(state, "accumulator state");
            return py_accumulator(api::accumulator_from_state(j));
        })
        .def("push", &py_accumulator::push, py::arg("logits"), py::arg("labels") = py::none(), py::arg("second") = py::none(),
             py::arg("features") = py::none(), py::arg("first_row") = py::none())
        .def("merge", &py_accumulator::merge, py::arg("other"), py::arg("as_shard"))
        .def("set_shard_label", &py_accumulator::set_shard_label, py::arg("label"))
        .def("result", &py_accumulator::result)
        .def("state", &py_accumulator::state)
        .def("options", &py_accumulator::options)
        .def("copy", &py_accumulator::copy)
        .def("shards", &py_accumulator::shards)
        .def_property_readonly("rows", &py_accumulator::rows)
        .def_property_readonly("cols", &py_accumulator::cols)
        .def_property_readonly("architecture", &py_accumulator::architecture);
}

// Scoring, the family workflow, predictions and the method table.
void add_scoring(py::module_& m, const py::object& input_error) {
    m.def("score", &score, py::arg("logits"), py::arg("options"), py::arg("labels"), py::arg("second"),
          py::arg("features"), py::arg("threads"));
    m.def("prepare_options", &prepare_options);
    m.def("resolve_options", &resolve_options);
    m.def("score_family", [input_error](const py::object& sets, const py::object& family, const py::function& score) {
        return score_family(sets, family, score, input_error);
    });
    m.def("evaluate_family", [](const py::object& scored) {
        const json j = from_python(scored, "scored family");
        return released([&] { return api::evaluate_family(j); });
    });
    m.def("calibrate_family", [](const py::object& scored) {
        const json j = from_python(scored, "scored family");
        return released([&] { return api::calibrate_family(j); });
    });
    m.def("predict", [](const py::object& calibration, const py::object& result, double level) {
        const json c = from_python(calibration, "calibration"), r = from_python(result, "result");
        return released([&] { return api::predict(c, r, level); });
    });
    m.def("predict_scores", [](const py::object& calibration, const std::string& method, const py::object& scores, double level) {
        const json c = from_python(calibration, "calibration"), s = from_python(scores, "scores");
        return released([&] { return api::predict_scores(c, method, s, level); });
    });
    m.def("fit_of", [](const py::object& calibration, const std::string& method) {
        return to_python(api::fit_of(from_python(calibration, "calibration"), method));
    });
    m.def("scoring_options", [](const py::object& calibration, std::size_t rows, std::size_t cols, const std::string& input) {
        const json c = from_python(calibration, "calibration");
        return released([&] { return api::scoring_options(c, rows, cols, input); });
    }, py::arg("calibration"), py::arg("rows"), py::arg("cols"), py::arg("input") = "logits");
    m.def("default_methods", [](std::size_t k, std::size_t n, const py::object& inputs, const std::string& input) {
        return to_python(api::default_methods(k, n, from_python(inputs, "inputs"), input));
    }, py::arg("k"), py::arg("n"), py::arg("inputs"), py::arg("input") = "logits");
    m.def("methods", [] { return to_python(api::methods()); });
    // the options table's checks, in Python's spelling (src/mano/scan/options_table.hpp)
    m.def("options_table", [](const py::object& request) { return to_python(mano::options_request(from_python(request, "options"))); });
    m.def("probabilities_warning", &mano::probabilities_warning);
    // the classes of rows of `columns` values of an input kind, and back (src/mano/scan/input_kind.hpp)
    m.def("classes_of", [](const std::string& input, std::size_t columns) { return mano::classes_of(mano::parse_input_kind(input), columns); });
    m.def("columns_of", [](const std::string& input, std::size_t classes) { return mano::columns_of(mano::parse_input_kind(input), classes); });
    m.def("architectures", &mano::available_architectures);
}

// The file readers.
void add_readers(py::module_& m) {
    m.def("read_rows", &read_rows);
    m.def("read_matrix", &read_matrix);
    m.def("table_columns", &table_columns);
    m.def("check_index_column", &check_index_column);
    m.attr("csv_index_rows") = mano::io::csv_index_rows;
    m.def("matrix_shape", &matrix_shape);
    m.def("scan_file", &scan_file);
    m.def("read_labels", &read_labels);
    m.def("read_manifest", &read_manifest);
    m.def("read_calibration", &read_calibration);
    m.def("read_state", &read_state);
}

// The core's limits the package checks before it calls.
void add_limits(py::module_& m) {
    m.attr("label_shift_max_copies") = mano::label_shift_max_copies;
    m.attr("label_shift_max_seed") = mano::label_shift_max_seed;
    m.attr("max_interval_level") = mano::max_interval_level;
    m.attr("keeps_rows_max_logits") = mano::keeps_rows_max_logits;
    m.attr("keeps_rows_max_k") = mano::keeps_rows_max_k;
    m.attr("version") = mano::version_string;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "mano's C++ core (use the mano package, not this module)";
    static py::exception<mano::error> input_error(m, "InputError", PyExc_ValueError);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const mano::error& e) {
            // escaped as the CLI's messages are: a name from a file (not UTF-8, or with controls)
            // cannot break the message or the terminal it is printed on
            input_error(mano::printable(e.what()).c_str());
        } catch (const json::exception& e) {
            input_error((std::string("malformed JSON: ") + e.what()).c_str());
        }
    });
    add_accumulator(m);
    add_scoring(m, input_error);
    add_audit(m);
    add_readers(m);
    add_limits(m);
    add_monitor(m);
}
