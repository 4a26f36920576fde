#pragma once
// The `mano` subcommands. Each returns the process exit code and throws mano::error on bad input.

#include <cstddef>
#include <string>
#include <vector>

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
    bool json = false;
    bool markdown = false;
    std::string plots;
    std::vector<std::string> groups;
    method_args methods;
    input_args input;
};

struct calibrate_command {
    std::string manifest;
    std::string output;
    std::vector<std::string> groups;
    method_args methods;
    input_args input;
};

struct predict_command {
    std::string calibration;
    std::vector<std::string> files;
    std::string manifest;
    std::vector<std::string> groups;
    std::vector<std::string> methods;
    bool json = false;
    double level = 0.9;
    input_args input;
};

int run_score(score_command& c);
int run_merge(merge_command& c);
int run_eval(eval_command& c);
int run_calibrate(calibrate_command& c);
int run_predict(predict_command& c);

}  // namespace cli
}  // namespace mano
