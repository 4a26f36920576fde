#include "images.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <memory>

#include <mano/base/error.hpp>

#define STB_IMAGE_IMPLEMENTATION
#define STBI_FAILURE_USERMSG
#include <stb_image.h>

namespace mano {
namespace inference {

namespace fs = std::filesystem;

namespace {

constexpr const char* image_kinds = ".png, .jpg, .jpeg, .bmp, .tga, .gif, .psd, .hdr, .pic, .ppm, .pgm, .pnm";

bool is_image_name(const fs::path& p) {
    std::string ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const char* known : {".png", ".jpg", ".jpeg", ".bmp", ".tga", ".gif", ".psd", ".hdr", ".pic", ".ppm", ".pgm", ".pnm"})
        if (ext == known) return true;
    return false;
}

bool hidden(const fs::path& p) { return p.filename().string().rfind('.', 0) == 0; }

// The visible entries of a folder, sorted by name.
std::vector<fs::directory_entry> entries(const fs::path& dir) {
    std::vector<fs::directory_entry> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (!hidden(it->path())) out.push_back(*it);
    if (ec) throw error(dir.string() + ": cannot list the folder (" + ec.message() + ")");
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path() < b.path(); });
    return out;
}

void check_image_name(const fs::path& file, const fs::path& root) {
    if (!is_image_name(file))
        throw error(file.string() + ": not an image file (mano reads " + image_kinds + "); move it out of " + root.string());
}

// Every image under a class folder, at any depth, sorted by path.
std::vector<std::string> class_images(const fs::path& dir, const fs::path& root) {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::follow_directory_symlink, ec), end;
         !ec && it != end; it.increment(ec)) {
        if (hidden(it->path())) {
            if (it->is_directory()) it.disable_recursion_pending();
            continue;
        }
        if (it->is_directory()) continue;
        check_image_name(it->path(), root);
        out.push_back(it->path().string());
    }
    if (ec) throw error(dir.string() + ": cannot list the folder (" + ec.message() + ")");
    std::sort(out.begin(), out.end());
    if (out.empty()) throw error(dir.string() + ": this class folder holds no images; remove it or add its images");
    return out;
}

// Separable antialiased bilinear weights of PyTorch's _upsample_bilinear2d_aa, in float as it
// computes them, so that mano's preprocessing matches F.interpolate(antialias=True).
struct axis_weights {
    std::vector<std::size_t> first;
    std::vector<std::vector<float>> weights;
};

axis_weights bilinear_aa(std::size_t in_size, std::size_t out_size) {
    const float scale = static_cast<float>(in_size) / static_cast<float>(out_size);
    const float support = scale >= 1.f ? scale : 1.f;
    const float invscale = scale >= 1.f ? 1.f / scale : 1.f;
    axis_weights a;
    for (std::size_t i = 0; i < out_size; ++i) {
        const float center = static_cast<float>(scale * (static_cast<double>(i) + 0.5));
        const auto lo = std::max<std::int64_t>(static_cast<std::int64_t>(center - support + 0.5), 0);
        const auto hi = std::min<std::int64_t>(static_cast<std::int64_t>(center + support + 0.5),
                                               static_cast<std::int64_t>(in_size));
        std::vector<float> w;
        float total = 0.f;
        for (std::int64_t j = lo; j < hi; ++j) {
            const float x = std::abs(static_cast<float>((static_cast<float>(j) - center + 0.5) * invscale));
            w.push_back(x < 1.f ? 1.f - x : 0.f);
            total += w.back();
        }
        if (total != 0.f)
            for (auto& v : w) v /= total;
        a.first.push_back(static_cast<std::size_t>(lo));
        a.weights.push_back(std::move(w));
    }
    return a;
}

rgb_image resize_width(const rgb_image& in, std::size_t width) {
    if (width == in.width) return in;
    const auto a = bilinear_aa(in.width, width);
    rgb_image out{in.height, width, std::vector<float>(in.height * width * 3)};
    for (std::size_t y = 0; y < in.height; ++y)
        for (std::size_t x = 0; x < width; ++x)
            for (std::size_t c = 0; c < 3; ++c) {
                const auto& w = a.weights[x];
                float sum = 0.f;
                for (std::size_t j = 0; j < w.size(); ++j) sum += in.at(y, a.first[x] + j, c) * w[j];
                out.at(y, x, c) = sum;
            }
    return out;
}

rgb_image resize_height(const rgb_image& in, std::size_t height) {
    if (height == in.height) return in;
    const auto a = bilinear_aa(in.height, height);
    rgb_image out{height, in.width, std::vector<float>(height * in.width * 3)};
    for (std::size_t y = 0; y < height; ++y) {
        const auto& w = a.weights[y];
        for (std::size_t x = 0; x < in.width; ++x)
            for (std::size_t c = 0; c < 3; ++c) {
                float sum = 0.f;
                for (std::size_t j = 0; j < w.size(); ++j) sum += in.at(a.first[y] + j, x, c) * w[j];
                out.at(y, x, c) = sum;
            }
    }
    return out;
}

}  // namespace

image_folder scan_image_folder(const std::string& dir) {
    const fs::path root(dir);
    image_folder folder;
    folder.root = dir;
    std::vector<fs::path> subfolders, files;
    for (const auto& e : entries(root)) (e.is_directory() ? subfolders : files).push_back(e.path());
    if (!subfolders.empty() && !files.empty())
        throw error(dir + ": holds both files (" + files.front().filename().string() + ") and subfolders (" +
                    subfolders.front().filename().string() +
                    "); give one subfolder per class (labeled) or only images (unlabeled)");
    if (subfolders.empty()) {
        for (const auto& f : files) {
            check_image_name(f, root);
            folder.files.push_back(f.string());
        }
    }
    for (const auto& sub : subfolders) {
        const auto images = class_images(sub, root);
        const auto label = static_cast<std::int64_t>(folder.classes.size());
        folder.classes.push_back(sub.filename().string());
        folder.files.insert(folder.files.end(), images.begin(), images.end());
        folder.labels.insert(folder.labels.end(), images.size(), label);
    }
    if (folder.files.empty()) throw error(dir + ": the folder holds no images (mano reads " + std::string(image_kinds) + ")");
    return folder;
}

rgb_image decode_image(const std::string& path) {
    int width = 0, height = 0, channels = 0;
    std::unique_ptr<stbi_uc, void (*)(void*)> data(stbi_load(path.c_str(), &width, &height, &channels, 3), stbi_image_free);
    if (!data)
        throw error(path + ": cannot decode this image (" + std::string(stbi_failure_reason()) + "); mano reads " +
                    image_kinds);
    rgb_image image{static_cast<std::size_t>(height), static_cast<std::size_t>(width), {}};
    image.pixels.resize(image.height * image.width * 3);
    for (std::size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<float>(data.get()[i]) / 255.f;
    return image;
}

rgb_image resize_shorter(const rgb_image& image, std::size_t shorter) {
    const bool wide = image.width > image.height;
    const std::size_t short_side = wide ? image.height : image.width, long_side = wide ? image.width : image.height;
    const auto long_out = static_cast<std::size_t>(static_cast<double>(shorter) * long_side / short_side);
    const std::size_t height = wide ? shorter : long_out, width = wide ? long_out : shorter;
    // width first, as PyTorch does, so the float roundings agree
    return resize_height(resize_width(image, width), height);
}

rgb_image center_crop(const rgb_image& image, std::size_t side, const std::string& path) {
    if (image.height < side || image.width < side)
        throw error(path + ": the image is " + std::to_string(image.width) + " x " + std::to_string(image.height) +
                    " pixels, smaller than --crop " + std::to_string(side) + "; add --resize S with S >= the crop");
    const auto offset = [&](std::size_t extent) {
        return static_cast<std::size_t>(std::nearbyint((static_cast<double>(extent) - side) / 2.0));
    };
    const std::size_t top = offset(image.height), left = offset(image.width);
    rgb_image out{side, side, std::vector<float>(side * side * 3)};
    for (std::size_t y = 0; y < side; ++y)
        std::copy_n(&image.pixels[((top + y) * image.width + left) * 3], side * 3, &out.pixels[y * side * 3]);
    return out;
}

rgb_image load_image(const std::string& path, const preprocessing& p) {
    rgb_image image = decode_image(path);
    if (p.resize > 0) image = resize_shorter(image, p.resize);
    if (p.crop > 0) image = center_crop(image, p.crop, path);
    return image;
}

void to_model_input(const rgb_image& image, const preprocessing& p, float* out) {
    const std::size_t plane = image.height * image.width;
    for (std::size_t c = 0; c < 3; ++c)
        for (std::size_t i = 0; i < plane; ++i) out[c * plane + i] = (image.pixels[i * 3 + c] - p.mean[c]) / p.std[c];
}

}  // namespace inference
}  // namespace mano
