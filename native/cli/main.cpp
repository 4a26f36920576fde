// The `mano` command: estimate a classifier's accuracy from its logits on unlabeled data.
#include <cstdio>
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
};

mano::result score_file(const std::string& path, const mano::options& opts) {
    mano::io::npy_reader reader(path);
    try {
        mano::accumulator acc(reader.cols(), opts);
        const std::size_t row_bytes = std::max<std::size_t>(1, reader.cols() * mano::dtype_size(reader.type()));
        const std::size_t chunk_rows = std::max<std::size_t>(1, chunk_bytes / row_bytes);
        for (auto rows = reader.next(chunk_rows); rows.rows() > 0; rows = reader.next(chunk_rows)) acc.push(rows);
        return acc.finalize();
    } catch (const mano::error& e) {
        throw mano::error(path + ": " + e.what());
    }
}

std::string fixed(double x, int digits) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, x);
    return text;
}

void print_table(const std::vector<std::string>& files, const std::vector<mano::result>& results) {
    std::size_t width = 4;
    for (const auto& f : files) width = std::max(width, f.size());
    std::printf("%-*s %10s %7s %10s %10s %-14s\n", static_cast<int>(width), "file", "n", "k", "mano",
                "criterion", "normalization");
    for (std::size_t i = 0; i < files.size(); ++i) {
        const auto& r = results[i];
        std::printf("%-*s %10zu %7zu %10s %10s %-14s\n", static_cast<int>(width), files[i].c_str(), r.n, r.k,
                    fixed(r.mano.score, 6).c_str(), fixed(r.mano.criterion, 4).c_str(),
                    mano::normalization_name(r.mano.used));
    }
}

int run_score(score_args& args, bool criterion_given) {
    args.opts.norm = mano::parse_normalization(args.normalization);
    if (criterion_given) args.opts.criterion = args.criterion;
    args.opts.validate();
    std::vector<mano::result> results;
    for (const auto& f : args.files) results.push_back(score_file(f, args.opts));
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
    auto* score = app.add_subcommand("score", "Score logit files (.npy, N x K, float16/32/64) with MaNo");
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
