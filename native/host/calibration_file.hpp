#pragma once
// A calibration file as `mano calibrate` writes it, read for every native front end (the CLI, the
// Python module, the monitoring history) with the readers' JSON limits, its errors naming the file;
// and the options it scores a file with, as `mano predict` does.

#include <cstddef>
#include <string>
#include <vector>

#include <mano/mano.hpp>

namespace mano {
namespace host {

// The calibration in `path`, and (when `bytes` is given) the file's bytes, its identity in a
// monitoring history; throws mano::error naming the file when it is not a calibration mano reads.
calibration read_calibration(const std::string& path, std::string* bytes = nullptr);

// The calibration's options for scoring n x `columns` values of kind `input` in `path`
// (scoring_options in src/mano/prediction/prediction.hpp: the input kind and K checked before any
// row is read, naming the file), with a line in `notes` for each method that keeps every row and
// is left out for this size.
options prediction_options(const calibration& cal, const std::string& path, std::size_t n, std::size_t columns,
                           input_kind input, std::vector<std::string>& notes);

}  // namespace host
}  // namespace mano
