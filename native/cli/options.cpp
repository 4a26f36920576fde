#include "cli/options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/output.hpp"
#include "host/calibration_file.hpp"
#include "host/scan.hpp"
#include "mano/scan/resolve.hpp"
#include "io/json.hpp"
#include "mano/workflow/source_options.hpp"

namespace mano {
namespace cli {

namespace {

// Model inputs: a batch's buffer is images x pixels, so both are bounded where the options are read.
constexpr std::uint64_t max_images_per_call = 65536;
constexpr std::uint64_t max_image_side = 16384;

const char* const input_help =
    "what the files' values are: logits (default) | probabilities (a softmax: taken through the log, zeros floored at "
    "1.2e-38) | binary-logit (one column, class 1's logit z: the classes [0, z]) | binary-probability (one column, "
    "class 1's probability p: [1 - p, p])";

}  // namespace

void input_args::add_to(CLI::App* app, bool with_input) {
    if (with_input)
        app->add_option("--input", input_name, input_help)
            ->capture_default_str()
            ->check(CLI::IsMember({"logits", "probabilities", "binary-logit", "binary-probability"}));
    app->add_option("--key", read.key, "the array to read from an .npz or .safetensors file with several (default: logits)");
    app->add_option("--shape", shape, "N,K: read files of unknown format as raw little-endian float32 of this shape");
    app->add_option("--label-column", read.label_column, "CSV/TSV: the label column (header name or 0-based index); "
                                                         "it is not a logit");
    app->add_option("--header", header, "CSV/TSV: whether the first line is a header (default: detect)")
        ->check(CLI::IsMember({"yes", "no"}));
    app->add_option("--threads", threads, "threads (default: every core)")->check(whole_number(false, max_threads));
    app->add_flag("--quiet", quiet, "no progress line on stderr");
}

void input_args::finish() {
    if (!shape.empty()) {
        std::size_t n = 0, k = 0, used = 0;
        const auto comma = shape.find(',');
        bool ok = comma != std::string::npos;
        try {
            if (ok) {
                n = std::stoull(shape.substr(0, comma), &used);
                ok = used == comma;
                const std::string rest = shape.substr(comma + 1);
                k = std::stoull(rest, &used);
                ok = ok && used == rest.size() && shape[0] != '-' && rest[0] != '-';
            }
        } catch (const std::exception&) {
            ok = false;
        }
        if (!ok || n == 0 || k == 0)
            throw error("--shape must be N,K with two positive integers (rows, classes), e.g. --shape 10000,1000; got '" +
                        shape + "'");
        read.shape = std::make_pair(n, k);
    }
    if (!header.empty()) read.header = header == "yes";
    try {
        input = parse_input_kind(input_name);
    } catch (const error& e) {
        throw error(std::string("--input: ") + e.what());
    }
}

std::size_t input_args::classes(const std::string& path, std::size_t columns) const {
    try {
        return classes_of(input, columns);
    } catch (const error& e) {
        throw error(path + ": " + e.what());
    }
}

void input_args::warn_probabilities(const std::string& path, const result& r) const {
    if (r.looks_like_probabilities && !quiet) warn(probabilities_warning(path, "--input probabilities"));
}

io::read_options input_args::labels_options() const {
    io::read_options o = read;
    o.key.clear();  // a --key names the logits; labels in a container are the member "labels"
    o.shape.reset();
    return o;
}

std::unique_ptr<io::matrix_reader> input_args::open(const std::string& path) const {
    auto reader = io::open_matrix(path, read);
    if (!quiet)
        for (const auto& note : reader->notes()) warn(note);
    return reader;
}

CLI::Validator whole_number(bool positive, std::uint64_t most) {
    const std::uint64_t least = positive ? 1 : 0;
    return CLI::Validator(
        [least, most](std::string& text) -> std::string {
            const bool digits = !text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == std::string::npos;
            if (digits) {
                const std::uint64_t value = std::stoull(text);
                if (value >= least && value <= most) return "";
            }
            const std::string range = most == whole_number_max
                                          ? ">= " + std::to_string(least) + " below 10^18"
                                          : ">= " + std::to_string(least) + " and <= " + std::to_string(most);
            return "must be a whole number " + range + " (got '" + text + "')";
        },
        most == whole_number_max ? "INT>=" + std::to_string(least)
                                 : "INT in [" + std::to_string(least) + ", " + std::to_string(most) + "]");
}

CLI::Validator real_number(const std::string& range, std::function<bool(double)> allowed) {
    return CLI::Validator(
        [range, allowed](std::string& text) -> std::string {
            errno = 0;
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            const bool parsed = !text.empty() && end == text.c_str() + text.size() && errno != ERANGE;
            if (parsed && std::isfinite(value) && allowed(value)) return "";
            return "must be a finite number" + (range.empty() ? "" : " " + range) + " (got '" + text + "')";
        },
        range.empty() ? "FLOAT" : "FLOAT " + range);
}

CLI::Validator table_option(std::string_view name) {
    const option_row& row = option_row_of(name);
    if (row.type == option_type::real) return real_number(option_range(name), [&row](double x) { return option_allows(row, x); });
    // whole rows: from 0 or 1, up to the row's maximum or whole_number_max
    return whole_number(row.has_min && row.min >= 1, row.has_max ? static_cast<std::uint64_t>(row.max) : whole_number_max);
}

void method_args::add_to(CLI::App* app, bool row_extras, const std::string& batch_flag, bool families) {
    const auto keep = [&](CLI::Option* o) {
        given.push_back(o);
        return o;
    };
    keep(app->add_option("--p", opts.p, "the L_p norm, p " + option_range("p"))
             ->capture_default_str()
             ->check(table_option("p")));
    keep(app->add_option("--eta", opts.eta, "softrun threshold: softmax when the criterion > eta")
             ->capture_default_str()
             ->check(table_option("eta")));
    keep(app->add_option("--taylor-order", opts.taylor_order, "order n >= " + number_text(option_row_of("taylor_order").min) +
                                                                   " of the Taylor normalization")
             ->capture_default_str()
             ->check(table_option("taylor_order")));
    if (families) {
        normalization = "family";
        taylor_orders = {2};
        keep(app->add_option("--normalization", normalization,
                             "family (one branch for all sets: softmax or Taylor, chosen by leave-one-group-out error) | "
                             "softrun (each set's own criterion, the paper's literal rule) | softmax | taylor")
                 ->capture_default_str()
                 ->check(CLI::IsMember({"family", "softrun", "softmax", "taylor"})));
        keep(app->add_option("--taylor-orders", taylor_orders,
                             "with --normalization family: the Taylor orders to choose among (comma-separated)")
                 ->delimiter(',')
                 ->capture_default_str()
                 ->check(table_option("taylor_orders")));
    } else {
        keep(app->add_option("--normalization", normalization, "softrun | softmax | taylor")
                 ->capture_default_str()
                 ->check(CLI::IsMember({"softrun", "softmax", "taylor"})));
    }
    keep(app->add_option(batch_flag, opts.batch_size,
                         "official-code mode: average the scores of batches of B rows (0 = whole set)")
             ->capture_default_str()
             ->check(table_option("batch_size")));
    criterion = keep(app->add_option("--criterion", criterion_value,
                                     "official-code mode: use this criterion instead of computing it")
                         ->check(table_option("criterion")));
    keep(app->add_option("--methods", methods,
                         "comma-separated methods (default: every method whose inputs were given, within its size limits; "
                         "`mano methods` lists them)")
             ->delimiter(','));
    keep(app->add_option("--source-logits", source_logits, "labeled source validation logits: ATC, DoC, temperature"));
    keep(app->add_option("--source-labels", source_labels, "integer labels of the source logits"));
    keep(app->add_option("--label-marginal", label_marginal,
                         "COT's label marginal: uniform, source (class frequencies of the source labels) or a JSON "
                         "file with K numbers")
             ->capture_default_str());
    keep(app->add_option("--temperature", temperature,
                         "temperature for the softmax-based baselines: a number, or fit (on the source set)")
             ->capture_default_str());
    keep(app->add_option("--arch", opts.architecture, "force a kernel (" + join(compiled_architectures(), ", ") +
                                                           "; mano --version names those this CPU runs); default: "
                                                           "MANO_ARCH or the best this CPU runs"));
    if (!row_extras) return;
    keep(app->add_option("--second-logits", second_logits, "a second model's logits on the same inputs: AgreeScore"));
    keep(app->add_option("--features", features, "penultimate features of the same inputs (N x D): Dispersion, Frechet"));
    keep(app->add_option("--source-features", source_features, "penultimate features of the source set: Frechet"));
}

std::optional<calibration> method_args::calibration_or_finish(const std::string& path) {
    if (path.empty()) {
        finish();
        return std::nullopt;
    }
    if (any_given())
        throw error("--calibration fixes how scores are computed (the options it was fitted with); "
                    "leave out the scoring options");
    return host::read_calibration(path);
}

bool method_args::any_given() const {
    return std::any_of(given.begin(), given.end(), [](const CLI::Option* o) { return o->count() > 0; });
}

void method_args::finish() {
    family = normalization == "family";
    opts.norm = parse_normalization(family ? "softrun" : normalization);
    check_criterion_with_family(family, criterion && criterion->count() > 0, front_end::cli);
    if (criterion && criterion->count() > 0) opts.criterion = criterion_value;
    opts.validate();
    if (source_logits.empty() != source_labels.empty()) throw error("--source-logits and --source-labels go together");
    if (temperature != "fit") {
        std::size_t used = 0;
        try {
            opts.temperature = std::stod(temperature, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != temperature.size() || !option_allows("temperature", opts.temperature))
            throw error("--temperature: must be 'fit' or a finite number " + option_range("temperature") + " (got '" +
                        temperature + "')");
    } else if (source_logits.empty()) {
        throw error("--temperature fit needs --source-logits and --source-labels");
    }
    for (const auto& name : methods) parse_method(name);
}

namespace {

// --label-marginal other than "source" (which the source set answers): uniform or a JSON file.
std::vector<double> read_marginal(const std::string& spec, std::size_t k) {
    if (spec == "uniform") return {};
    std::error_code ec;
    if (!std::filesystem::exists(spec, ec))
        throw error("--label-marginal: '" + spec + "' is not uniform, source, or a readable JSON file");
    const nlohmann::json j = io::read_json(spec, "label marginal", io::marginal_max_bytes);
    std::vector<double> marginal;
    try {
        marginal = j.get<std::vector<double>>();
    } catch (const nlohmann::json::exception&) {
        throw error(spec + ": the label marginal must be a JSON array of K numbers summing to 1");
    }
    if (marginal.size() != k)
        throw error(spec + ": the label marginal has " + std::to_string(marginal.size()) + " entries but the logits have " +
                    std::to_string(k) + " classes");
    return marginal;
}

}  // namespace

const options& option_resolver::resolve(std::size_t n, std::size_t columns) {
    // The methods asked for by name, or the table's defaults for this set's size and inputs.
    method_request request{columns, n, input_.input, given_inputs(), {}};
    for (const auto& name : args_.methods) request.named.push_back(parse_method(name));
    const std::vector<method> methods = resolve_methods(request, [](method m, unsigned missing) {
        return "--methods " + std::string(method_name(m)) + " needs " + input_flags(missing);
    }).methods;
    const auto key = std::make_pair(columns, methods);
    auto found = cache_.find(key);
    if (found == cache_.end()) found = cache_.emplace(key, build(columns, methods)).first;
    return found->second;
}

unsigned option_resolver::given_inputs() const {
    return (args_.source_logits.empty() ? 0u : needs_source) | (args_.second_logits.empty() ? 0u : needs_second) |
           (args_.features.empty() ? 0u : needs_features) | (args_.source_features.empty() ? 0u : needs_source_features);
}

std::string option_resolver::input_flags(unsigned inputs) {
    std::vector<std::string> flags;
    if (inputs & needs_source) flags.emplace_back("--source-logits and --source-labels");
    if (inputs & needs_second) flags.emplace_back("--second-logits");
    if (inputs & needs_features) flags.emplace_back("--features");
    if (inputs & needs_source_features) flags.emplace_back("--source-features");
    std::string text;
    for (std::size_t i = 0; i < flags.size(); ++i) text += (i == 0 ? "" : i + 1 == flags.size() ? " and " : ", ") + flags[i];
    return text;
}

options option_resolver::build(std::size_t columns, const std::vector<method>& methods) const {
    options o = args_.opts;
    o.input = input_.input;
    const std::size_t k = classes_of(o.input, columns);
    const bool has_source = !args_.source_logits.empty();
    std::vector<std::int64_t> labels;
    // the source rows as the file holds them (float32 stays float32), read once and kept by the
    // reader until the fits are done
    std::unique_ptr<io::matrix_reader> reader;
    logits_view source_view(static_cast<const float*>(nullptr), 0, columns);
    std::size_t source_rows = 0;
    if (has_source) {
        reader = input_.open(args_.source_logits);
        if (reader->cols() != columns)
            throw error(args_.source_logits + ": the source logits have " + std::to_string(reader->cols()) +
                        (o.input == input_kind::logits ? " classes but the target logits have " : " columns but the target files have ") +
                        std::to_string(columns));
        source_rows = reader->rows();
        if (source_rows > 0) source_view = reader->read(0, source_rows);
        auto label_options = input_.labels_options();
        label_options.expected_rows = source_rows;  // refused before a deflated member is inflated
        labels = io::read_labels(args_.source_labels, label_options);
        if (labels.size() != source_rows)
            throw error(args_.source_labels + ": " + std::to_string(labels.size()) + " labels for " +
                        std::to_string(source_rows) + " source rows in " + args_.source_logits);
    }
    workflow::source_inputs given;
    given.parallel = host::thread_runner(host::thread_count(input_.threads));
    given.source_option = "--source-logits and --source-labels";
    given.temperature_option = "--temperature";
    given.marginal_option = "--label-marginal";
    given.fit_temperature = args_.temperature == "fit";
    given.label_marginal_of_source = args_.label_marginal == "source";
    if (has_source) {
        given.logits = &source_view;
        given.labels = labels.data();
    }
    if (!given.label_marginal_of_source) o.label_marginal = read_marginal(args_.label_marginal, k);
    if (!args_.source_features.empty()) {
        auto reader = input_.open(args_.source_features);
        auto moments = std::make_shared<feature_moments>(reader->cols());
        try {
            // in chunks of about 4 MiB of doubles: the moments are sums, a file of any size streams
            const std::size_t cols = reader->cols(), chunk = std::max<std::size_t>(1, (std::size_t{1} << 19) / cols);
            std::vector<double> rows;
            for (std::size_t at = 0; at < reader->rows(); at += chunk) {
                const std::size_t count = std::min(chunk, reader->rows() - at);
                const auto view = reader->read(at, count);
                rows.resize(count * cols);
                widen_rows(view, 0, count, rows.data());
                moments->push(rows.data(), count);
            }
        } catch (const error& e) {
            throw host::file_error(args_.source_features, e);
        }
        given.features = moments;
    }
    o.methods = methods;
    try {
        return workflow::learn_from_source(o, given);
    } catch (const error& e) {
        if (!has_source) throw;
        throw host::file_error(args_.source_logits, e);
    }
}

void model_args::add_to(CLI::App* app, const std::string& batch_flag, bool with_input) {
    app->add_option("--model", model, "a TorchScript model file (torch.jit.script(m).save(path))");
    if (with_input)
        app->add_option("--input", input, "an image folder (one subfolder per class gives labels) or an N x C x H x W float32 .npy");
    app->add_option("--device", device, "auto | cpu | cuda | cuda:INDEX")->capture_default_str();
    app->add_option("--amp", amp, "off | fp16 | bf16: autocast the model to this type")->capture_default_str();
    app->add_option(batch_flag, batch_size, "images per model call")
        ->capture_default_str()
        ->check(whole_number(true, max_images_per_call));
    app->add_option("--workers", workers, "image decoding threads (default: every core but one, at least one)")
        ->check(whole_number(false, max_threads));
    preprocessing.push_back(app->add_option("--resize", resize, "resize images so that their shorter side is S pixels")
                                ->check(whole_number(true, max_image_side)));
    preprocessing.push_back(
        app->add_option("--crop", crop, "then center-crop C x C pixels")->check(whole_number(true, max_image_side)));
    preprocessing.push_back(app->add_option("--mean", mean, "m,m,m: per-channel mean subtracted from pixels in [0, 1] (default 0,0,0)"));
    preprocessing.push_back(app->add_option("--std", std, "s,s,s: per-channel divisor after the mean (default 1,1,1)"));
}

std::pair<std::size_t, std::size_t> parse_rows(const std::string& text, std::size_t total, const std::string& path) {
    if (text.empty()) return {0, total};
    const auto colon = text.find(':');
    std::size_t first = 0, end = total;
    bool ok = colon != std::string::npos && text.find('-') == std::string::npos;
    try {
        std::size_t used = 0;
        if (ok && colon > 0) {
            first = std::stoull(text.substr(0, colon), &used);
            ok = used == colon;
        }
        const std::string rest = ok ? text.substr(colon + 1) : "";
        if (ok && !rest.empty()) {
            end = std::stoull(rest, &used);
            ok = used == rest.size();
        }
    } catch (const std::exception&) {
        ok = false;
    }
    if (!ok) throw error("--rows must be FIRST:END (0-based, END excluded; either may be left out), got '" + text + "'");
    if (first >= end || end > total)
        throw error(path + ": --rows " + text + " is not a non-empty range within the file's " + std::to_string(total) +
                    " rows");
    return {first, end};
}

}  // namespace cli
}  // namespace mano
