#pragma once
// The `mano` subcommands. Each returns the process exit code and throws mano::error on bad input.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/scoring.hpp"

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

// Running a TorchScript model over images or a tensor (infer, calibrate --synthesize).
struct model_args {
    std::string model;
    std::string input;  // an image folder or an N x C x H x W float32 .npy
    std::string device = "auto";
    std::string amp = "off";
    std::size_t batch_size = 64;
    unsigned workers = 0;  // 0 = every core but one, at least one
    std::size_t resize = 0, crop = 0;
    std::string mean, std;  // "m,m,m", "s,s,s"
    std::vector<CLI::Option*> preprocessing;  // --resize, --crop, --mean, --std, to tell whether any was given

    // `batch_flag` names the model's batch size (--batch-size; calibrate's is MaNo's batch mode).
    void add_to(CLI::App* app, const std::string& batch_flag);
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
    input_args input;
};

// mano methods: the estimator table (name, what it returns, inputs, default, cost).
struct methods_command {
    bool json = false;
};

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

// Output shared by the subcommands.
calibration read_calibration(const std::string& path);
void print_results(const std::vector<std::string>& names, const std::vector<result>& results);
void print_predictions(const std::vector<std::string>& names, const std::vector<nlohmann::json>& predictions, double level);
void warn_extrapolation(const std::vector<std::string>& names, const std::vector<nlohmann::json>& predictions);
// Prints the fitted lines and writes the calibration, with `extra` keys, to `output` (or prints
// it when empty).
void report_calibration(const calibration& cal, const std::string& output, const nlohmann::json& extra = nlohmann::json::object());
// A plain text table: first column left-aligned, the others right-aligned.
void print_table(const std::vector<std::vector<std::string>>& rows);
void warn(const std::string& message);
std::string fixed(double x, int digits);

}  // namespace cli
}  // namespace mano
