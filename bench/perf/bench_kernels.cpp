// The native side of `npm run bench` (bench/perf/run.mjs): times, on one .npy of float32 logits
// held in memory, a plain memory-read kernel (the machine's limit), MaNo on every SIMD
// architecture this CPU has on 1 thread and on all cores, the nuclear norm and COT. Prints JSON
// with the median seconds of repeated runs.
//   mano_bench FILE.npy [--repeats R] [--nuclear] [--cot]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

#include <nlohmann/json.hpp>

#include <mano/mano.hpp>

#include "io/reader.hpp"

namespace {

// One untimed run first: it wakes the cores (on a VM, an idle virtual CPU can take
// milliseconds to be scheduled again, which a 10 ms run on two cores would measure).
double median_seconds(const std::function<void()>& run, int repeats, bool warm_up = true) {
    if (warm_up) run();
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) {
        const auto start = std::chrono::steady_clock::now();
        run();
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

// Sums every float with Accs independent vectors of Lanes accumulators: no arithmetic bound,
// only the memory's.
template <int Accs, int Lanes>
inline __attribute__((always_inline)) float read_sum(const float* data, std::size_t n) {
    float acc[Accs][Lanes] = {};
    std::size_t i = 0;
    for (; i + Accs * Lanes <= n; i += Accs * Lanes)
        for (int a = 0; a < Accs; ++a)
            for (int l = 0; l < Lanes; ++l) acc[a][l] += data[i + a * Lanes + l];
    float total = 0;
    for (; i < n; ++i) total += data[i];
    for (auto& a : acc)
        for (float x : a) total += x;
    return total;
}

// Eight AVX2 vectors where AVX2 is there; four vectors of the plain build (SSE2, NEON) elsewhere.
float read_plain(const float* data, std::size_t n) { return read_sum<4, 4>(data, n); }
#if defined(__x86_64__)
__attribute__((target("avx2"))) float read_avx2(const float* data, std::size_t n) { return read_sum<8, 8>(data, n); }
float read_all(const float* data, std::size_t n) {
    return __builtin_cpu_supports("avx2") ? read_avx2(data, n) : read_plain(data, n);
}
#else
float read_all(const float* data, std::size_t n) { return read_plain(data, n); }
#endif

volatile float sink;

// Every core reads (or scores) a contiguous share of the rows, as `mano score --threads` does.
template <class Work>
void on_threads(unsigned threads, std::size_t rows, Work work) {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        const std::size_t first = rows * t / threads, last = rows * (t + 1) / threads;
        pool.emplace_back([=, &work] { work(t, first, last - first); });
        // one thread per core: a 10 ms run is over before the scheduler spreads two threads that
        // started on one core, which measured the scheduler (1.2-2.0x over runs), not the cores
        cpu_set_t one_core;
        CPU_ZERO(&one_core);
        CPU_SET(t % std::max(1u, std::thread::hardware_concurrency()), &one_core);
        pthread_setaffinity_np(pool.back().native_handle(), sizeof one_core, &one_core);
    }
    for (auto& th : pool) th.join();
}

mano::result score_threads(const mano::logits_view& all, const mano::options& opts, unsigned threads) {
    std::vector<mano::accumulator> parts(threads, mano::accumulator(all.cols(), opts));
    on_threads(threads, all.rows(), [&](unsigned t, std::size_t first, std::size_t count) {
        parts[t].push(all.slice(first, count));
    });
    for (unsigned t = 1; t < threads; ++t) parts[0].merge(parts[t]);
    return parts[0].finalize();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: mano_bench FILE.npy [--repeats R] [--nuclear] [--cot]\n";
        return 64;
    }
    int repeats = 5;
    bool nuclear = false, cot = false;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
        else if (a == "--nuclear") nuclear = true;
        else if (a == "--cot") cot = true;
    }
    try {
        auto reader = mano::io::open_matrix(argv[1]);
        if (reader->type() != mano::dtype::float32) throw mano::error(std::string(argv[1]) + ": the bench wants float32 logits");
        const std::size_t rows = reader->rows(), cols = reader->cols(), n = rows * cols;
        std::vector<float> data(n);
        const auto view = reader->read(0, rows);
        std::memcpy(data.data(), view.data(), n * sizeof(float));
        const mano::logits_view all(data.data(), rows, cols);
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());

        nlohmann::json out = {{"rows", rows}, {"cols", cols}, {"cores", cores}};
        out["read_1"] = median_seconds([&] { sink = read_all(data.data(), n); }, repeats);
        out["read_all"] = median_seconds([&] {
            std::vector<float> partial(cores);
            on_threads(cores, rows, [&](unsigned t, std::size_t first, std::size_t count) {
                partial[t] = read_all(data.data() + first * cols, count * cols);
            });
            sink = partial[0];
        }, repeats);

        mano::options opts;
        opts.methods = {mano::method::mano};
        nlohmann::json archs = nlohmann::json::object();
        for (const auto& arch : mano::available_architectures()) {
            opts.architecture = arch;
            double score = 0;
            archs[arch] = median_seconds([&] { score = mano::score(all, opts).value(mano::method::mano).value(); }, repeats);
            out["mano_score"] = score;
        }
        out["mano_1"] = archs;
        out["kernels"] = mano::available_architectures();  // best first (archs is sorted by name)
        opts.architecture.clear();
        out["best"] = mano::accumulator(cols, opts).architecture();
        out["mano_all"] = median_seconds([&] { score_threads(all, opts, cores); }, repeats);
        // AVX2 on all cores too: the best kernel can be near the machine's memory bandwidth there
        if (archs.contains("avx2")) {
            opts.architecture = "avx2";
            out["mano_all_avx2"] = median_seconds([&] { score_threads(all, opts, cores); }, repeats);
            // with the softrun branch known in advance (as with a fixed --criterion): one branch,
            // as the authors' code computes it after its criterion pass
            opts.norm = mano::normalization::softmax;
            out["mano_1_avx2_softmax"] = median_seconds([&] { mano::score(all, opts); }, repeats);
            opts.norm = mano::normalization::softrun;
            opts.architecture.clear();
        }

        if (nuclear) {
            mano::options o;
            o.methods = {mano::method::nuclear};
            out["nuclear_1"] = median_seconds([&] { mano::score(all, o); }, std::min(repeats, 3), false);
            out["nuclear_all"] = median_seconds([&] { score_threads(all, o, cores); }, std::min(repeats, 3), false);
            // SSE4.2: the 4-lane Gram update that WebAssembly SIMD runs too
            const auto archs_here = mano::available_architectures();
            if (std::find(archs_here.begin(), archs_here.end(), "sse4.2") != archs_here.end()) {
                o.architecture = "sse4.2";
                out["nuclear_1_sse42"] = median_seconds([&] { mano::score(all, o); }, std::min(repeats, 3), false);
            }
        }
        if (cot) {
            mano::options o;
            o.methods = {mano::method::cot};
            out["cot_1"] = median_seconds([&] { mano::score(all, o); }, std::min(repeats, 3), false);
        }
        std::cout << out.dump() << "\n";
    } catch (const std::exception& e) {
        std::cerr << "mano_bench: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
