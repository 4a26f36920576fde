#pragma once
// The Gram update of the nuclear norms, gram += P^T P for a block of probability rows, written
// once against xsimd::batch<double, Arch> and instantiated per architecture beside the MaNo
// kernel (cmake/kernel_instance.cpp.in), so native builds and WebAssembly SIMD run the same code.
//
// The block is packed into panels: for each output tile of MR rows x NR columns of the Gram
// matrix (NR = two vectors), MR columns of P are broadcast against NR columns, MR x 2 vector
// accumulators in registers (the usual GEMM micro-kernel; 12 of them with MR = 6). Only the
// tiles that touch the upper triangle (row-major; the lower triangle of the column-major matrix
// the eigen solver reads) are computed.
//
// Why double and not float products, which would run twice as fast: the nuclear norm is the sum
// of the square roots of the Gram matrix's eigenvalues, and a square root near zero magnifies an
// error of e * ||G|| in the Gram matrix into one of ~sqrt(e) * ||P|| in a small singular value.
// A float trial (e ~ 1e-7) moved nuclear_softrun by 2.5e-5 relative in the browser test's chunked
// Worker run, and any split of the rows into pushes or shards moved results by ~4e-9.
// Everything here has internal linkage (see kernel_impl.hpp).

#include <algorithm>
#include <cstddef>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "mano/kernel/scalar_arch.hpp"

namespace mano {
namespace detail {
namespace {

template <class Arch>
struct gram_impl {
    using dbatch = xsimd::batch<double, Arch>;
    static constexpr std::size_t W = dbatch::size;
    static constexpr std::size_t MR = 6;       // Gram rows per tile (broadcast)
    static constexpr std::size_t NR = 2 * W;   // Gram columns per tile (two vectors)
    static constexpr std::size_t depth = 256;  // rows per block (a B panel's block: 16 KB with AVX2)

    // Panels of Cols columns of P, row after row: panel c holds P[n][c*Cols + t] at
    // [(c * rows + n) * Cols + t], zero past column k. Row by row, so each row is read once
    // for both layouts while it is in cache.
    template <std::size_t Cols>
    static void pack_row(const double* src, std::size_t n, std::size_t rows, std::size_t k, double* out) {
        const std::size_t full = k / Cols;
        double* dst = out + n * Cols;
        for (std::size_t c = 0; c < full; ++c, src += Cols, dst += rows * Cols)
            for (std::size_t t = 0; t < Cols; ++t) dst[t] = src[t];
        if (full * Cols < k) {
            std::size_t t = 0;
            for (; t < k - full * Cols; ++t) dst[t] = src[t];
            for (; t < Cols; ++t) dst[t] = 0.0;
        }
    }

    // tile[s * NR + t] += sum over `rows` rows of a[n][s] * b[n][t]; the MR x 2 accumulators
    // stay in registers (the loops over them unroll: their bounds are constants)
    static void tile(const double* a, const double* b, std::size_t rows, double* out) {
        dbatch c[MR][2];
        for (auto& row : c) row[0] = row[1] = dbatch(0.0);
        for (std::size_t n = 0; n < rows; ++n, a += MR, b += NR) {
            const dbatch b0 = dbatch::load_aligned(b), b1 = dbatch::load_aligned(b + W);
            for (std::size_t s = 0; s < MR; ++s) {
                const dbatch x(a[s]);
                c[s][0] = xsimd::fma(x, b0, c[s][0]);
                c[s][1] = xsimd::fma(x, b1, c[s][1]);
            }
        }
        for (std::size_t s = 0; s < MR; ++s)
            for (std::size_t h = 0; h < 2; ++h) {
                alignas(64) double sums[W];
                c[s][h].store_aligned(sums);
                for (std::size_t t = 0; t < W; ++t) out[s * NR + h * W + t] += sums[t];
            }
    }

    // gram[a * k + b] += sum_n p[n][a] p[n][b] for b >= a (the rest of gram is not touched).
    // All `count` rows are packed once; then for each strip of NR Gram columns, the strip's
    // tiles are summed into a double buffer depth block by depth block (the B panel's block
    // stays in L1 while the A panels pass over it), and the strip goes into gram once per call.
    static void run_rows(const double* p, std::size_t count, std::size_t k, double* gram) {
        if (count == 0 || k == 0) return;
        const std::size_t a_panels = (k + MR - 1) / MR, b_panels = (k + NR - 1) / NR;
        // kept from call to call: a fresh allocation would fault its pages in every time
        thread_local std::vector<double, xsimd::aligned_allocator<double>> a, b;
        thread_local std::vector<double> strip;
        a.resize(std::max(a.size(), a_panels * count * MR));
        b.resize(std::max(b.size(), b_panels * count * NR));
        strip.resize(std::max(strip.size(), a_panels * MR * NR));
        for (std::size_t n = 0; n < count; ++n) {
            pack_row<MR>(p + n * k, n, count, k, a.data());
            pack_row<NR>(p + n * k, n, count, k, b.data());
        }
        for (std::size_t jb = 0; jb < b_panels; ++jb) {
            const std::size_t b0 = jb * NR, b_end = std::min(k, b0 + NR);
            // the tiles whose rows a have some column b >= a: a0 < b_end
            const std::size_t tiles = std::min(a_panels, (b_end + MR - 1) / MR);
            std::fill(strip.begin(), strip.begin() + tiles * MR * NR, 0.0);
            for (std::size_t n0 = 0; n0 < count; n0 += depth) {
                const std::size_t rows = std::min(depth, count - n0);
                const double* pb = b.data() + (jb * count + n0) * NR;
                for (std::size_t ib = 0; ib < tiles; ++ib)
                    tile(a.data() + (ib * count + n0) * MR, pb, rows, strip.data() + ib * MR * NR);
            }
            for (std::size_t s = 0; s < std::min(k, tiles * MR); ++s) {
                double* g = gram + s * k;
                const double* ts = strip.data() + s * NR;
                for (std::size_t c = std::max(b0, s); c < b_end; ++c) g[c] += ts[c - b0];
            }
        }
    }
};

}  // namespace
}  // namespace detail
}  // namespace mano
