#pragma once
// Force-included into the WebAssembly kernel instance (src/mano/CMakeLists.txt), before xsimd.
// Emscripten's SSE headers emulate the float -> int32 conversions lane by lane in scalar code
// (to reproduce x86's 0x80000000 for out-of-range lanes), and xsimd's exp calls them for every
// vector in the kernel's hot loop. SIMD128 converts all four lanes in one instruction; the
// results are the same for every finite value in int32 range, which is all the kernel converts
// (exp's exponent of a logit difference).
#include <emmintrin.h>
#include <wasm_simd128.h>

static inline __m128i mano_wasm_cvttps_epi32(__m128 a) {
    return (__m128i)wasm_i32x4_trunc_sat_f32x4((v128_t)a);
}
// Round to nearest even, as SSE does in the default rounding mode.
static inline __m128i mano_wasm_cvtps_epi32(__m128 a) {
    return (__m128i)wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest((v128_t)a));
}
#define _mm_cvttps_epi32 mano_wasm_cvttps_epi32
#define _mm_cvtps_epi32 mano_wasm_cvtps_epi32
