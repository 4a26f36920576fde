#pragma once
// Built-in image corruptions for synthetic distribution shifts (after ImageNet-C, Hendrycks &
// Dietterich 2019), applied to the resized and cropped image in [0, 1], before normalization.

#include <cstddef>
#include <cstdint>
#include <string>

#include "images.hpp"

namespace mano {
namespace inference {

enum class corruption { gaussian_noise, shot_noise, impulse_noise, blur, contrast, brightness, pixelate, jpeg, occlusion };
constexpr std::size_t corruption_count = 9;
constexpr int max_severity = 5;

const char* corruption_name(corruption c);

// Corrupts the image in place at severity 1 (mild) to 5 (strong). Random draws come from
// `seed` alone, so a (corruption, severity, image) triple always gives the same result.
void corrupt(rgb_image& image, corruption c, int severity, std::uint64_t seed);

// A seed for one image of one synthetic set, independent of the order images are processed in.
std::uint64_t corruption_seed(std::uint64_t base, corruption c, int severity, std::size_t image_index);

}  // namespace inference
}  // namespace mano
