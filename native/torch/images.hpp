#pragma once
// Image inputs for a model: an ImageFolder-style folder scanned into files and labels, images
// decoded with stb and preprocessed as torchvision's usual evaluation transform does.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mano {
namespace inference {

// One subfolder per class, sorted by name: the i-th subfolder holds the images of class i. A
// folder of images without subfolders has no labels.
struct image_folder {
    std::string root;
    std::vector<std::string> files;      // class by class, each class's files sorted by path
    std::vector<std::int64_t> labels;    // one per file; empty for a flat folder
    std::vector<std::string> classes;    // the subfolder names, in label order

    bool labeled() const noexcept { return !classes.empty(); }
};

// Throws mano::error naming the folder or file: no images, a file that is not an image, both
// images and subfolders at the top, an empty class folder.
image_folder scan_image_folder(const std::string& dir);

// An RGB image: height x width x 3 floats in [0, 1], row-major, channels last.
struct rgb_image {
    std::size_t height = 0, width = 0;
    std::vector<float> pixels;

    float& at(std::size_t y, std::size_t x, std::size_t c) { return pixels[(y * width + x) * 3 + c]; }
    float at(std::size_t y, std::size_t x, std::size_t c) const { return pixels[(y * width + x) * 3 + c]; }
};

// Resize (shorter side to `resize`), center crop to crop x crop, then (x - mean) / std per
// channel. 0 leaves a step out.
struct preprocessing {
    std::size_t resize = 0;
    std::size_t crop = 0;
    std::array<float, 3> mean{0.f, 0.f, 0.f};
    std::array<float, 3> std{1.f, 1.f, 1.f};
};

// Decodes any image stb reads (PNG, JPEG, BMP, TGA, GIF, PSD, HDR, PNM) as 8-bit RGB scaled
// to [0, 1]: gray is replicated, alpha is dropped.
rgb_image decode_image(const std::string& path);

// The shorter side becomes `shorter`, the longer int(shorter * long / short), as torchvision's
// Resize(int). Bilinear with antialiasing when shrinking: the same weights as PyTorch's
// F.interpolate(mode="bilinear", antialias=True, align_corners=False).
rgb_image resize_shorter(const rgb_image& image, std::size_t shorter);

// The centered side x side square, offsets rounded as torchvision's CenterCrop (half to even).
// `path` names the image when it is smaller than the crop.
rgb_image center_crop(const rgb_image& image, std::size_t side, const std::string& path);

// decode, resize, crop: the image as the model sees it, before normalization.
rgb_image load_image(const std::string& path, const preprocessing& p);

// Writes the normalized image channels first (3 x height x width floats) at out.
void to_model_input(const rgb_image& image, const preprocessing& p, float* out);

}  // namespace inference
}  // namespace mano
