// The SVG scatter plots of `mano eval --plots`: well-formed, complete, escaped, finite on
// degenerate input, and a clear error when the file cannot be written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <mano/base/error.hpp>

#include "cli/plot.hpp"

namespace {

using mano::cli::plot_band;
using mano::cli::plot_point;

std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

// Every element closed in order, no stray '<' or '&' in text (what a browser needs to open the
// file at all); returns the first problem, or "" when there is none.
std::string xml_problem(const std::string& svg) {
    std::vector<std::string> open;
    for (std::size_t i = 0; i < svg.size(); ++i) {
        if (svg[i] == '&') {
            const auto end = svg.find(';', i);
            const std::string entity = svg.substr(i, end == std::string::npos ? 8 : end - i + 1);
            if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" && entity != "&apos;")
                return "unknown entity " + entity;
            continue;
        }
        if (svg[i] != '<') continue;
        const auto end = svg.find('>', i);
        if (end == std::string::npos) return "unterminated tag";
        const std::string tag = svg.substr(i + 1, end - i - 1);
        i = end;
        if (tag.empty() || tag.find('<') != std::string::npos) return "'<' inside a tag";
        if (tag.front() == '?') continue;
        if (tag.front() == '/') {
            if (open.empty() || open.back() != tag.substr(1)) return "mismatched </" + tag.substr(1) + ">";
            open.pop_back();
        } else if (tag.back() != '/') {
            open.push_back(tag.substr(0, std::min(tag.find(' '), tag.size())));
        }
        if (std::count(tag.begin(), tag.end(), '"') % 2 != 0) return "unbalanced quotes in <" + tag + ">";
    }
    return open.empty() ? "" : "unclosed <" + open.back() + ">";
}

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

bool all_finite_text(const std::string& svg) {
    const std::string text = lower(svg);
    return text.find("nan") == std::string::npos && text.find("inf") == std::string::npos;
}

std::vector<plot_point> example_points() {
    std::vector<plot_point> points;
    const char* groups[] = {"blur", "noise", "weather"};
    for (int i = 0; i < 12; ++i)
        points.push_back({"shift_" + std::to_string(i), groups[i % 3], 0.1 + 0.04 * i, 0.3 + 0.05 * i + 0.01 * (i % 2)});
    return points;
}

plot_band example_band() {
    plot_band band;
    band.level = 0.9;
    band.equation = "accuracy = 1.25 \xC3\x97 score + 0.16";
    for (int i = 0; i <= 20; ++i) {
        const double x = 0.1 + 0.44 * i / 20;
        band.xs.push_back(x);
        band.fit.push_back(1.25 * x + 0.16);
        band.lo.push_back(1.25 * x + 0.16 - 0.04);
        band.hi.push_back(1.25 * x + 0.16 + 0.04);
    }
    return band;
}

}  // namespace

TEST_CASE("a scatter plot has its title, axes, points with tooltips, fit, band and legend", "[plot]") {
    const auto points = example_points();
    const std::string svg =
        mano::cli::scatter_svg("mano", points, example_band(), 0.95321, 0.9099);
    CHECK(xml_problem(svg) == "");
    CHECK(svg.rfind("<?xml", 0) == 0);
    CHECK(svg.find("xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
    CHECK(svg.find("mano \xE2\x80\x94 R\xC2\xB2 = 0.953, \xCF\x81 = 0.910 (n = 12 sets)") != std::string::npos);
    CHECK(svg.find(">mano score</text>") != std::string::npos);
    CHECK(svg.find(">true accuracy</text>") != std::string::npos);
    CHECK(count(svg, "<title>shift_") == 12);
    CHECK(svg.find("<title>shift_4 (noise)\nscore 0.26, accuracy 0.5</title>") != std::string::npos);
    for (const char* legend : {">blur</text>", ">noise</text>", ">weather</text>", ">calibration fit</text>",
                               ">90% prediction band</text>"})
        CHECK(count(svg, legend) == 1);
    CHECK(count(svg, "<polygon") == 1);
    CHECK(svg.find("<title>accuracy = 1.25 \xC3\x97 score + 0.16</title>") != std::string::npos);
    // Nice tick labels on both axes: scores 0.1..0.54 step 0.1, accuracies 0.3..0.86 step 0.1.
    for (const char* tick : {">0.1</text>", ">0.3</text>", ">0.5</text>", ">0.4</text>", ">0.8</text>"})
        CHECK(count(svg, tick) >= 1);
    CHECK(all_finite_text(svg));
}

TEST_CASE("a scatter plot without groups has no group legend; with too many groups it changes shapes", "[plot]") {
    auto points = example_points();
    for (auto& p : points) p.group.clear();
    const std::string plain = mano::cli::scatter_svg("confscore", points, std::nullopt, 0.5, -0.25);
    CHECK(xml_problem(plain) == "");
    CHECK(plain.find("(no group)") == std::string::npos);
    CHECK(plain.find("<g font-size=\"12\" fill=\"#333333\">") == std::string::npos);  // no legend at all
    CHECK(plain.find("\xCF\x81 = -0.250") != std::string::npos);
    CHECK(count(plain, "<circle") == 12);

    for (std::size_t i = 0; i < points.size(); ++i) points[i].group = "g" + std::to_string(i);
    const std::string many = mano::cli::scatter_svg("confscore", points, std::nullopt, 0.5, 0.5);
    CHECK(xml_problem(many) == "");
    CHECK(count(many, "<circle") == 2 * 10);  // ten colours as circles, in the plot and the legend
    CHECK(count(many, "<rect x=") >= 2 * 2);  // then squares
}

TEST_CASE("names are escaped for XML", "[plot]") {
    std::vector<plot_point> points{{"a<b & \"c\" 'd'", "x>y", 0.2, 0.4},
                                   {std::string("bad\xFF" "byte\x01"), "", 0.3, 0.5}};
    const std::string svg = mano::cli::scatter_svg("m&m<", points, std::nullopt, 1, 1);
    CHECK(xml_problem(svg) == "");
    CHECK(svg.find("a&lt;b &amp; &quot;c&quot; &apos;d&apos;") != std::string::npos);
    CHECK(svg.find("x&gt;y") != std::string::npos);
    CHECK(svg.find("m&amp;m&lt; score") != std::string::npos);
    CHECK(svg.find("bad\xEF\xBF\xBD" "byte?") != std::string::npos);
    CHECK(svg.find("a<b") == std::string::npos);
    CHECK(svg.find('\xFF') == std::string::npos);
    CHECK(svg.find(">(no group)</text>") != std::string::npos);
}

TEST_CASE("degenerate inputs give finite, well-formed plots", "[plot]") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    SECTION("all scores equal") {
        std::vector<plot_point> points{{"a", "", 0.4, 0.5}, {"b", "", 0.4, 0.7}, {"c", "", 0.4, 0.6}};
        const auto svg = mano::cli::scatter_svg("mano", points, std::nullopt, nan, nan);
        CHECK(xml_problem(svg) == "");
        CHECK(all_finite_text(svg));
        CHECK(svg.find("R\xC2\xB2 = n/a, \xCF\x81 = n/a") != std::string::npos);
    }
    SECTION("a single point") {
        std::vector<plot_point> points{{"only", "g", 0.4, 0.5}};
        const auto svg = mano::cli::scatter_svg("mano", points, std::nullopt, nan, nan);
        CHECK(xml_problem(svg) == "");
        CHECK(all_finite_text(svg));
        CHECK(svg.find("(n = 1 set)") != std::string::npos);
    }
    SECTION("no points, all accuracies equal, non-finite values") {
        const auto empty = mano::cli::scatter_svg("mano", {}, std::nullopt, nan, nan);
        CHECK(xml_problem(empty) == "");
        CHECK(all_finite_text(empty));
        std::vector<plot_point> points{{"a", "", 0.1, 0.5}, {"b", "", 0.3, 0.5}, {"c", "", nan, 0.5},
                                       {"d", "", 0.2, std::numeric_limits<double>::infinity()}};
        plot_band band{0.9, "", {0.1, 0.2, 0.3}, {0.5, nan, nan}, {0.4, nan, 0.4}, {0.6, 0.6, 0.6}};
        const auto flat = mano::cli::scatter_svg("mano", points, band, nan, nan);
        CHECK(xml_problem(flat) == "");
        CHECK(all_finite_text(flat));
        CHECK(flat.find("(n = 2 sets)") != std::string::npos);
        CHECK(flat.find("calibration fit") == std::string::npos);
    }
    SECTION("huge and tiny magnitudes") {
        std::vector<plot_point> points{{"a", "", 1e-9, 0.5}, {"b", "", 3e-9, 0.6}};
        const auto tiny = mano::cli::scatter_svg("mde", points, std::nullopt, 1, 1);
        CHECK(xml_problem(tiny) == "");
        CHECK(all_finite_text(tiny));
        CHECK(tiny.find(">2e-9</text>") != std::string::npos);  // an exponent, not 0.000000002
        points = {{"a", "", 7.5e5, 0.5}, {"b", "", 7.5e5 + 1e-4, 0.6}};
        const auto narrow = mano::cli::scatter_svg("mde", points, std::nullopt, 1, 1);
        CHECK(xml_problem(narrow) == "");
        CHECK(all_finite_text(narrow));
    }
}

TEST_CASE("a band whose arrays differ in length is refused", "[plot]") {
    plot_band band{0.9, "", {0.1, 0.2}, {0.5, 0.6}, {0.4}, {0.6, 0.7}};
    CHECK_THROWS_AS(mano::cli::scatter_svg("mano", example_points(), band, 1, 1), mano::error);
}

TEST_CASE("write_file writes the plot and names the path when it cannot", "[plot]") {
    const auto folder = std::filesystem::temp_directory_path() / "mano_test_plot";
    std::filesystem::create_directories(folder);
    const std::string path = (folder / "mano.svg").string();
    const std::string svg = mano::cli::scatter_svg("mano", example_points(), std::nullopt, 0.9, 0.9);
    mano::cli::write_file(path, svg);
    std::ifstream in(path, std::ios::binary);
    std::stringstream read;
    read << in.rdbuf();
    CHECK(read.str() == svg);
    // written through a temporary file beside it, renamed over it: nothing else is left behind
    mano::cli::write_file(path, "second");
    std::size_t entries = 0;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) entries += entry.path().filename() == "mano.svg" ? 1 : 100;
    CHECK(entries == 1);
    std::filesystem::remove_all(folder);

    const std::string missing = (folder / "no such folder" / "mano.svg").string();
    CHECK_THROWS_WITH(mano::cli::write_file(missing, svg), Catch::Matchers::Contains(missing));
}
