#include "cli/plot.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <locale>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mano/base/error.hpp>

namespace mano {
namespace cli {
namespace {

// Layout in px. The data area has a fixed size; the legend, when there is one, goes to its right
// so it never hides a point.
constexpr double plot_width = 560, plot_height = 380;
constexpr double margin_left = 80, margin_right = 28, margin_top = 58, margin_bottom = 62;
constexpr double legend_gap = 20, legend_swatch = 28, legend_row = 20;
constexpr double char_width = 7.2;            // average advance of 12px sans-serif, for sizing the legend
constexpr std::size_t legend_label_max = 30;  // code points; longer group names end in an ellipsis
const char* const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                               "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};  // Tableau 10
constexpr std::size_t palette_size = sizeof palette / sizeof *palette;
const char* const band_colour = "#8c8c8c";

// The length of the well-formed UTF-8 sequence that starts at text[i], or 0 if there is none.
std::size_t utf8_sequence(const std::string& text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) return 1;
    std::size_t length = 0;
    unsigned char second_lo = 0x80, second_hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) second_lo = 0xA0;  // no overlong forms
        if (lead == 0xED) second_hi = 0x9F;  // no surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) second_lo = 0x90;
        if (lead == 0xF4) second_hi = 0x8F;  // nothing above U+10FFFF
    } else {
        return 0;
    }
    if (i + length > text.size() || byte(i + 1) < second_lo || byte(i + 1) > second_hi) return 0;
    for (std::size_t k = 2; k < length; ++k)
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    return length;
}

// Text as XML character data or attribute value. Bytes that are not UTF-8 (set names may come
// from file names) become U+FFFD and control characters '?': XML has no way to write either.
std::string escape(const std::string& text, std::size_t max_code_points = std::string::npos) {
    std::string out;
    std::size_t code_points = 0;
    for (std::size_t i = 0; i < text.size(); ++code_points) {
        if (code_points == max_code_points) {
            out += "\xE2\x80\xA6";  // ellipsis
            break;
        }
        const std::size_t length = utf8_sequence(text, i);
        if (length == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
            continue;
        }
        const char c = text[i];
        if (length > 1) out.append(text, i, length);
        else if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '"') out += "&quot;";
        else if (c == '\'') out += "&apos;";
        else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) out += '?';
        else out += c;
        i += length;
    }
    return out;
}

std::string fixed(double value, int digits) {
    std::ostringstream out;
    out.imbue(std::locale::classic());
    out << std::fixed << std::setprecision(digits) << value;
    std::string text = out.str();
    if (text[0] == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);  // "-0.00"
    return text;
}

std::string significant(double value, int digits) {
    std::ostringstream out;
    out.imbue(std::locale::classic());
    out << std::setprecision(digits) << value;
    return out.str();
}

std::string statistic(double value) { return std::isfinite(value) ? fixed(value, 3) : "n/a"; }

std::string px(double value) { return fixed(value, 2); }

// A padded data range with "nice" ticks (steps of 1, 2, 2.5 or 5 times a power of ten).
// "4e-09" -> "4e-9", "1.5e+06" -> "1.5e6".
std::string short_exponent(std::string text) {
    const auto e = text.find('e');
    if (e == std::string::npos) return text;
    std::string exponent = text.substr(e + 1);
    const bool negative = exponent[0] == '-';
    exponent.erase(0, exponent.find_first_not_of("+-0"));
    return text.substr(0, e + 1) + (negative ? "-" : "") + (exponent.empty() ? "0" : exponent);
}

// A padded data range with "nice" ticks (steps of 1, 2, 2.5 or 5 times a power of ten) and their
// labels: fixed-point, or with an exponent for very small or large values.
struct axis {
    double lo = 0, hi = 1;
    std::vector<double> ticks;
    std::vector<std::string> labels;
    std::size_t widest = 0;  // characters of the longest label
};

axis make_axis(double lo, double hi, double target_ticks) {
    axis a;
    if (!(hi > lo)) {  // a single value: a window around it
        const double pad = std::max(std::abs(lo) * 0.05, 0.01);
        a.lo = lo - pad;
        a.hi = hi + pad;
    } else {
        const double pad = (hi - lo) * 0.06;
        a.lo = lo - pad;
        a.hi = hi + pad;
    }
    // The step whose tick count is closest to the target.
    const double span = a.hi - a.lo, magnitude = std::pow(10.0, std::floor(std::log10(span / target_ticks)));
    double multiple = 1;
    for (const double m : {2.0, 2.5, 5.0, 10.0})
        if (std::abs(span / (m * magnitude) - target_ticks) < std::abs(span / (multiple * magnitude) - target_ticks))
            multiple = m;
    const double step = multiple * magnitude;
    const double first = std::ceil(a.lo / step - 1e-9), last = std::floor(a.hi / step + 1e-9);
    for (double k = first; k <= last; ++k) a.ticks.push_back(k * step);  // k * step: no accumulated drift

    const double largest = std::max(std::abs(a.lo), std::abs(a.hi));
    const int decimals = static_cast<int>(-std::floor(std::log10(step) + 1e-9)) + (multiple == 2.5 ? 1 : 0);
    const bool exponent = step < 1e-4 || largest >= 1e6;
    const int digits = std::clamp(static_cast<int>(std::ceil(std::log10(largest / step) + 1e-9)) + 1, 1, 15);
    for (const double t : a.ticks) {
        a.labels.push_back(exponent ? short_exponent(significant(std::abs(t) < step / 2 ? 0.0 : t, digits))
                                    : fixed(t, std::clamp(decimals, 0, 15)));
        a.widest = std::max(a.widest, a.labels.back().size());
    }
    return a;
}

// Label every stride-th tick so that labels of `size` px (along the axis) do not touch.
std::size_t label_stride(const axis& a, double axis_px, double size) {
    if (a.ticks.size() < 2) return 1;
    const double spacing = (a.ticks[1] - a.ticks[0]) / (a.hi - a.lo) * axis_px;
    std::size_t stride = 1;
    while (size > 0.85 * spacing * static_cast<double>(stride)) ++stride;
    return stride;
}

struct legend_entry {
    enum kind { marker, line, band } what;
    std::size_t style = 0;  // the group's index, for markers
    std::string label;
};

// A point marker: one colour per group, cycling shapes once the palette is used up.
void write_marker(std::ostringstream& svg, std::size_t style, double x, double y, double size,
                  const std::string& tooltip) {
    const std::string fill = palette[style % palette_size];
    const std::string paint = "fill=\"" + fill + "\" fill-opacity=\"0.9\" stroke=\"#ffffff\" stroke-width=\"0.8\"";
    const std::string title = tooltip.empty() ? "" : "<title>" + tooltip + "</title>";
    const double r = size;
    switch ((style / palette_size) % 4) {
        case 0:
            svg << "<circle cx=\"" << px(x) << "\" cy=\"" << px(y) << "\" r=\"" << px(r) << "\" " << paint << '>'
                << title << "</circle>\n";
            break;
        case 1:
            svg << "<rect x=\"" << px(x - 0.9 * r) << "\" y=\"" << px(y - 0.9 * r) << "\" width=\"" << px(1.8 * r)
                << "\" height=\"" << px(1.8 * r) << "\" " << paint << '>' << title << "</rect>\n";
            break;
        case 2:
            svg << "<path d=\"M" << px(x) << ' ' << px(y - 1.3 * r) << "L" << px(x + 1.3 * r) << ' ' << px(y) << "L"
                << px(x) << ' ' << px(y + 1.3 * r) << "L" << px(x - 1.3 * r) << ' ' << px(y) << "Z\" " << paint
                << '>' << title << "</path>\n";
            break;
        default:
            svg << "<path d=\"M" << px(x) << ' ' << px(y - 1.3 * r) << "L" << px(x + 1.2 * r) << ' '
                << px(y + 0.8 * r) << "L" << px(x - 1.2 * r) << ' ' << px(y + 0.8 * r) << "Z\" " << paint << '>'
                << title << "</path>\n";
    }
}

// What the scatter shows: the points with finite numbers, the band's finite samples with the fit
// through them (two samples or more), and the axes spanning them all.
struct scatter_extent {
    std::vector<const plot_point*> shown;
    bool line_shown = false;
    double score_lo = 0, score_hi = 0;
    std::vector<std::size_t> band_samples;
    axis ax, ay;
    double sx(double x) const { return margin_left + (x - ax.lo) / (ax.hi - ax.lo) * plot_width; }
    double sy(double y) const { return margin_top + (ay.hi - y) / (ay.hi - ay.lo) * plot_height; }
};

scatter_extent extent_of(const std::vector<plot_point>& points, const std::optional<plot_band>& band) {
    scatter_extent e;
    for (const auto& p : points)
        if (std::isfinite(p.score) && std::isfinite(p.accuracy)) e.shown.push_back(&p);
    // Data ranges: every point and the band with its fit.
    const double inf = std::numeric_limits<double>::infinity();
    double x_lo = inf, x_hi = -inf, y_lo = inf, y_hi = -inf;
    for (const auto* p : e.shown) {
        x_lo = std::min(x_lo, p->score), x_hi = std::max(x_hi, p->score);
        y_lo = std::min(y_lo, p->accuracy), y_hi = std::max(y_hi, p->accuracy);
    }
    e.score_lo = x_lo, e.score_hi = x_hi;
    if (band)
        for (std::size_t i = 0; i < band->xs.size(); ++i)
            if (std::isfinite(band->xs[i]) && std::isfinite(band->lo[i]) && std::isfinite(band->hi[i]) &&
                std::isfinite(band->fit[i])) {
                e.band_samples.push_back(i);
                x_lo = std::min(x_lo, band->xs[i]), x_hi = std::max(x_hi, band->xs[i]);
                y_lo = std::min(y_lo, band->lo[i]), y_hi = std::max(y_hi, band->hi[i]);
            }
    e.line_shown = e.band_samples.size() >= 2;
    if (x_lo > x_hi) x_lo = 0, x_hi = 1;
    if (y_lo > y_hi) y_lo = 0, y_hi = 1;
    e.ax = make_axis(x_lo, x_hi, 7), e.ay = make_axis(y_lo, y_hi, 6);
    return e;
}

// Each point's style (its group's index, groups in order of first appearance) and the legend,
// which only explains what is drawn and only when a reader could not tell it apart.
struct scatter_legend {
    std::vector<std::size_t> style_of;
    std::vector<legend_entry> entries;
    double width = 0;
};

scatter_legend legend_of(const std::vector<plot_point>& points, const scatter_extent& e, const std::optional<plot_band>& band) {
    scatter_legend out;
    std::vector<std::string> groups;
    out.style_of.assign(points.size(), 0);
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto found = std::find(groups.begin(), groups.end(), points[i].group);
        out.style_of[i] = static_cast<std::size_t>(found - groups.begin());
        if (found == groups.end()) groups.push_back(points[i].group);
    }
    const bool grouped = groups.size() > 1 || (groups.size() == 1 && !groups.front().empty());
    const bool band_shown = e.band_samples.size() >= 2;
    if (grouped)
        for (std::size_t g = 0; g < groups.size(); ++g)
            out.entries.push_back({legend_entry::marker, g, groups[g].empty() ? "(no group)" : groups[g]});
    if (e.line_shown && (grouped || band_shown)) out.entries.push_back({legend_entry::line, 0, "calibration fit"});
    if (band_shown) out.entries.push_back({legend_entry::band, 0, fixed(100 * band->level, 0) + "% prediction band"});
    std::size_t longest = 0;
    for (const auto& entry : out.entries) {
        std::size_t code_points = 0;
        for (const char c : entry.label) code_points += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        longest = std::max(longest, std::min(code_points, legend_label_max + 1));
    }
    out.width = out.entries.empty() ? 0 : legend_gap + legend_swatch + char_width * static_cast<double>(longest) + 12;
    return out;
}

constexpr double plot_right = margin_left + plot_width, plot_bottom = margin_top + plot_height;

// The document's head, the clip area, the background and the title line.
void write_head(std::ostringstream& svg, const std::string& name, double width, double height, double r2, double spearman,
                std::size_t n) {
    svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << px(width) << "\" height=\"" << px(height)
        << "\" viewBox=\"0 0 " << px(width) << ' ' << px(height) << "\" role=\"img\" "
        << "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif\" "
        << "font-size=\"12\">\n"
        << "<title>" << name << " score against true accuracy</title>\n"
        << "<defs><clipPath id=\"mano-plot-area\"><rect x=\"" << px(margin_left) << "\" y=\"" << px(margin_top)
        << "\" width=\"" << px(plot_width) << "\" height=\"" << px(plot_height) << "\"/></clipPath></defs>\n"
        << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    svg << "<text x=\"" << px(margin_left + plot_width / 2) << "\" y=\"32\" text-anchor=\"middle\" font-size=\"16\" "
        << "font-weight=\"600\" fill=\"#222222\">" << name << " \xE2\x80\x94 R\xC2\xB2 = " << statistic(r2)
        << ", \xCF\x81 = " << statistic(spearman) << " (n = " << n << (n == 1 ? " set" : " sets") << ")</text>\n";
}

// Grid, axes, ticks and labels.
void write_axes(std::ostringstream& svg, const scatter_extent& e, const std::string& name) {
    svg << "<g stroke=\"#ebebeb\" stroke-width=\"1\">\n";
    for (const double t : e.ax.ticks)
        svg << "<line x1=\"" << px(e.sx(t)) << "\" y1=\"" << px(margin_top) << "\" x2=\"" << px(e.sx(t)) << "\" y2=\""
            << px(plot_bottom) << "\"/>\n";
    for (const double t : e.ay.ticks)
        svg << "<line x1=\"" << px(margin_left) << "\" y1=\"" << px(e.sy(t)) << "\" x2=\"" << px(plot_right)
            << "\" y2=\"" << px(e.sy(t)) << "\"/>\n";
    svg << "</g>\n<g stroke=\"#888888\" stroke-width=\"1\">\n"
        << "<line x1=\"" << px(margin_left) << "\" y1=\"" << px(plot_bottom) << "\" x2=\"" << px(plot_right)
        << "\" y2=\"" << px(plot_bottom) << "\"/>\n"
        << "<line x1=\"" << px(margin_left) << "\" y1=\"" << px(margin_top) << "\" x2=\"" << px(margin_left)
        << "\" y2=\"" << px(plot_bottom) << "\"/>\n";
    for (const double t : e.ax.ticks)
        svg << "<line x1=\"" << px(e.sx(t)) << "\" y1=\"" << px(plot_bottom) << "\" x2=\"" << px(e.sx(t)) << "\" y2=\""
            << px(plot_bottom + 5) << "\"/>\n";
    for (const double t : e.ay.ticks)
        svg << "<line x1=\"" << px(margin_left - 5) << "\" y1=\"" << px(e.sy(t)) << "\" x2=\"" << px(margin_left)
            << "\" y2=\"" << px(e.sy(t)) << "\"/>\n";
    svg << "</g>\n<g fill=\"#555555\" font-size=\"11.5\">\n";
    const std::size_t x_stride = label_stride(e.ax, plot_width, 6.6 * static_cast<double>(e.ax.widest) + 6);
    const std::size_t y_stride = label_stride(e.ay, plot_height, 15);
    for (std::size_t i = 0; i < e.ax.ticks.size(); i += x_stride)
        svg << "<text x=\"" << px(e.sx(e.ax.ticks[i])) << "\" y=\"" << px(plot_bottom + 19)
            << "\" text-anchor=\"middle\">" << e.ax.labels[i] << "</text>\n";
    for (std::size_t i = 0; i < e.ay.ticks.size(); i += y_stride)
        svg << "<text x=\"" << px(margin_left - 9) << "\" y=\"" << px(e.sy(e.ay.ticks[i]) + 4)
            << "\" text-anchor=\"end\">" << e.ay.labels[i] << "</text>\n";
    svg << "</g>\n<g fill=\"#333333\" font-size=\"13\" text-anchor=\"middle\">\n"
        << "<text x=\"" << px(margin_left + plot_width / 2) << "\" y=\"" << px(plot_bottom + 46) << "\">" << name
        << " score</text>\n"
        << "<text transform=\"translate(" << px(24) << ' ' << px(margin_top + plot_height / 2)
        << ") rotate(-90)\">true accuracy</text>\n</g>\n";
}

// The band and the fit, clipped to the data area.
void write_fit(std::ostringstream& svg, const scatter_extent& e, const std::optional<plot_band>& band) {
    if (e.band_samples.size() < 2) return;
    svg << "<g clip-path=\"url(#mano-plot-area)\">\n<polygon fill=\"" << band_colour
        << "\" fill-opacity=\"0.18\" stroke=\"none\" points=\"";
    for (const std::size_t i : e.band_samples) svg << px(e.sx(band->xs[i])) << ',' << px(e.sy(band->hi[i])) << ' ';
    for (auto i = e.band_samples.rbegin(); i != e.band_samples.rend(); ++i)
        svg << px(e.sx(band->xs[*i])) << ',' << px(e.sy(band->lo[*i])) << ' ';
    svg << "\"><title>" << fixed(100 * band->level, 0) << "% prediction band</title></polygon>\n";
    for (const auto* edge : {&band->lo, &band->hi}) {
        svg << "<polyline fill=\"none\" stroke=\"" << band_colour
            << "\" stroke-width=\"1\" stroke-dasharray=\"4 3\" points=\"";
        for (const std::size_t i : e.band_samples) svg << px(e.sx(band->xs[i])) << ',' << px(e.sy((*edge)[i])) << ' ';
        svg << "\"/>\n";
    }
    svg << "<polyline fill=\"none\" stroke=\"#333333\" stroke-width=\"1.6\" points=\"";
    for (const std::size_t i : e.band_samples) svg << px(e.sx(band->xs[i])) << ',' << px(e.sy(band->fit[i])) << ' ';
    svg << "\"><title>" << escape(band->equation) << "</title></polyline>\n</g>\n";
}

// The points, each with its tooltip.
void write_points(std::ostringstream& svg, const scatter_extent& e, const std::vector<plot_point>& points,
                  const std::vector<std::size_t>& style_of) {
    svg << "<g>\n";
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto& p = points[i];
        if (!std::isfinite(p.score) || !std::isfinite(p.accuracy)) continue;
        const std::string tooltip = escape(p.name) + (p.group.empty() ? "" : " (" + escape(p.group) + ")") +
                                    "\nscore " + significant(p.score, 5) + ", accuracy " +
                                    significant(p.accuracy, 5);
        write_marker(svg, style_of[i], e.sx(p.score), e.sy(p.accuracy), 4.5, tooltip);
    }
    svg << "</g>\n";
}

// The legend, right of the data area.
void write_legend(std::ostringstream& svg, const std::vector<legend_entry>& legend) {
    if (legend.empty()) return;
    const double x = plot_right + margin_right + legend_gap;
    double y = margin_top + 8;
    svg << "<g font-size=\"12\" fill=\"#333333\">\n";
    for (const auto& e : legend) {
        if (e.what == legend_entry::marker) {
            write_marker(svg, e.style, x + legend_swatch / 2 - 4, y, 4.5, "");
        } else if (e.what == legend_entry::line) {
            svg << "<line x1=\"" << px(x) << "\" y1=\"" << px(y) << "\" x2=\"" << px(x + legend_swatch - 8)
                << "\" y2=\"" << px(y) << "\" stroke=\"#333333\" stroke-width=\"1.6\"/>\n";
        } else {
            svg << "<rect x=\"" << px(x) << "\" y=\"" << px(y - 6) << "\" width=\"" << px(legend_swatch - 8)
                << "\" height=\"12\" fill=\"" << band_colour << "\" fill-opacity=\"0.18\" stroke=\"" << band_colour
                << "\" stroke-dasharray=\"4 3\"/>\n";
        }
        svg << "<text x=\"" << px(x + legend_swatch) << "\" y=\"" << px(y + 4) << "\">"
            << escape(e.label, legend_label_max) << "</text>\n";
        y += legend_row;
    }
    svg << "</g>\n";
}

}  // namespace

std::string scatter_svg(const std::string& method, const std::vector<plot_point>& points,
                        const std::optional<plot_band>& band, double r2,
                        double spearman) {
    if (band && (band->lo.size() != band->xs.size() || band->hi.size() != band->xs.size() || band->fit.size() != band->xs.size()))
        throw error("plot band: xs, fit, lo and hi differ in length (" + std::to_string(band->xs.size()) + ", " +
                    std::to_string(band->fit.size()) + ", " + std::to_string(band->lo.size()) + ", " +
                    std::to_string(band->hi.size()) + ")");
    const scatter_extent e = extent_of(points, band);
    const scatter_legend legend = legend_of(points, e, band);
    const double width = margin_left + plot_width + margin_right + legend.width;
    const double height = std::max(margin_top + plot_height + margin_bottom,
                                   margin_top + 8 + legend_row * static_cast<double>(legend.entries.size()) + 16);
    std::ostringstream svg;
    svg.imbue(std::locale::classic());
    const std::string name = escape(method);
    write_head(svg, name, width, height, r2, spearman, e.shown.size());
    write_axes(svg, e, name);
    write_fit(svg, e, band);  // band, fit, then the points on top
    write_points(svg, e, points, legend.style_of);
    write_legend(svg, legend.entries);
    svg << "</svg>\n";
    return svg.str();
}

void write_file(const std::string& path, const std::string& text) {
    const auto fail = [&](const std::string& what, int code) {
        throw error(path + ": cannot write the file (" + what + (code ? std::string(": ") + std::strerror(code) : "") + ")");
    };
    // a monitoring history (mano monitor, an SQLite file) is never replaced by another output
    // (checked before the rename below: a history created in between is not seen)
    if (std::ifstream existing{path, std::ios::binary}) {
        char head[16] = {};
        if (existing.read(head, sizeof head) && std::string(head, sizeof head) == std::string("SQLite format 3\0", 16))
            throw error(path + ": an SQLite database (a mano monitoring history?) is there; mano writes no other "
                        "output over one: choose another path");
    }
    // A temporary file beside the target, renamed over it once complete and on disk: a reader, a
    // crash or a concurrent writer sees the old file or the new one, never a part of either.
    const std::filesystem::path target(path);
    const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    std::string temporary = (folder / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    const int fd = ::mkstemp(temporary.data());
    if (fd < 0) fail("creating a temporary file in its folder", errno);
    const auto abandon = [&](const std::string& what) {
        const int code = errno;
        ::close(fd);
        ::unlink(temporary.c_str());
        fail(what, code);
    };
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) abandon("writing");
        done += static_cast<std::size_t>(n);
    }
    // mkstemp makes the file 0600; give it what a plain create would (0666 less the umask)
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (::fchmod(fd, 0666 & ~mask) != 0) abandon("setting its permissions");
    if (::fsync(fd) != 0) abandon("flushing it to disk");
    if (::close(fd) != 0) {
        const int code = errno;
        ::unlink(temporary.c_str());
        fail("closing it", code);
    }
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        const int code = errno;
        ::unlink(temporary.c_str());
        fail("renaming the temporary file over it", code);
    }
    const int dir = ::open(folder.c_str(), O_RDONLY);
    if (dir >= 0) {  // the rename itself on disk; a folder that cannot be opened still has the file
        ::fsync(dir);
        ::close(dir);
    }
}

void refuse_overwriting_inputs(const std::string& output, const std::vector<std::string>& inputs, const std::string& flag) {
    std::error_code ec;
    if (!std::filesystem::exists(output, ec)) return;
    for (const auto& input : inputs)
        if (!input.empty() && std::filesystem::equivalent(output, input, ec))
            throw error(flag + " " + output + ": this is an input file (" + input +
                        "); write the output to another path");
}

}  // namespace cli
}  // namespace mano
