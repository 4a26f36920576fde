// The `mano` command: estimate a classifier's accuracy from its logits on unlabeled data.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include <mano/mano.hpp>

#include "cli/audit.hpp"
#include "cli/commands.hpp"
#ifdef MANO_WITH_MONITOR
#include "cli/monitor_commands.hpp"
#endif

namespace {

constexpr const char* formats = ".npy, .npz, .csv, .tsv, .safetensors, or raw float32 with --shape N,K";
constexpr const char* outside_help =
    "read files the manifest names outside its own folder (absolute paths elsewhere, '..', symbolic links "
    "elsewhere); refused by default";

}  // namespace

char** mano::cli::command_line = nullptr;

int main(int argc, char** argv) {
    using namespace mano::cli;
    command_line = argv;
    CLI::App app{"mano: estimate a classifier's accuracy on unlabeled data from its logits (MaNo, NeurIPS 2024)"};
    // The kernels this CPU runs are a fact of this host, so they are here and not in --help
    // (docs/cli.md is generated from --help and must read the same on every machine).
    app.set_version_flag("--version", [] {
        const auto runs = mano::available_architectures();
        return std::string("mano ") + mano::version_string + "\nkernels compiled: " +
               mano::join(mano::compiled_architectures(), ", ") + "\nkernels this CPU runs: " + mano::join(runs, ", ") +
               " (the first is the default; --arch or MANO_ARCH picks another)";
    });
    app.require_subcommand(1);

    score_command score_args;
    auto* score = app.add_subcommand("score", std::string("Score logit files (N x K; ") + formats +
                                                  ") with MaNo and the baselines");
    score->add_option("files", score_args.files, "logit files, one N x K array each")->required()->check(CLI::ExistingFile);
    score->add_flag("--json", score_args.json, "one JSON object per file (or chunk), as JSON Lines");
    score->add_option("--chunk-size", score_args.chunk_size,
                      "one result per consecutive chunk of R rows (a stream in time order)")
        ->check(whole_number(true));
    score->add_option("--rows", score_args.rows, "FIRST:END: score only these rows (0-based, END excluded), e.g. a shard");
    score->add_option("--emit-state", score_args.emit_state,
                      "also write the mergeable accumulator state (JSON) to this file, for mano merge");
    score->add_option("--calibration", score_args.calibration,
                      "a calibration from mano calibrate: print estimated accuracies with intervals")
        ->check(CLI::ExistingFile);
    score->add_option("--level", score_args.level, "prediction interval level with --calibration")
        ->capture_default_str()
        ->check(real_number(mano::interval_level_range(), mano::interval_level_ok));
    score->add_flag("--correctness-histogram", score_args.correctness_histogram,
                    "also give each result its rows by confidence bin and predicted class (docs/audit.md)");
    score_args.methods.add_to(score, true);
    score_args.input.add_to(score);

    methods_command methods_args;
    auto* methods = app.add_subcommand("methods", "List the estimators: what each returns, the inputs it needs, whether it "
                                                  "is on by default, its cost");
    methods->add_flag("--json", methods_args.json, "print the table as JSON");

    merge_command merge_args;
    auto* merge = app.add_subcommand("merge", "Finish a score from accumulator states (mano score --emit-state), in row order");
    merge->add_option("states", merge_args.states, "state files, in the order of their rows")->required()->check(CLI::ExistingFile);
    merge->add_flag("--json", merge_args.json, "print the result as JSON");
    merge->add_option("--emit-state", merge_args.emit_state, "also write the merged state, for a further merge");

    eval_command eval_args;
    auto* eval = app.add_subcommand("eval", "Evaluate every method over labeled shifted sets (R2, Spearman, Kendall, LOO MAE)");
    eval->add_option("manifest", eval_args.manifest, "manifest.json: {\"source\"?, \"sets\": [{\"name\", \"logits\", \"labels\", \"group\"?}]}")
        ->required()->check(CLI::ExistingFile);
    eval->add_flag("--allow-outside-paths", eval_args.allow_outside_paths, outside_help);
    eval->add_flag("--json", eval_args.json, "print the report as JSON");
    eval->add_flag("--markdown", eval_args.markdown, "print the tables as Markdown");
    eval->add_option("--plots", eval_args.plots, "write one SVG per method (score vs accuracy, fitted line) into this folder");
    eval->add_option("--group", eval_args.groups, "use only the sets of this group (repeatable)");
    eval_args.methods.add_to(eval, false, "--batch-size", true);
    eval_args.input.add_to(eval);

    calibrate_command cal_args;
    auto* cal = app.add_subcommand("calibrate", "Fit accuracy ~ a * score + b per method on the labeled sets of a manifest");
    cal->add_option("manifest", cal_args.manifest, "manifest.json (as for eval)")->check(CLI::ExistingFile);
    cal->add_flag("--allow-outside-paths", cal_args.allow_outside_paths, outside_help);
    cal->add_option("-o,--output", cal_args.output, "write the calibration here (default: print it)");
    cal->add_option("--group", cal_args.groups, "fit on the sets of this group only (repeatable)");
    cal_args.methods.add_to(cal, false, "--batch-size", true);
    cal_args.input.add_to(cal, false);
    cal->add_option("--input", cal_args.input_text,
                    "the manifest's files: what their values are, logits (default) | probabilities | binary-logit | "
                    "binary-probability (as mano score --input); with --model: the labeled image folder VAL_DIR");
    cal->add_option("--label-shift-copies", cal_args.label_shift_copies,
                    "label-shifted copies of each labeled set added to the intervals (Dirichlet class mixes; 0: none)")
        ->capture_default_str()
        ->check(whole_number(false, mano::label_shift_max_copies));
    cal->add_option("--label-shift-seed", cal_args.label_shift_seed, "the seed of the copies' draws")
        ->capture_default_str()
        ->check(whole_number(false, mano::label_shift_max_seed));
    cal->add_flag("--synthesize", cal_args.synthesize,
                  "with --model and --input VAL_DIR: fit on synthetic shifts (9 corruptions x 5 severities) of a labeled "
                  "image folder");
    cal->add_option("--seed", cal_args.seed, "with --synthesize: the seed of the corruptions' random draws")
        ->capture_default_str()
        ->check(whole_number(false));
    cal_args.run.add_to(cal, "--infer-batch-size", false);

    infer_command infer_args;
    auto* infer = app.add_subcommand("infer", "Run a TorchScript model over images or a tensor and estimate its accuracy "
                                              "(LibTorch; GPU when present)");
    infer_args.run.add_to(infer, "--batch-size");
    infer->add_option("--labels", infer_args.labels, "integer labels of a .npy input (an image folder's come from its "
                                                     "class subfolders)")
        ->check(CLI::ExistingFile);
    infer->add_option("--out", infer_args.out, "also write the logits to this .npy file (N x K float32, written as they come)");
    infer->add_flag("--json", infer_args.json, "print the result as JSON");
    infer->add_option("--calibration", infer_args.calibration,
                      "a calibration (mano calibrate): print the estimated accuracy with its interval")
        ->check(CLI::ExistingFile);
    infer->add_option("--level", infer_args.level, "prediction interval level with --calibration")
        ->capture_default_str()
        ->check(real_number(mano::interval_level_range(), mano::interval_level_ok));
    infer->add_flag("--quiet", infer_args.quiet, "no progress or speed line on stderr");
    infer_args.methods.add_to(infer, false, "--mano-batch-size");

    predict_command predict_args;
    auto* predict = app.add_subcommand("predict", "Estimate accuracy with a prediction interval from a calibration");
    predict->add_option("--calibration", predict_args.calibration, "cal.json from mano calibrate")
        ->required()->check(CLI::ExistingFile);
    predict->add_option("files", predict_args.files, "logit files")->check(CLI::ExistingFile);
    predict->add_option("--manifest", predict_args.manifest, "predict the sets of a manifest instead (with labels: coverage)")
        ->check(CLI::ExistingFile);
    predict->add_flag("--allow-outside-paths", predict_args.allow_outside_paths, outside_help);
    predict->add_option("--group", predict_args.groups, "with --manifest: only the sets of this group (repeatable)");
    predict->add_option("--methods", predict_args.methods, "only these calibrated methods (comma-separated)")->delimiter(',');
    predict->add_flag("--json", predict_args.json, "JSON output");
    predict->add_option("--level", predict_args.level, "prediction interval level")
        ->capture_default_str()
        ->check(real_number(mano::interval_level_range(), mano::interval_level_ok));
    predict->add_option("--audit", predict_args.audit,
                        "a labeled audit file of the set (mano audit, with a column label): its accuracy from those rows "
                        "(PPI on the calibration's correctness model)")
        ->check(CLI::ExistingFile);
    predict_args.input.add_to(predict);

    audit_command audit_args;
    auto* audit = add_audit_command(app, audit_args);

#ifdef MANO_WITH_MONITOR
    monitor_command monitor_args;
    auto* monitor = add_monitor_command(app, monitor_args);
#endif

    const int code = [&]() -> int {
        try {
            app.parse(argc, argv);
            if (score->parsed()) return run_score(score_args);
            if (merge->parsed()) return run_merge(merge_args);
            if (methods->parsed()) return run_methods(methods_args);
            if (eval->parsed()) return run_eval(eval_args);
            if (cal->parsed()) return run_calibrate(cal_args);
            if (predict->parsed()) return run_predict(predict_args);
            if (audit->parsed()) return run_audit(audit_args);
            if (infer->parsed()) return run_infer(infer_args);
#ifdef MANO_WITH_MONITOR
            if (monitor->parsed()) return run_monitor(monitor_args);
#endif
            return 1;
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
    }();
    // Output that did not reach its destination (a full disk, /dev/full, a closed pipe) is a
    // failure, not a silent success.
    errno = 0;
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0) {
        const int why = errno;
        std::cerr << "mano: error: cannot write the output" << (why ? std::string(" (") + std::strerror(why) + ")" : "") << '\n';
        return 1;
    }
    return code;
}
