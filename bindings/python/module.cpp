// mano._core: the C++ side of the Python package (bindings/python/mano). NumPy arrays are read
// where they lie (arrays.hpp: any float16/32/64 array whose rows are contiguous, any row stride:
// no copy; other layouts, such as Fortran order, a chunk of rows at a time), with the GIL released
// while the core runs. Options, results, states and calibrations cross as JSON text through the
// calls the WebAssembly binding uses too (bindings/common/json_calls.hpp); the package's modules
// (mano/_scoring.py, _sets.py, _files.py) give them their Python shape. A mano::error becomes
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

#include "accumulator_binding.hpp"
#include "arrays.hpp"
#include "json_calls.hpp"
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

mano::options options_of(const std::string& options_json) {
    json j = api::parse_input(options_json, "options");
    const std::string arch = take_architecture(j);
    mano::options o = mano::options::from_json(j);
    o.architecture = arch;
    return o;
}

std::string options_text(const mano::options& o) {
    json j = o.to_json();
    if (!o.architecture.empty()) j["architecture"] = o.architecture;
    return j.dump();
}

// The options `mano score` would use for N rows of K classes with these inputs: the methods asked
// for (each checked for its inputs), or the defaults for this shape and these inputs.
mano::options resolve(const std::string& options_json, std::size_t rows, std::size_t cols, unsigned row_inputs) {
    mano::options opts = options_of(options_json);
    const std::size_t k = mano::classes_of(opts.input, cols);
    const unsigned given = row_inputs | (opts.source ? unsigned(mano::needs_source) : 0u) |
                           (opts.source_features ? unsigned(mano::needs_source_features) : 0u);
    if (opts.methods.empty()) {
        opts.methods = mano::default_methods(k, rows, given);
    } else {
        for (const auto m : opts.methods)
            if (const unsigned missing = mano::info_of(m).needs & ~given) {
                std::string names;
                for (const auto& n : mano::input_names(missing)) names += (names.empty() ? "" : ", ") + n;
                throw mano::error(std::string("methods: ") + mano::method_name(m) + " needs " + names);
            }
    }
    if (opts.source && opts.source->k != k)
        throw mano::error("source: the source logits have " + std::to_string(opts.source->k) +
                          " classes but the target logits have " + std::to_string(k));
    return opts;
}

std::string resolve_options(const std::string& options_json, std::size_t rows, std::size_t cols, bool second,
                            bool features) {
    const unsigned inputs = (second ? unsigned(mano::needs_second) : 0u) | (features ? unsigned(mano::needs_features) : 0u);
    return options_text(resolve(options_json, rows, cols, inputs));
}

// mano.score: every row scanned with the options resolved for this shape, the result as JSON.
std::string score(const py::object& logits_in, const std::string& options_json, const py::object& labels,
                  const py::object& second, const py::object& features, unsigned threads) {
    const py::array array = as_array(logits_in, "logits");  // alive while its reader reads it
    array_reader logits(array, "logits");
    extras ex(labels, second, features, logits.rows(), logits.cols());
    const mano::options opts = resolve(options_json, logits.rows(), logits.cols(), ex.inputs());
    return scan_array(logits, ex, opts, threads).finalize().to_json().dump();
}

std::string prepare_options(const std::string& partial, const py::object& source_logits, const py::object& source_labels,
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
    json given = api::parse_input(partial, "options");
    const std::string arch = take_architecture(given);
    std::string prepared;
    {
        py::gil_scoped_release release;
        prepared = api::prepare_options(given.dump(), source);
    }
    if (arch.empty()) return prepared;
    json j = json::parse(prepared);
    j["architecture"] = arch;
    return j.dump();
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
std::string read_manifest(const std::string& path, bool allow_outside) {
    const auto m = mano::io::read_manifest(path, allow_outside ? mano::io::outside_paths::allow : mano::io::outside_paths::refuse);
    json j{{"path", m.path}, {"sets", json::array()}};
    if (m.source) j["source"] = {{"logits", m.source->logits}, {"labels", m.source->labels}};
    for (const auto& s : m.sets) {
        json set{{"name", s.name}, {"logits", s.logits}};
        if (!s.group.empty()) set["group"] = s.group;
        if (!s.labels.empty()) set["labels"] = s.labels;
        j["sets"].push_back(set);
    }
    return j.dump();
}

// A calibration file as `mano calibrate` writes it, checked, as JSON text.
std::string read_calibration(const std::string& path) { return mano::host::read_calibration(path).to_json().dump(); }

// A state file as `mano score --state` writes it, as JSON text (within the state reader's limit).
std::string read_state(const std::string& path) {
    return mano::io::read_json(path, "accumulator state", mano::io::state_max_bytes).dump();
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
std::pair<py_accumulator, std::vector<std::string>> scan_file(const std::string& path, const std::string& options_json, const std::string& key,
                         const py::object& shape, const std::string& label_column, const py::object& header,
                         const std::string& labels_path, unsigned threads) {
    const auto opts = read_options_of(key, shape, label_column, header);
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
    const mano::options o = resolve(options_json, reader->rows(), reader->cols(), 0);
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

    py::class_<py_accumulator>(m, "Accumulator")
        .def(py::init([](std::size_t k, const std::string& options_json) {
                 return py_accumulator(mano::accumulator(k, options_of(options_json)));
             }),
             py::arg("k"), py::arg("options_json"))
        .def_static("from_state", [](const std::string& state) { return py_accumulator(api::accumulator_from_state(state)); })
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

    m.def("score", &score, py::arg("logits"), py::arg("options_json"), py::arg("labels"), py::arg("second"),
          py::arg("features"), py::arg("threads"));
    m.def("prepare_options", &prepare_options);
    m.def("resolve_options", &resolve_options);
    // The family workflow (mano/workflow/family.hpp): `score(index, pass_json)` is the package's scorer
    // (None, or the result's and the options' JSON and the labels' JSON, "" when the pass did not
    // ask for them); an InputError it raises is a mano::error to the workflow, which leaves an
    // extra Taylor order out of that set's choice.
    m.def("score_family", [](const std::string& sets, const std::string& family, const py::function& score) {
        std::vector<std::string> warnings;
        const auto scorer = [&](std::size_t i, const std::string& pass) -> std::optional<api::scored_json> {
            py::object got;
            try {
                got = score(i, pass);
            } catch (py::error_already_set& e) {
                if (e.matches(input_error)) throw mano::error(py::str(e.value()).cast<std::string>());
                throw;
            }
            if (got.is_none()) return std::nullopt;
            const auto [result, options, labels] = got.cast<std::tuple<std::string, std::string, std::string>>();
            return api::scored_json{result, options, labels};
        };
        std::string scored = api::score_family(sets, family, scorer, &warnings);
        return py::make_tuple(scored, warnings);
    });
    m.def("evaluate_family", [](const std::string& scored) { py::gil_scoped_release r; return api::evaluate_family(scored); });
    m.def("calibrate_family", [](const std::string& scored) { py::gil_scoped_release r; return api::calibrate_family(scored); });
    m.def("predict", &api::predict);
    m.def("predict_scores", &api::predict_scores);
    // Audit mode (docs/audit.md): the draw, its CSV, a labeled file's rows and labels, and the
    // prediction with the audited rows' result.
    m.def("audit_sample", [](std::uint64_t n_rows, std::uint64_t budget, std::uint64_t seed) {
        py::gil_scoped_release r;
        return api::audit_sample(n_rows, budget, seed);
    });
    m.def("audit_file", [](std::uint64_t n_rows, std::size_t k, std::uint64_t budget, std::uint64_t seed, const std::string& source) {
        std::string text;
        {
            py::gil_scoped_release r;
            text = api::audit_file(n_rows, k, budget, seed, source);
        }
        return py::bytes(text);  // written as they are, byte for byte the file mano audit writes
    });
    m.def("parse_audit", [](const py::bytes& text, const std::string& file, std::uint64_t n_rows, std::size_t k,
                            const std::string& set_name) {
        std::string bytes = text;  // the file's bytes as they are: the core reads UTF-8 and its BOM
        py::gil_scoped_release r;
        return api::parse_audit(bytes, file, n_rows, k, set_name);
    });
    m.def("audit_rows", [](const std::string& labeled, const std::string& name, std::uint64_t n_rows, std::size_t k) {
        py::gil_scoped_release r;
        return api::audit_rows(labeled, name, n_rows, k);
    });
    m.def("predict_audited", [](const std::string& calibration, const std::string& result, const std::string& audited,
                                double level, const std::string& warnings) {
        py::gil_scoped_release r;
        return api::predict_audited(calibration, result, audited, level, warnings);
    });
    m.attr("audit_array_source") = mano::audit_array_source;
    m.attr("label_shift_max_copies") = mano::label_shift_max_copies;
    m.attr("label_shift_max_seed") = mano::label_shift_max_seed;
    m.def("read_rows", &read_rows);
    m.attr("audit_max_rows") = mano::audit_max_rows;
    m.attr("max_interval_level") = mano::max_interval_level;
    m.attr("audit_max_bytes") = mano::audit_max_bytes;
    m.attr("audit_max_seed") = mano::audit_max_seed;
    m.attr("audit_min_rows") = mano::audit_min_rows;
    m.def("scoring_options", &api::scoring_options, py::arg("calibration_json"), py::arg("rows"), py::arg("cols"),
          py::arg("input") = "logits");
    m.def("probabilities_warning", &mano::probabilities_warning);
    // the classes of rows of `columns` values of an input kind, and back (src/mano/scan/input_kind.hpp)
    m.def("classes_of", [](const std::string& input, std::size_t columns) { return mano::classes_of(mano::parse_input_kind(input), columns); });
    m.def("columns_of", [](const std::string& input, std::size_t classes) { return mano::columns_of(mano::parse_input_kind(input), classes); });
    m.attr("keeps_rows_max_logits") = mano::keeps_rows_max_logits;
    m.attr("keeps_rows_max_k") = mano::keeps_rows_max_k;
    m.def("default_methods", &api::default_methods, py::arg("k"), py::arg("n"), py::arg("inputs"), py::arg("input") = "logits");
    m.def("methods", &api::methods);
    m.def("options_table", [](const std::string& request) { return mano::options_request(nlohmann::json::parse(request)).dump(); });
    m.def("architectures", &mano::available_architectures);
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
    m.attr("version") = mano::version_string;
    add_monitor(m);
}
