#pragma once
// The `mano` subcommands. Each returns the process exit code and throws mano::error on bad input.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/options.hpp"

namespace mano {
namespace cli {

struct score_command {
    std::vector<std::string> files;
    bool json = false;
    std::size_t chunk_size = 0;
    std::string rows;  // "FIRST:END"
    std::string emit_state;
    std::string calibration;
    double level = 0.9;
    bool correctness_histogram = false;  // also collect the correctness histogram (src/mano/scan/correctness_histogram.hpp)
    method_args methods;
    input_args input;
};

struct merge_command {
    std::vector<std::string> states;
    bool json = false;
    std::string emit_state;
};

struct eval_command {
    std::string manifest;
    bool allow_outside_paths = false;  // files the manifest names outside its folder
    bool json = false;
    bool markdown = false;
    std::string plots;
    std::vector<std::string> groups;
    method_args methods;
    input_args input;
};

struct infer_command {
    model_args run;
    std::string labels;  // labels of a .npy input
    std::string out;
    std::string calibration;
    bool json = false;
    bool quiet = false;
    double level = 0.9;
    method_args methods;
};

struct calibrate_command {
    std::string manifest;
    bool allow_outside_paths = false;
    std::string output;
    std::vector<std::string> groups;
    method_args methods;
    input_args input;
    std::size_t label_shift_copies = mano::label_shift_copies{}.copies;  // R (src/mano/calibration/label_shift_copies.hpp)
    std::uint64_t label_shift_seed = 0;
    // --input: the logit files' input kind (input_args::input_name), or with --model the labeled
    // image folder (model_args::input)
    std::string input_text;
    // calibrate --model M --input VAL_DIR --synthesize: synthetic shifts of a labeled folder
    model_args run;
    bool synthesize = false;
    std::uint64_t seed = 0;
};

struct predict_command {
    std::string calibration;
    std::vector<std::string> files;
    std::string manifest;
    bool allow_outside_paths = false;
    std::vector<std::string> groups;
    std::vector<std::string> methods;
    bool json = false;
    double level = 0.9;
    std::string audit;  // a labeled audit file (mano audit) of the one set predicted
    input_args input;
};

// mano methods: the estimator table (name, what it returns, inputs, default, cost).
struct methods_command {
    bool json = false;
};

// host::prediction_options (native/host/calibration_file.hpp) for n x `columns` values of `path`
// read as --input says, naming on stderr (unless --quiet) the methods that keep every row and were
// left out for this size.
options prediction_options(const calibration& cal, const std::string& path, std::size_t n, std::size_t columns,
                           const input_args& input);

int run_methods(const methods_command& c);
int run_score(score_command& c);
int run_merge(merge_command& c);
int run_eval(eval_command& c);
int run_calibrate(calibrate_command& c);
int run_predict(predict_command& c);
// Implemented in native/torch (the mano-torch executable); `mano` hands them over to
// mano-torch, or says how to get it when built without LibTorch.
int run_infer(infer_command& c);
int run_calibrate_synthesized(calibrate_command& c);
// The process's command line, as main() received it (for the hand-over).
extern char** command_line;

}  // namespace cli
}  // namespace mano
