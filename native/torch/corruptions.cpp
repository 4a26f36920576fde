#include "corruptions.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace mano {
namespace inference {

namespace {

constexpr double pi = 3.14159265358979323846;

// ImageNet-C's parameters per severity, for images in [0, 1].
constexpr double gaussian_sigma[] = {0.08, 0.12, 0.18, 0.26, 0.38};
constexpr double shot_photons[] = {60, 25, 12, 5, 3};
constexpr double impulse_amount[] = {0.03, 0.06, 0.09, 0.17, 0.27};
constexpr double blur_sigma[] = {1, 2, 3, 4, 6};  // pixels
constexpr double contrast_factor[] = {0.4, 0.3, 0.2, 0.1, 0.05};
constexpr double brightness_shift[] = {0.1, 0.2, 0.3, 0.4, 0.5};
constexpr double pixelate_factor[] = {0.6, 0.5, 0.4, 0.3, 0.25};
constexpr int jpeg_quality[] = {25, 18, 15, 10, 7};
constexpr double occluded_area[] = {0.1, 0.2, 0.3, 0.4, 0.5};

std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

void clip(rgb_image& image) {
    for (auto& v : image.pixels) v = std::clamp(v, 0.f, 1.f);
}

void gaussian_noise(rgb_image& image, double sigma, std::mt19937_64& rng) {
    std::normal_distribution<double> noise(0.0, sigma);
    for (auto& v : image.pixels) v = static_cast<float>(v + noise(rng));
}

// Photon counts: Poisson(x * photons) / photons.
void shot_noise(rgb_image& image, double photons, std::mt19937_64& rng) {
    for (auto& v : image.pixels) {
        std::poisson_distribution<int> count(std::max(0.0, static_cast<double>(v)) * photons);
        v = static_cast<float>(count(rng) / photons);
    }
}

// Salt and pepper: each value becomes 0 or 1 with probability `amount`.
void impulse_noise(rgb_image& image, double amount, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (auto& v : image.pixels)
        if (u(rng) < amount) v = u(rng) < 0.5 ? 0.f : 1.f;
}

std::vector<float> gaussian_kernel(double sigma) {
    const int radius = static_cast<int>(std::ceil(3 * sigma));
    std::vector<float> k(2 * radius + 1);
    double total = 0;
    for (int i = -radius; i <= radius; ++i) total += k[i + radius] = static_cast<float>(std::exp(-0.5 * i * i / (sigma * sigma)));
    for (auto& v : k) v = static_cast<float>(v / total);
    return k;
}

// Separable Gaussian blur, edges replicated.
void blur(rgb_image& image, double sigma) {
    const auto k = gaussian_kernel(sigma);
    const int radius = static_cast<int>(k.size() / 2);
    const auto pass = [&](bool along_x) {
        rgb_image out = image;
        const int h = static_cast<int>(image.height), w = static_cast<int>(image.width);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                for (int c = 0; c < 3; ++c) {
                    float sum = 0.f;
                    for (int i = -radius; i <= radius; ++i) {
                        const int yy = along_x ? y : std::clamp(y + i, 0, h - 1);
                        const int xx = along_x ? std::clamp(x + i, 0, w - 1) : x;
                        sum += k[i + radius] * image.at(yy, xx, c);
                    }
                    out.at(y, x, c) = sum;
                }
        image = std::move(out);
    };
    pass(true);
    pass(false);
}

// Pulls every channel toward its mean.
void contrast(rgb_image& image, double factor) {
    const std::size_t n = image.height * image.width;
    for (std::size_t c = 0; c < 3; ++c) {
        double mean = 0;
        for (std::size_t i = 0; i < n; ++i) mean += image.pixels[i * 3 + c];
        mean /= static_cast<double>(n);
        for (std::size_t i = 0; i < n; ++i) {
            float& v = image.pixels[i * 3 + c];
            v = static_cast<float>((v - mean) * factor + mean);
        }
    }
}

// Raises the HSV value by `shift`, keeping hue and saturation: the channels scale together.
void brightness(rgb_image& image, double shift) {
    for (std::size_t i = 0; i < image.height * image.width; ++i) {
        float* rgb = &image.pixels[i * 3];
        const float value = std::max({rgb[0], rgb[1], rgb[2]});
        const float raised = std::min(1.f, static_cast<float>(value + shift));
        for (int c = 0; c < 3; ++c) rgb[c] = value > 0.f ? rgb[c] * raised / value : raised;
    }
}

// Box-average down to `factor` of the size, then nearest-neighbour back up.
void pixelate(rgb_image& image, double factor) {
    const std::size_t h = std::max<std::size_t>(1, static_cast<std::size_t>(image.height * factor));
    const std::size_t w = std::max<std::size_t>(1, static_cast<std::size_t>(image.width * factor));
    std::vector<double> blocks(h * w * 3, 0.0);
    std::vector<double> counts(h * w, 0.0);
    const auto block = [&](std::size_t y, std::size_t x) { return (y * h / image.height) * w + x * w / image.width; };
    for (std::size_t y = 0; y < image.height; ++y)
        for (std::size_t x = 0; x < image.width; ++x) {
            const std::size_t b = block(y, x);
            counts[b] += 1;
            for (std::size_t c = 0; c < 3; ++c) blocks[b * 3 + c] += image.at(y, x, c);
        }
    for (std::size_t y = 0; y < image.height; ++y)
        for (std::size_t x = 0; x < image.width; ++x) {
            const std::size_t b = block(y, x);
            for (std::size_t c = 0; c < 3; ++c) image.at(y, x, c) = static_cast<float>(blocks[b * 3 + c] / counts[b]);
        }
}

// The JPEG standard's (Annex K) quantization tables and the IJG quality scaling.
constexpr int luma_table[64] = {16, 11, 10, 16, 24,  40,  51,  61,  12, 12, 14, 19, 26,  58,  60,  55,
                                14, 13, 16, 24, 40,  57,  69,  56,  14, 17, 22, 29, 51,  87,  80,  62,
                                18, 22, 37, 56, 68,  109, 103, 77,  24, 35, 55, 64, 81,  104, 113, 92,
                                49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99};
constexpr int chroma_table[64] = {17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99,
                                  99, 99, 47, 66, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
                                  99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99};

int quantizer(int base, int quality) {
    const int scale = quality < 50 ? 5000 / quality : 200 - 2 * quality;
    return std::clamp((base * scale + 50) / 100, 1, 255);
}

// JPEG's lossy step without its entropy coding: full-resolution YCbCr, 8 x 8 DCT, quantization
// at `quality`, inverse DCT (no chroma subsampling).
void jpeg(rgb_image& image, int quality) {
    const std::size_t h = image.height, w = image.width;
    std::vector<double> planes(3 * h * w);
    for (std::size_t i = 0; i < h * w; ++i) {
        const double r = image.pixels[i * 3] * 255.0, g = image.pixels[i * 3 + 1] * 255.0, b = image.pixels[i * 3 + 2] * 255.0;
        planes[i] = 0.299 * r + 0.587 * g + 0.114 * b - 128;
        planes[h * w + i] = -0.168736 * r - 0.331264 * g + 0.5 * b;
        planes[2 * h * w + i] = 0.5 * r - 0.418688 * g - 0.081312 * b;
    }
    double basis[8][8];  // basis[u][x] = C(u) cos((2x + 1) u pi / 16) / 2
    for (int u = 0; u < 8; ++u)
        for (int x = 0; x < 8; ++x) basis[u][x] = (u == 0 ? std::sqrt(0.5) : 1.0) * std::cos((2 * x + 1) * u * pi / 16) / 2;
    for (std::size_t p = 0; p < 3; ++p) {
        double* plane = &planes[p * h * w];
        const int* table = p == 0 ? luma_table : chroma_table;
        for (std::size_t by = 0; by < h; by += 8)
            for (std::size_t bx = 0; bx < w; bx += 8) {
                double block[8][8], coef[8][8];
                for (int y = 0; y < 8; ++y)
                    for (int x = 0; x < 8; ++x)
                        block[y][x] = plane[std::min(by + y, h - 1) * w + std::min(bx + x, w - 1)];
                for (int u = 0; u < 8; ++u)
                    for (int v = 0; v < 8; ++v) {
                        double sum = 0;
                        for (int y = 0; y < 8; ++y)
                            for (int x = 0; x < 8; ++x) sum += basis[u][y] * basis[v][x] * block[y][x];
                        const int q = quantizer(table[u * 8 + v], quality);
                        coef[u][v] = std::round(sum / q) * q;
                    }
                for (int y = 0; y < 8 && by + y < h; ++y)
                    for (int x = 0; x < 8 && bx + x < w; ++x) {
                        double sum = 0;
                        for (int u = 0; u < 8; ++u)
                            for (int v = 0; v < 8; ++v) sum += basis[u][y] * basis[v][x] * coef[u][v];
                        plane[(by + y) * w + bx + x] = sum;
                    }
            }
    }
    for (std::size_t i = 0; i < h * w; ++i) {
        const double y = planes[i] + 128, cb = planes[h * w + i], cr = planes[2 * h * w + i];
        image.pixels[i * 3] = static_cast<float>((y + 1.402 * cr) / 255.0);
        image.pixels[i * 3 + 1] = static_cast<float>((y - 0.344136 * cb - 0.714136 * cr) / 255.0);
        image.pixels[i * 3 + 2] = static_cast<float>((y + 1.772 * cb) / 255.0);
    }
}

// A gray square covering `area` of the image at a random place.
void occlusion(rgb_image& image, double area, std::mt19937_64& rng) {
    const double side = std::sqrt(area * static_cast<double>(image.height * image.width));
    const std::size_t sh = std::clamp<std::size_t>(static_cast<std::size_t>(std::lround(side)), 1, image.height);
    const std::size_t sw = std::clamp<std::size_t>(static_cast<std::size_t>(std::lround(side)), 1, image.width);
    const std::size_t top = std::uniform_int_distribution<std::size_t>(0, image.height - sh)(rng);
    const std::size_t left = std::uniform_int_distribution<std::size_t>(0, image.width - sw)(rng);
    for (std::size_t y = top; y < top + sh; ++y)
        for (std::size_t x = left; x < left + sw; ++x)
            for (std::size_t c = 0; c < 3; ++c) image.at(y, x, c) = 0.5f;
}

}  // namespace

const char* corruption_name(corruption c) {
    switch (c) {
        case corruption::gaussian_noise: return "gaussian_noise";
        case corruption::shot_noise: return "shot_noise";
        case corruption::impulse_noise: return "impulse_noise";
        case corruption::blur: return "blur";
        case corruption::contrast: return "contrast";
        case corruption::brightness: return "brightness";
        case corruption::pixelate: return "pixelate";
        case corruption::jpeg: return "jpeg";
        case corruption::occlusion: return "occlusion";
    }
    return "?";
}

std::uint64_t corruption_seed(std::uint64_t base, corruption c, int severity, std::size_t image_index) {
    std::uint64_t s = splitmix64(base);
    s = splitmix64(s ^ static_cast<std::uint64_t>(c));
    s = splitmix64(s ^ static_cast<std::uint64_t>(severity));
    return splitmix64(s ^ static_cast<std::uint64_t>(image_index));
}

void corrupt(rgb_image& image, corruption c, int severity, std::uint64_t seed) {
    const int s = std::clamp(severity, 1, max_severity) - 1;
    // mt19937_64 and its seeding are specified by the standard; the distributions are the
    // library's, so other standard libraries may draw other (equally distributed) noise.
    std::mt19937_64 rng(seed);
    switch (c) {
        case corruption::gaussian_noise: gaussian_noise(image, gaussian_sigma[s], rng); break;
        case corruption::shot_noise: shot_noise(image, shot_photons[s], rng); break;
        case corruption::impulse_noise: impulse_noise(image, impulse_amount[s], rng); break;
        case corruption::blur: blur(image, blur_sigma[s]); break;
        case corruption::contrast: contrast(image, contrast_factor[s]); break;
        case corruption::brightness: brightness(image, brightness_shift[s]); break;
        case corruption::pixelate: pixelate(image, pixelate_factor[s]); break;
        case corruption::jpeg: jpeg(image, jpeg_quality[s]); break;
        case corruption::occlusion: occlusion(image, occluded_area[s], rng); break;
    }
    clip(image);
}

}  // namespace inference
}  // namespace mano
