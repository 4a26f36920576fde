// `mano infer` and `mano calibrate --synthesize`: the LibTorch front end of the mano command.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output.hpp"
#include "cli/plot.hpp"
#include "host/calibration_file.hpp"
#include "host/scan.hpp"
#include "io/json.hpp"
#include "io/reader.hpp"
#include "torch/corruptions.hpp"
#include "torch/images.hpp"
#include "torch/model.hpp"
#include "torch/npy_writer.hpp"
#include "torch/pipeline.hpp"

namespace mano {
namespace cli {

namespace {

using json = nlohmann::json;
using inference::preprocessing;
using inference::sample_source;

std::array<float, 3> parse_triple(const std::string& text, const char* option, float fallback, bool positive) {
    if (text.empty()) return {fallback, fallback, fallback};
    std::array<float, 3> out{};
    std::size_t count = 0, at = 0;
    bool ok = true;
    while (ok && at <= text.size()) {
        const auto comma = std::min(text.find(',', at), text.size());
        const std::string field = text.substr(at, comma - at);
        std::size_t used = 0;
        double value = 0;
        try {
            value = std::stod(field, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        ok = used == field.size() && !field.empty() && std::isfinite(value) && (!positive || value > 0) && count < 3;
        if (ok) out[count++] = static_cast<float>(value);
        at = comma + 1;
    }
    if (!ok || count != 3)
        throw error(std::string(option) + " must be three comma-separated " + (positive ? "positive " : "") +
                    "numbers, one per RGB channel (e.g. " + (positive ? "0.229,0.224,0.225" : "0.485,0.456,0.406") +
                    "); got '" + text + "'");
    return out;
}

preprocessing preprocessing_of(const model_args& a) {
    preprocessing p;
    p.resize = a.resize;
    p.crop = a.crop;
    p.mean = parse_triple(a.mean, "--mean", 0.f, false);
    p.std = parse_triple(a.std, "--std", 1.f, true);
    return p;
}

// The shortest decimal that reads back as the same float: 0.4, not 0.4000000059604645.
double shortest(float x) {
    char text[32];
    for (int digits = 6;; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(x));
        if (std::strtof(text, nullptr) == x || digits >= 9) return std::strtod(text, nullptr);
    }
}

json to_json(const preprocessing& p) {
    json mean = json::array(), std = json::array();
    for (std::size_t c = 0; c < 3; ++c) {
        mean.push_back(shortest(p.mean[c]));
        std.push_back(shortest(p.std[c]));
    }
    return {{"resize", p.resize}, {"crop", p.crop}, {"mean", mean}, {"std", std}};
}

bool any_preprocessing(const model_args& a) {
    return std::any_of(a.preprocessing.begin(), a.preprocessing.end(), [](const CLI::Option* o) { return o->count() > 0; });
}

void check_run(const model_args& a, const char* command) {
    if (a.model.empty()) throw error(std::string(command) + " needs --model (a TorchScript .pt file)");
    if (a.input.empty()) throw error(std::string(command) + " needs --input (an image folder or an N x C x H x W float32 .npy)");
}

unsigned worker_count(unsigned requested) {
    if (requested > 0) return requested;
    return std::max(1u, std::thread::hardware_concurrency() - 1);
}

// A synthetic shift applied to every image of a set.
struct shift {
    inference::corruption kind;
    int severity;
    std::uint64_t seed;
};

// What goes into the model and the labels that come with it.
struct model_input {
    sample_source source;
    std::vector<std::int64_t> labels;
    std::shared_ptr<const inference::image_folder> folder;  // image inputs only
};

sample_source folder_source(const std::shared_ptr<const inference::image_folder>& folder, const preprocessing& p,
                            const std::vector<std::size_t>& shape, const std::optional<shift>& s) {
    sample_source source;
    source.name = folder->root;
    source.count = folder->files.size();
    source.shape = shape;
    source.fill = [folder, p, shape, s](std::size_t i, float* out) {
        const std::string& path = folder->files[i];
        auto image = inference::load_image(path, p);
        if (image.height != shape[1] || image.width != shape[2])
            throw error(path + ": is " + std::to_string(image.width) + " x " + std::to_string(image.height) +
                        " pixels after preprocessing but " + folder->files.front() + " is " + std::to_string(shape[2]) +
                        " x " + std::to_string(shape[1]) + "; give --resize S --crop C to bring every image to one size");
        if (s) inference::corrupt(image, s->kind, s->severity, inference::corruption_seed(s->seed, s->kind, s->severity, i));
        inference::to_model_input(image, p, out);
    };
    return source;
}

model_input open_folder(const std::string& dir, const preprocessing& p) {
    model_input in;
    in.folder = std::make_shared<const inference::image_folder>(inference::scan_image_folder(dir));
    const auto first = inference::load_image(in.folder->files.front(), p);
    in.source = folder_source(in.folder, p, {3, first.height, first.width}, std::nullopt);
    in.labels = in.folder->labels;
    return in;
}

model_input open_tensor(const model_args& a, const std::string& labels_path) {
    if (any_preprocessing(a))
        throw error(a.input + ": --resize, --crop, --mean and --std apply to image folders; a .npy tensor goes to the "
                              "model as it is");
    std::shared_ptr<const io::tensor_reader> reader;
    try {
        reader = std::make_shared<const io::tensor_reader>(a.input);
    } catch (const error& e) {
        throw error(std::string(e.what()) + "; --input takes an image folder or an N x C x H x W float32 .npy");
    }
    if (reader->shape().size() < 2)
        throw error(a.input + ": a 1-D array; model inputs need a sample axis and the sample's axes, e.g. N x C x H x W");
    model_input in;
    in.source.name = a.input;
    in.source.count = reader->samples();
    in.source.shape.assign(reader->shape().begin() + 1, reader->shape().end());
    in.source.fill = [reader](std::size_t i, float* out) { reader->read(i, 1, out); };
    if (!labels_path.empty()) {
        in.labels = io::read_labels(labels_path);
        if (in.labels.size() != in.source.count)
            throw error(labels_path + ": " + std::to_string(in.labels.size()) + " labels for the " +
                        std::to_string(in.source.count) + " samples of " + a.input);
    }
    return in;
}

model_input open_input(const model_args& a, const preprocessing& p, const std::string& labels_path) {
    std::error_code ec;
    if (std::filesystem::is_directory(a.input, ec)) {
        if (!labels_path.empty())
            throw error("--labels " + labels_path + ": an image folder's labels come from its class subfolders; "
                        "--labels goes with a .npy input");
        return open_folder(a.input, p);
    }
    if (!std::filesystem::exists(a.input, ec))
        throw error("--input " + a.input + ": no such file or folder");
    return open_tensor(a, labels_path);
}

// The logits of one pass over an input, streamed into an accumulator (and a .npy file).
struct stream_target {
    std::function<const options&(std::size_t k)> options_for;
    const std::vector<std::int64_t>* labels = nullptr;
    std::size_t classes = 0;  // class folders, 0 when unknown
    std::string where;        // the input, for messages
    inference::npy_writer* out = nullptr;
    host::progress* bar = nullptr;
};

accumulator stream(inference::model& net, const sample_source& source, const model_args& a, const stream_target& t) {
    std::optional<accumulator> acc;
    inference::run_batches(net, source, a.batch_size, worker_count(a.workers),
                           [&](const float* logits, std::size_t first, std::size_t rows, std::size_t k) {
                               if (!acc) {
                                   if (t.classes > k)
                                       throw error(t.where + ": " + std::to_string(t.classes) +
                                                   " class folders but the model gives " + std::to_string(k) +
                                                   " logits per image; class folder i (in sorted order) must be the "
                                                   "model's class i");
                                   acc.emplace(k, t.options_for(k));
                               }
                               row_inputs extra;
                               if (t.labels && !t.labels->empty()) extra.labels = t.labels->data() + first;
                               extra.first_row = first;
                               try {
                                   acc->push(logits_view(logits, rows, k), extra);
                               } catch (const error& e) {
                                   throw error(net.path() + " on " + t.where + ": " + e.what());
                               }
                               if (t.out) t.out->append(logits, rows, k);
                               if (t.bar) t.bar->add(rows);
                           });
    return std::move(*acc);
}

// The preprocessing a calibration from calibrate --synthesize was fitted with, if it says.
std::optional<preprocessing> recorded_preprocessing(const std::string& path) {
    const json j = io::read_json(path, "calibration", io::calibration_max_bytes);
    if (!j.is_object() || !j.contains("inference")) return std::nullopt;
    try {
        const auto& r = j.at("inference").at("preprocessing");
        preprocessing p;
        p.resize = r.at("resize").get<std::size_t>();
        p.crop = r.at("crop").get<std::size_t>();
        p.mean = r.at("mean").get<std::array<float, 3>>();
        p.std = r.at("std").get<std::array<float, 3>>();
        return p;
    } catch (const json::exception& e) {
        throw error(path + ": its \"inference\" record is malformed (" + e.what() + ")");
    }
}

void print_speed(std::size_t images, std::chrono::steady_clock::time_point start, const inference::model& net,
                 unsigned workers) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "mano: %zu images in %.2f s (%.1f images/s; %s, %u decoding worker%s)\n", images, seconds,
                 images / std::max(seconds, 1e-9), net.device().c_str(), workers, workers == 1 ? "" : "s");
}

}  // namespace

int run_infer(infer_command& c) {
    check_run(c.run, "infer");
    preprocessing p = preprocessing_of(c.run);
    const std::optional<calibration> cal = c.methods.calibration_or_finish(c.calibration);
    if (cal)
        if (const auto recorded = recorded_preprocessing(c.calibration)) {
            if (!any_preprocessing(c.run))
                p = *recorded;
            else if (to_json(p) != to_json(*recorded))
                warn("the preprocessing options differ from those " + c.calibration + " was fitted with (" +
                     to_json(*recorded).dump() + "); the estimate assumes the model sees images the same way");
        }
    const model_input in = open_input(c.run, p, c.labels);
    std::unique_ptr<inference::npy_writer> out;
    if (!c.out.empty()) {
        refuse_overwriting_inputs(c.out, {c.run.model, c.run.input, c.labels, c.calibration}, "--out");
        out = std::make_unique<inference::npy_writer>(c.out);
    }
    inference::model net(c.run.model, {c.run.device, c.run.amp});

    input_args defaults;
    option_resolver resolver(c.methods, defaults);
    stream_target target;
    target.options_for = [&](std::size_t k) -> const options& {
        if (!cal) return resolver.resolve(in.source.count, k);
        if (cal->k != k)
            throw error(c.run.model + ": the model gives " + std::to_string(k) + " logits per input but " + c.calibration +
                        " was fitted on " + std::to_string(cal->k) + " classes");
        return cal->opts;
    };
    target.labels = &in.labels;
    target.classes = in.folder ? in.folder->classes.size() : 0;
    target.where = c.run.input;
    target.out = out.get();
    const auto start = std::chrono::steady_clock::now();
    host::progress bar(c.run.input, in.source.count, c.quiet, "images");
    target.bar = &bar;
    const accumulator acc = stream(net, in.source, c.run, target);
    if (out) out->close();
    if (!c.quiet) print_speed(in.source.count, start, net, worker_count(c.run.workers));
    const result r = acc.finalize();

    if (cal) {
        set_prediction prediction;
        try {
            prediction = predict(*cal, r, c.level);
        } catch (const error& e) {
            throw host::file_error(c.run.input, e);
        }
        warn_extrapolation({c.run.input}, {prediction});
        if (c.json) {
            json j = prediction.to_json();
            j["file"] = c.run.input;
            std::cout << j.dump() << '\n';
        } else {
            print_predictions({c.run.input}, {prediction}, c.level);
        }
        return 0;
    }
    if (c.json) {
        json j = r.to_json();
        j["file"] = c.run.input;
        std::cout << j.dump() << '\n';
        return 0;
    }
    print_results({c.run.input}, {r});
    if (r.accuracy)
        std::cout << "true accuracy " << fixed(*r.accuracy, 4) << " (labels from "
                  << (in.folder ? "the class subfolders" : c.labels) << ")\n";
    return 0;
}

int run_calibrate_synthesized(calibrate_command& c) {
    if (!c.synthesize)
        throw error("calibrate --model needs --synthesize (and --input VAL_DIR, a labeled image folder): mano builds "
                    "shifted sets from it");
    check_run(c.run, "calibrate --synthesize");
    std::error_code ec;
    if (!std::filesystem::is_directory(c.run.input, ec))
        throw error("--input " + c.run.input + ": calibrate --synthesize needs a labeled image folder (one subfolder per class)");
    c.input.finish();
    c.methods.finish();
    if (!c.output.empty()) refuse_overwriting_inputs(c.output, {c.run.model}, "-o");
    const preprocessing p = preprocessing_of(c.run);
    const model_input in = open_folder(c.run.input, p);
    if (!in.folder->labeled())
        throw error(c.run.input + ": has no class subfolders; calibrate --synthesize needs labels (one subfolder per "
                                  "class, the i-th in sorted order being the model's class i)");
    inference::model net(c.run.model, {c.run.device, c.run.amp});

    std::vector<std::pair<std::string, std::optional<shift>>> plan{{"clean", std::nullopt}};
    for (std::size_t k = 0; k < inference::corruption_count; ++k)
        for (int severity = 1; severity <= inference::max_severity; ++severity) {
            const auto kind = static_cast<inference::corruption>(k);
            plan.push_back({std::string(inference::corruption_name(kind)) + "_" + std::to_string(severity),
                            shift{kind, severity, c.seed}});
        }
    input_args defaults;
    option_resolver resolver(c.methods, defaults);
    options used;
    stream_target target;
    target.options_for = [&](std::size_t k) -> const options& {
        used = resolver.resolve(in.source.count, k);
        return used;
    };
    target.labels = &in.labels;
    target.classes = in.folder->classes.size();
    const auto start = std::chrono::steady_clock::now();
    host::progress bar("synthesize", in.source.count * plan.size(), c.input.quiet, "images");
    target.bar = &bar;
    std::vector<labeled_set> sets;
    for (const auto& [name, s] : plan) {
        target.where = c.run.input + " (" + name + ")";
        const auto source = folder_source(in.folder, p, in.source.shape, s);
        const std::string group = s ? inference::corruption_name(s->kind) : "clean";
        sets.push_back({name, group, stream(net, source, c.run, target).finalize(), 1, std::nullopt});
    }
    if (!c.input.quiet) print_speed(in.source.count * plan.size(), start, net, worker_count(c.run.workers));

    std::vector<std::string> notes;
    const calibration cal = calibrate(sets, used, &notes);
    for (const auto& note : notes) warn(note);
    std::vector<std::string> corruptions;
    for (std::size_t k = 0; k < inference::corruption_count; ++k)
        corruptions.push_back(inference::corruption_name(static_cast<inference::corruption>(k)));
    const json record = {{"inference",
                          {{"model", c.run.model},
                           {"input", c.run.input},
                           {"images", in.source.count},
                           {"preprocessing", to_json(p)},
                           {"corruptions", corruptions},
                           {"severities", inference::max_severity},
                           {"seed", c.seed}}}};
    if (!c.output.empty()) {
        std::vector<std::vector<std::string>> rows{{"set", "n", "accuracy"}};
        for (const auto v : sets.front().scores.values()) rows.front().push_back(method_name(v.m));
        for (const auto& s : sets) {
            rows.push_back({s.name, std::to_string(s.scores.n), fixed(*s.scores.accuracy, 4)});
            for (const auto& v : s.scores.values()) rows.back().push_back(fixed(v.value, 4));
        }
        print_table(rows);
        std::cout << '\n';
    }
    report_calibration(cal, c.output, record);
    return 0;
}

}  // namespace cli
}  // namespace mano
