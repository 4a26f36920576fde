// The `mano` command: estimate a classifier's accuracy from its logits on unlabeled data.
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <mano/mano.hpp>

#include "io/npy.hpp"

namespace {

// Bytes of logits read per chunk: memory stays bounded whatever the file size.
constexpr std::size_t chunk_bytes = std::size_t{1} << 22;

struct score_args {
    std::vector<std::string> files;
    bool json = false;
    mano::options opts;
    std::string normalization = "softrun";
    double criterion = 0;
    std::vector<std::string> methods;
    std::string source_logits, source_labels, second_logits, features, source_features;
    std::string label_marginal = "uniform";
    std::string temperature = "1";
};

mano::error file_error(const std::string& path, const mano::error& e) { return mano::error(path + ": " + e.what()); }

// Reads a whole (small) .npy of floats into doubles, e.g. source logits.
std::vector<double> read_all(mano::io::npy_reader& reader) {
    std::vector<double> out(reader.rows() * reader.cols());
    const auto rows = reader.next(reader.rows());
    mano::widen_rows(rows, 0, rows.rows(), out.data());
    return out;
}

std::vector<double> read_marginal(const std::string& spec, std::size_t k, const std::vector<std::int64_t>& source_labels) {
    if (spec == "uniform") return {};
    if (spec == "source") {
        if (source_labels.empty()) throw mano::error("--label-marginal source needs --source-labels");
        std::vector<double> counts(k, 0.0);
        for (const auto label : source_labels) {
            if (label < 0 || static_cast<std::size_t>(label) >= k)
                throw mano::error("--source-labels: label " + std::to_string(label) + " is outside [0, " + std::to_string(k) + ")");
            counts[static_cast<std::size_t>(label)] += 1;
        }
        for (auto& c : counts) c /= static_cast<double>(source_labels.size());
        return counts;
    }
    std::ifstream in(spec);
    if (!in) throw mano::error("--label-marginal: '" + spec + "' is not uniform, source, or a readable JSON file");
    std::vector<double> marginal;
    try {
        marginal = nlohmann::json::parse(in).get<std::vector<double>>();
    } catch (const nlohmann::json::exception&) {
        throw mano::error(spec + ": the label marginal must be a JSON array of K numbers summing to 1");
    }
    if (marginal.size() != k)
        throw mano::error(spec + ": the label marginal has " + std::to_string(marginal.size()) + " entries but the logits have " +
                          std::to_string(k) + " classes");
    return marginal;
}

// Resolves methods, temperature, source model and source features for logits with K classes.
mano::options resolve_options(const score_args& args, std::size_t k) {
    mano::options o = args.opts;
    const bool has_source = !args.source_logits.empty();
    if (has_source != !args.source_labels.empty())
        throw mano::error("--source-logits and --source-labels go together");
    std::vector<std::int64_t> labels;
    std::vector<double> source;
    std::size_t source_rows = 0;
    if (has_source) {
        mano::io::npy_reader reader(args.source_logits);
        if (reader.cols() != k)
            throw mano::error(args.source_logits + ": the source logits have " + std::to_string(reader.cols()) +
                              " classes but the target logits have " + std::to_string(k));
        source_rows = reader.rows();
        source = read_all(reader);
        labels = mano::io::read_labels(args.source_labels);
        if (labels.size() != source_rows)
            throw mano::error(args.source_labels + ": " + std::to_string(labels.size()) + " labels for " +
                              std::to_string(source_rows) + " source rows in " + args.source_logits);
    }
    const mano::logits_view source_view(source.data(), source_rows, k);
    try {
        if (args.temperature == "fit") {
            if (!has_source) throw mano::error("--temperature fit needs --source-logits and --source-labels");
            o.temperature = mano::fit_temperature(source_view, labels.data());
        } else {
            std::size_t used = 0;
            try {
                o.temperature = std::stod(args.temperature, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != args.temperature.size())
                throw mano::error("--temperature must be 'fit' or a number > 0 (got '" + args.temperature + "')");
        }
        if (has_source) o.source = mano::fit_source(source_view, labels.data(), o.temperature);
    } catch (const mano::error& e) {
        throw has_source ? file_error(args.source_logits, e) : e;
    }
    o.label_marginal = read_marginal(args.label_marginal, k, labels);
    if (!args.source_features.empty()) {
        mano::io::npy_reader reader(args.source_features);
        auto moments = std::make_shared<mano::feature_moments>(reader.cols());
        try {
            const auto rows = read_all(reader);
            moments->push(rows.data(), reader.rows());
        } catch (const mano::error& e) {
            throw file_error(args.source_features, e);
        }
        o.source_features = moments;
    }

    // Which inputs each method needs, to pick the default and to refuse impossible requests.
    const auto missing = [&](mano::method m) -> const char* {
        switch (m) {
            case mano::method::atc_mc:
            case mano::method::atc_ne:
            case mano::method::doc: return has_source ? nullptr : "--source-logits and --source-labels";
            case mano::method::agreement: return args.second_logits.empty() ? "--second-logits" : nullptr;
            case mano::method::dispersion: return args.features.empty() ? "--features" : nullptr;
            case mano::method::frechet:
                return args.features.empty() || args.source_features.empty() ? "--features and --source-features" : nullptr;
            default: return nullptr;
        }
    };
    if (args.methods.empty()) {
        o.methods = mano::default_methods(k);
        for (const auto m : {mano::method::atc_mc, mano::method::atc_ne, mano::method::doc, mano::method::agreement,
                             mano::method::dispersion, mano::method::frechet})
            if (!missing(m)) o.methods.push_back(m);
    } else {
        for (const auto& name : args.methods) {
            const auto m = mano::parse_method(name);
            if (const char* need = missing(m)) throw mano::error("--methods " + name + " needs " + need);
            o.methods.push_back(m);
        }
    }
    return o;
}

// Options resolved once per number of classes: the source set is read and fitted once, not per file.
using resolved_options = std::map<std::size_t, mano::options>;

mano::result score_file(const std::string& path, const score_args& args, resolved_options& resolved) {
    mano::io::npy_reader reader(path);
    std::unique_ptr<mano::io::npy_reader> second, features;
    if (!args.second_logits.empty()) second = std::make_unique<mano::io::npy_reader>(args.second_logits);
    if (!args.features.empty()) features = std::make_unique<mano::io::npy_reader>(args.features);
    if (second && (second->rows() != reader.rows() || second->cols() != reader.cols()))
        throw mano::error(args.second_logits + ": the second model's logits are " + std::to_string(second->rows()) + " x " +
                          std::to_string(second->cols()) + " but " + path + " is " + std::to_string(reader.rows()) +
                          " x " + std::to_string(reader.cols()) + "; both must score the same inputs");
    if (features && features->rows() != reader.rows())
        throw mano::error(args.features + ": " + std::to_string(features->rows()) + " feature rows but " + path + " has " +
                          std::to_string(reader.rows()) + " rows of logits");
    auto found = resolved.find(reader.cols());
    if (found == resolved.end()) found = resolved.emplace(reader.cols(), resolve_options(args, reader.cols())).first;
    const mano::options& opts = found->second;
    try {
        mano::accumulator acc(reader.cols(), opts);
        const std::size_t row_bytes = std::max<std::size_t>(1, reader.cols() * mano::dtype_size(reader.type()));
        const std::size_t chunk_rows = std::max<std::size_t>(1, chunk_bytes / row_bytes);
        for (auto rows = reader.next(chunk_rows); rows.rows() > 0; rows = reader.next(chunk_rows)) {
            mano::row_inputs extra;
            mano::logits_view second_rows = second ? second->next(rows.rows()) : rows;
            mano::logits_view feature_rows = features ? features->next(rows.rows()) : rows;
            if (second) extra.second = &second_rows;
            if (features) extra.features = &feature_rows;
            acc.push(rows, extra);
        }
        return acc.finalize();
    } catch (const mano::error& e) {
        throw file_error(path, e);
    }
}

std::string fixed(double x, int digits) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, x);
    return text;
}

// The number a table shows for each method: its score, or its accuracy estimate.
std::vector<std::pair<std::string, double>> table_values(const mano::result& r) {
    std::vector<std::pair<std::string, double>> values;
    const auto methods = r.to_json().at("methods");
    for (int i = 0; i < mano::method_count; ++i) {
        const std::string name = mano::method_name(static_cast<mano::method>(i));
        if (!methods.contains(name)) continue;
        const auto& m = methods.at(name);
        values.emplace_back(name, m.contains("score") ? m.at("score").get<double>() : m.at("accuracy").get<double>());
    }
    return values;
}

void print_table(const std::vector<std::string>& files, const std::vector<mano::result>& results) {
    std::size_t width = 4;
    for (const auto& f : files) width = std::max(width, f.size());
    const auto header = table_values(results.front());
    std::printf("%-*s %9s %6s", static_cast<int>(width), "file", "n", "k");
    for (const auto& [name, value] : header) std::printf(" %*s", static_cast<int>(std::max<std::size_t>(10, name.size())), name.c_str());
    std::printf(" %10s %-13s\n", "criterion", "normalization");
    for (std::size_t i = 0; i < files.size(); ++i) {
        const auto& r = results[i];
        std::printf("%-*s %9zu %6zu", static_cast<int>(width), files[i].c_str(), r.n, r.k);
        for (const auto& [name, value] : table_values(r))
            std::printf(" %*s", static_cast<int>(std::max<std::size_t>(10, name.size())), fixed(value, 6).c_str());
        if (r.mano) std::printf(" %10s %-13s", fixed(r.mano->criterion, 4).c_str(), mano::normalization_name(r.mano->used));
        std::printf("\n");
    }
    std::printf("(scores for mano, confscore, entropy, nuclear, mde, dispersion, frechet and the softrun variants; "
                "estimated accuracy for cot, atc_mc, atc_ne, doc, agreement)\n");
}

int run_score(score_args& args, bool criterion_given) {
    args.opts.norm = mano::parse_normalization(args.normalization);
    if (criterion_given) args.opts.criterion = args.criterion;
    args.opts.validate();
    if (args.files.size() > 1 && (!args.second_logits.empty() || !args.features.empty()))
        throw mano::error("--second-logits and --features describe one logits file; score the files one at a time");
    std::vector<mano::result> results;
    resolved_options resolved;
    for (const auto& f : args.files) results.push_back(score_file(f, args, resolved));
    if (args.json) {
        for (std::size_t i = 0; i < results.size(); ++i) {
            auto j = results[i].to_json();
            j["file"] = args.files[i];
            std::cout << j.dump() << '\n';
        }
    } else {
        print_table(args.files, results);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"mano: estimate a classifier's accuracy on unlabeled data from its logits (MaNo, NeurIPS 2024)"};
    app.set_version_flag("--version", std::string("mano ") + mano::version_string);
    app.require_subcommand(1);

    score_args args;
    auto* score = app.add_subcommand("score", "Score logit files (.npy, N x K, float16/32/64) with MaNo and the baselines");
    score->add_option("files", args.files, "logit files, one N x K array each")->required()->check(CLI::ExistingFile);
    score->add_flag("--json", args.json, "print one JSON object per file instead of a table");
    score->add_option("--p", args.opts.p, "the L_p norm, p > 1")->capture_default_str();
    score->add_option("--eta", args.opts.eta, "softrun threshold: softmax when the criterion > eta")->capture_default_str();
    score->add_option("--taylor-order", args.opts.taylor_order, "order n >= 1 of the Taylor normalization")->capture_default_str();
    score->add_option("--normalization", args.normalization, "softrun | softmax | taylor")
        ->capture_default_str()->check(CLI::IsMember({"softrun", "softmax", "taylor"}));
    score->add_option("--batch-size", args.opts.batch_size,
                      "official-code mode: average the scores of batches of B rows (0 = whole set)")->capture_default_str();
    auto* criterion = score->add_option("--criterion", args.criterion,
                                        "official-code mode: use this criterion instead of computing it");
    score->add_option("--methods", args.methods, "comma-separated methods (default: every method whose inputs were given)")
        ->delimiter(',');
    score->add_option("--source-logits", args.source_logits, "labeled source validation logits (.npy): ATC, DoC, temperature")
        ->check(CLI::ExistingFile);
    score->add_option("--source-labels", args.source_labels, "integer labels of the source logits (.npy)")->check(CLI::ExistingFile);
    score->add_option("--second-logits", args.second_logits, "a second model's logits on the same inputs (.npy): AgreeScore")
        ->check(CLI::ExistingFile);
    score->add_option("--features", args.features, "penultimate features of the same inputs (.npy, N x D): Dispersion, Frechet")
        ->check(CLI::ExistingFile);
    score->add_option("--source-features", args.source_features, "penultimate features of the source set (.npy): Frechet")
        ->check(CLI::ExistingFile);
    score->add_option("--label-marginal", args.label_marginal,
                      "COT's label marginal: uniform, source (class frequencies of --source-labels) or a JSON file")
        ->capture_default_str();
    score->add_option("--temperature", args.temperature,
                      "temperature for the softmax-based baselines: a number, or fit (on the source set)")
        ->capture_default_str();
    score->add_option("--arch", args.opts.architecture,
                      "force a SIMD kernel (" + [] {
                          std::string s;
                          for (const auto& a : mano::available_architectures()) s += (s.empty() ? "" : ", ") + a;
                          return s;
                      }() + "); default: MANO_ARCH or the best available");

    try {
        app.parse(argc, argv);
        if (score->parsed()) return run_score(args, criterion->count() > 0);
        return 1;
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "mano: error: " << e.what() << " (see mano --help)\n";
        return 2;
    } catch (const mano::error& e) {
        std::cerr << "mano: error: " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "mano: internal error: " << e.what() << '\n';
        return 1;
    }
}
