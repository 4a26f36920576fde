// The `mano` command: estimate a classifier's accuracy from its logits on unlabeled data.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <mano/mano.hpp>

#include "cli/audit.hpp"
#include "cli/commands.hpp"
#ifdef MANO_WITH_MONITOR
#include "cli/monitor_commands.hpp"
#endif

namespace {

using namespace mano::cli;

constexpr const char* formats = ".npy, .npz, .csv, .tsv, .safetensors, or raw float32 with --shape N,K";
constexpr const char* outside_help =
    "read files the manifest names outside its own folder (absolute paths elsewhere, '..', symbolic links "
    "elsewhere); refused by default";

// Each subcommand's options, registered on the app; the subcommand is returned.
CLI::App* add_score(CLI::App& app, score_command& c) {
    auto* score = app.add_subcommand("score", std::string("Score logit files (N x K; ") + formats +
                                                  ") with MaNo and the baselines");
    score->add_option("files", c.files, "logit files, one N x K array each")->required()->check(CLI::ExistingFile);
    score->add_flag("--json", c.json, "one JSON object per file (or chunk), as JSON Lines");
    score->add_option("--chunk-size", c.chunk_size,
                      "one result per consecutive chunk of R rows (a stream in time order)")
        ->check(whole_number(true));
    score->add_option("--rows", c.rows, "FIRST:END: score only these rows (0-based, END excluded), e.g. a shard");
    score->add_option("--emit-state", c.emit_state,
                      "also write the mergeable accumulator state (JSON) to this file, for mano merge");
    score->add_option("--calibration", c.calibration,
                      "a calibration from mano calibrate: print estimated accuracies with intervals")
        ->check(CLI::ExistingFile);
    score->add_option("--level", c.level, "prediction interval level with --calibration")
        ->capture_default_str()
        ->check(table_option("level"));
    score->add_flag("--correctness-histogram", c.correctness_histogram,
                    "also give each result its rows by confidence bin and predicted class (docs/audit.md)");
    c.methods.add_to(score, true);
    c.input.add_to(score);
    return score;
}

CLI::App* add_methods(CLI::App& app, methods_command& c) {
    auto* methods = app.add_subcommand("methods", "List the estimators: what each returns, the inputs it needs, whether it "
                                                  "is on by default, its cost");
    methods->add_flag("--json", c.json, "print the table as JSON");
    return methods;
}

CLI::App* add_merge(CLI::App& app, merge_command& c) {
    auto* merge = app.add_subcommand("merge", "Finish a score from accumulator states (mano score --emit-state), in row order");
    merge->add_option("states", c.states, "state files, in the order of their rows")->required()->check(CLI::ExistingFile);
    merge->add_flag("--json", c.json, "print the result as JSON");
    merge->add_option("--emit-state", c.emit_state, "also write the merged state, for a further merge");
    return merge;
}

CLI::App* add_eval(CLI::App& app, eval_command& c) {
    auto* eval = app.add_subcommand("eval", "Evaluate every method over labeled shifted sets (R2, Spearman, Kendall, LOO MAE)");
    eval->add_option("manifest", c.manifest, "manifest.json: {\"source\"?, \"sets\": [{\"name\", \"logits\", \"labels\", \"group\"?}]}")
        ->required()->check(CLI::ExistingFile);
    eval->add_flag("--allow-outside-paths", c.allow_outside_paths, outside_help);
    eval->add_flag("--json", c.json, "print the report as JSON");
    eval->add_flag("--markdown", c.markdown, "print the tables as Markdown");
    eval->add_option("--plots", c.plots, "write one SVG per method (score vs accuracy, fitted line) into this folder");
    eval->add_option("--group", c.groups, "use only the sets of this group (repeatable)");
    c.methods.add_to(eval, false, "--batch-size", true);
    c.input.add_to(eval);
    return eval;
}

CLI::App* add_calibrate(CLI::App& app, calibrate_command& c) {
    auto* cal = app.add_subcommand("calibrate", "Fit accuracy ~ a * score + b per method on the labeled sets of a manifest");
    cal->add_option("manifest", c.manifest, "manifest.json (as for eval)")->check(CLI::ExistingFile);
    cal->add_flag("--allow-outside-paths", c.allow_outside_paths, outside_help);
    cal->add_option("-o,--output", c.output, "write the calibration here (default: print it)");
    cal->add_option("--group", c.groups, "fit on the sets of this group only (repeatable)");
    c.methods.add_to(cal, false, "--batch-size", true);
    c.input.add_to(cal, false);
    cal->add_option("--input", c.input_text,
                    "the manifest's files: what their values are, logits (default) | probabilities | binary-logit | "
                    "binary-probability (as mano score --input); with --model: the labeled image folder VAL_DIR");
    cal->add_option("--label-shift-copies", c.label_shift_copies,
                    "label-shifted copies of each labeled set added to the intervals (Dirichlet class mixes; 0: none)")
        ->capture_default_str()
        ->check(whole_number(false, mano::label_shift_max_copies));
    cal->add_option("--label-shift-seed", c.label_shift_seed, "the seed of the copies' draws")
        ->capture_default_str()
        ->check(whole_number(false, mano::label_shift_max_seed));
    cal->add_flag("--synthesize", c.synthesize,
                  "with --model and --input VAL_DIR: fit on synthetic shifts (9 corruptions x 5 severities) of a labeled "
                  "image folder");
    cal->add_option("--seed", c.seed, "with --synthesize: the seed of the corruptions' random draws")
        ->capture_default_str()
        ->check(whole_number(false));
    c.run.add_to(cal, "--infer-batch-size", false);
    return cal;
}

CLI::App* add_infer(CLI::App& app, infer_command& c) {
    auto* infer = app.add_subcommand("infer", "Run a TorchScript model over images or a tensor and estimate its accuracy "
                                              "(LibTorch; GPU when present)");
    c.run.add_to(infer, "--batch-size");
    infer->add_option("--labels", c.labels, "integer labels of a .npy input (an image folder's come from its "
                                                     "class subfolders)")
        ->check(CLI::ExistingFile);
    infer->add_option("--out", c.out, "also write the logits to this .npy file (N x K float32, written as they come)");
    infer->add_flag("--json", c.json, "print the result as JSON");
    infer->add_option("--calibration", c.calibration,
                      "a calibration (mano calibrate): print the estimated accuracy with its interval")
        ->check(CLI::ExistingFile);
    infer->add_option("--level", c.level, "prediction interval level with --calibration")
        ->capture_default_str()
        ->check(table_option("level"));
    infer->add_flag("--quiet", c.quiet, "no progress or speed line on stderr");
    c.methods.add_to(infer, false, "--mano-batch-size");
    return infer;
}

CLI::App* add_predict(CLI::App& app, predict_command& c) {
    auto* predict = app.add_subcommand("predict", "Estimate accuracy with a prediction interval from a calibration");
    predict->add_option("--calibration", c.calibration, "cal.json from mano calibrate")
        ->required()->check(CLI::ExistingFile);
    predict->add_option("files", c.files, "logit files")->check(CLI::ExistingFile);
    predict->add_option("--manifest", c.manifest, "predict the sets of a manifest instead (with labels: coverage)")
        ->check(CLI::ExistingFile);
    predict->add_flag("--allow-outside-paths", c.allow_outside_paths, outside_help);
    predict->add_option("--group", c.groups, "with --manifest: only the sets of this group (repeatable)");
    predict->add_option("--methods", c.methods, "only these calibrated methods (comma-separated)")->delimiter(',');
    predict->add_flag("--json", c.json, "JSON output");
    predict->add_option("--level", c.level, "prediction interval level")
        ->capture_default_str()
        ->check(table_option("level"));
    predict->add_option("--audit", c.audit,
                        "a labeled audit file of the set (mano audit, with a column label): its accuracy from those rows "
                        "(PPI on the calibration's correctness model)")
        ->check(CLI::ExistingFile);
    c.input.add_to(predict);
    return predict;
}

// The app with its version line and every subcommand's options.
void set_version(CLI::App& app) {
    // The kernels this CPU runs are a fact of this host, so they are here and not in --help
    // (docs/cli.md is generated from --help and must read the same on every machine).
    app.set_version_flag("--version", [] {
        const auto runs = mano::available_architectures();
        return std::string("mano ") + mano::version_string + "\nkernels compiled: " +
               mano::join(mano::compiled_architectures(), ", ") + "\nkernels this CPU runs: " + mano::join(runs, ", ") +
               " (the first is the default; --arch or MANO_ARCH picks another)";
    });
}

// Every subcommand's options, and which subcommand was given.
struct commands {
    score_command score;
    methods_command methods;
    merge_command merge;
    eval_command eval;
    calibrate_command calibrate;
    infer_command infer;
    predict_command predict;
    audit_command audit;
    std::vector<std::pair<CLI::App*, std::function<int()>>> runs;  // each subcommand and what runs it

    void add_to(CLI::App& app) {
        CLI::App* s = add_score(app, score);
        CLI::App* m = add_methods(app, methods);
        CLI::App* g = add_merge(app, merge);
        CLI::App* e = add_eval(app, eval);
        CLI::App* c = add_calibrate(app, calibrate);
        CLI::App* i = add_infer(app, infer);
        CLI::App* p = add_predict(app, predict);
        CLI::App* a = add_audit_command(app, audit);
        // in the order main() tried them before: a subcommand's run is its own
        runs = {{s, [this] { return run_score(score); }},     {g, [this] { return run_merge(merge); }},
                {m, [this] { return run_methods(methods); }}, {e, [this] { return run_eval(eval); }},
                {c, [this] { return run_calibrate(calibrate); }}, {p, [this] { return run_predict(predict); }},
                {a, [this] { return run_audit(audit); }},     {i, [this] { return run_infer(infer); }}};
    }
    int run() const {
        for (const auto& [app, run] : runs)
            if (app->parsed()) return run();
        return 1;
    }
};

// The parse and the run, each failure said in one line and an exit code.
int parse_and_run(CLI::App& app, int argc, char** argv, const std::function<int()>& run) {
    try {
        app.parse(argc, argv);
        return run();
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "mano: error: " << mano::printable(e.what()) << " (see mano --help)\n";
        return 2;
    } catch (const mano::error& e) {
        std::cerr << "mano: error: " << mano::printable(e.what()) << '\n';
        return 2;
    } catch (const std::bad_alloc&) {
        std::cerr << "mano: error: out of memory\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "mano: internal error: " << mano::printable(e.what()) << '\n';
        return 1;
    }
}

// Output that did not reach its destination (a full disk, /dev/full, a closed pipe) is a
// failure, not a silent success.
int flushed(int code) {
    errno = 0;
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0) {
        const int why = errno;
        std::cerr << "mano: error: cannot write the output" << (why ? std::string(" (") + std::strerror(why) + ")" : "") << '\n';
        return 1;
    }
    return code;
}

}  // namespace

char** mano::cli::command_line = nullptr;

int main(int argc, char** argv) {
    mano::cli::command_line = argv;
    CLI::App app{"mano: estimate a classifier's accuracy on unlabeled data from its logits (MaNo, NeurIPS 2024)"};
    set_version(app);
    app.require_subcommand(1);
    commands all;
    all.add_to(app);
#ifdef MANO_WITH_MONITOR
    mano::cli::monitor_command monitor_args;
    CLI::App* monitor = mano::cli::add_monitor_command(app, monitor_args);
    const auto run = [&] { return monitor->parsed() ? mano::cli::run_monitor(monitor_args) : all.run(); };
#else
    const auto run = [&] { return all.run(); };
#endif
    return flushed(parse_and_run(app, argc, argv, run));
}
