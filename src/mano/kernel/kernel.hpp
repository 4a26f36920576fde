#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mano {
namespace detail {

// What the per-row kernel needs to know, fixed when an accumulator is created.
struct kernel_params {
    double p = 4;
    int p_int = 4;                      // p when it is an integer in [2, 64] (powers by squaring), else 0
    int taylor_order = 2;
    std::vector<double> taylor_coeffs;  // 1/j! for j = 0..taylor_order
    double power_limit = 1e9;           // 1e36^(1/p): values whose p-th power stays far from overflow
    double power_floor = 0;             // K^(1-p): the smallest sum_k sigma_k^p of a row
    bool want_softmax = true;           // accumulate sum_k p_ik^p
    bool want_taylor = true;            // accumulate sum_k sigma_ik^p
    bool want_extras = true;            // the entropy and the Taylor rows' maximum (some baselines)
};

// Optional per-row outputs: the normalized rows themselves (N x K, row-major), for the methods
// that need more than sums (nuclear norm, COT). Null pointers skip the work.
struct row_outputs {
    double* softmax = nullptr;
    double* taylor = nullptr;
};

// One row's contribution to every sum the accumulator keeps.
struct row_stats {
    double phi = 0;      // LSE_i - mean_k q_ik
    double softmax = 0;  // sum_k p_ik^p
    double taylor = 0;   // sum_k sigma_ik^p (Taylor rows, min-shifted; uniform when constant)
    double lse = 0;      // log sum_k exp(q_ik)
    double max_prob = 0;     // max_k p_ik = 1 / sum_k exp(q_ik - max)
    double entropy = 0;      // -sum_k p_ik log p_ik, in nats
    double taylor_max = 0;   // max_k sigma_ik (Taylor rows)
    std::int64_t argmax = 0; // first column holding the row maximum
    std::int64_t bad_col = -1;    // first column holding NaN/Inf; -2: finite but too large to sum
    bool taylor_overflow = false; // Taylor polynomial overflowed double on this row
};

// The kernel's scratch space for rows of k logits: three float rows, each padded to whole vectors
// (16 floats at most), and one row of doubles.
inline constexpr std::size_t kernel_padding = 16;
inline constexpr std::size_t kernel_scratch_floats(std::size_t k) { return 3 * (k + kernel_padding) + 2 * k + 2; }

// Scores `count` contiguous rows of k logits, given as float (rows_f) or as double (rows_d; the
// other pointer is null).
using row_kernel = void (*)(const float* rows_f, const double* rows_d, std::size_t count, std::size_t k,
                            const kernel_params& params, float* scratch, row_stats* out,
                            const row_outputs& rows_out);

// gram[a * k + b] += sum_n rows[n][a] rows[n][b] for b >= a, over `count` rows of k
// probabilities (the row-major upper triangle of P^T P: the lower triangle of the column-major
// matrix). The nuclear norms' Gram update, SIMD per architecture (kernel/gram_impl.hpp).
using gram_kernel = void (*)(const double* rows, std::size_t count, std::size_t k, double* gram);

// The largest and second largest of p_j - price_j over a row, and the first j of the largest.
struct best_two {
    std::size_t index;
    double first;
    double second;
};

// The per-row loops of the source fit, MLLS's EM and COT's auction (kernel/shift_impl.hpp).
// Rows are float (rows_f) or double (rows_d; the other pointer is null); `scratch` holds
// kernel_scratch_floats(k).
struct shift_kernels {
    // softmax(scale q) of each row: its rows into probs (count x k floats, may be null) and its
    // largest entry into max_prob (count doubles, may be null).
    void (*scaled_softmax)(const float* rows_f, const double* rows_d, std::size_t count, std::size_t k, double scale,
                           float* probs, double* max_prob, float* scratch);
    // Per row, 4 doubles: r (the row's maximum where beta >= 0, else its minimum) and, with
    // d_j = q_j - r and e_j = exp(beta d_j), sum_j e_j, sum_j e_j d_j, sum_j e_j d_j^2.
    void (*softmax_moments)(const float* rows_f, const double* rows_d, std::size_t count, std::size_t k, double beta,
                            double* out, float* scratch);
    // The same in double throughout (d_j and exp in double lanes): `row` holds k doubles.
    void (*softmax_moments_exact)(const float* rows_f, const double* rows_d, std::size_t count, std::size_t k,
                                  double beta, double* out, double* row);
    // One EM step's pass: s_i = sum_j w_j p_ij, into row_sums when not null; where sums is not
    // null, sums_j += p_ij / s_i and log_sum += log s_i over the rows with s_i > 0; ++zero_rows
    // for the others. `row` holds k doubles of scratch.
    void (*em_pass)(const float* rows, std::size_t count, std::size_t k, const double* w, double* sums,
                    double* row_sums, double* log_sum, std::size_t* zero_rows, double* row);
    best_two (*best_values)(const float* row, std::size_t k, const double* price);
    // The classes j of the highest values v_j = p_j - price_j (the same doubles as best_values'),
    // ascending, with their values: every class at or above the count-th largest of the largest
    // value of each vector of lanes (at least count classes, a few more in general; every class
    // where count is more than the vectors). `vector_max` holds k doubles of scratch. COT's
    // candidates (shift/auction.cpp).
    std::size_t (*top_classes)(const float* row, std::size_t k, const double* price, std::size_t count,
                               std::uint32_t* classes, double* values, double* vector_max);
};

struct kernel_entry {
    const char* name;
    bool (*supported)();
    row_kernel run;
    gram_kernel gram;
    const shift_kernels* shift;
};

// The shift kernels of the named architecture (a name compiled_kernels() lists; throws
// mano::error otherwise).
const shift_kernels& shift_kernels_of(const std::string& architecture);

// The kernels compiled into this build, best first: the table CMake generates from the
// mano_add_kernel() calls in src/mano/CMakeLists.txt (cmake/kernel_table.cpp.in).
const std::vector<kernel_entry>& compiled_kernels();

}  // namespace detail
}  // namespace mano
