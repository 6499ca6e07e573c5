// Compiles kernels.hpp once per instruction set and picks a row function.
// One build runs on any x86-64: the wider variants are only selected when the
// CPU reports the features (see plan.cpp).
#include <cstdint>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include "plan.hpp"

namespace dnnpool {

// Each ISA provides kVecBytes and the widening loads GCC does not derive
// from generic vector code: 8-bit -> i32, bf16 and f16 -> f32 (kHaveF16 when the
// ISA converts f16 in hardware; otherwise kernels.hpp widens element-wise),
// and the narrowing stores of i32 lanes already in range to 8 and 16 bits.
namespace baseline {
constexpr int64_t kVecBytes = 16;
constexpr bool kHaveF16 = false;
typedef int32_t IsaI32 __attribute__((vector_size(16)));
typedef float IsaF32 __attribute__((vector_size(16)));
#if defined(__x86_64__) && defined(__GNUC__)
static inline IsaI32 isa_load_u8(const uint8_t *p) {
    int32_t w;
    __builtin_memcpy(&w, p, 4);
    const __m128i z = _mm_setzero_si128();
    return (IsaI32)_mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(w), z), z);
}
static inline IsaI32 isa_load_s8(const int8_t *p) {
    int32_t w;
    __builtin_memcpy(&w, p, 4);
    __m128i x = _mm_cvtsi32_si128(w);
    x = _mm_unpacklo_epi8(x, x);
    return (IsaI32)_mm_srai_epi32(_mm_unpacklo_epi16(x, x), 24);
}
static inline IsaF32 isa_load_bf16(const void *p) {
    return (IsaF32)_mm_unpacklo_epi16(_mm_setzero_si128(), _mm_loadl_epi64((const __m128i *)p));
}
// Narrowing stores of i32 lanes already inside the 8-bit type's range.
static inline void isa_store_8bit(uint8_t *p, IsaI32 v) {
    const __m128i w = _mm_packs_epi32((__m128i)v, (__m128i)v);
    const int32_t b = _mm_cvtsi128_si32(_mm_packus_epi16(w, w));
    __builtin_memcpy(p, &b, 4);
}
static inline void isa_store_8bit(int8_t *p, IsaI32 v) {
    const __m128i w = _mm_packs_epi32((__m128i)v, (__m128i)v);
    const int32_t b = _mm_cvtsi128_si32(_mm_packs_epi16(w, w));
    __builtin_memcpy(p, &b, 4);
}
// Low halves of 32-bit lanes holding values below 2^16 (SSE2 has only the
// signed pack: sign-extend the low half first so it packs exactly).
static inline void isa_store_u16(void *p, IsaI32 v) {
    const __m128i x = _mm_srai_epi32(_mm_slli_epi32((__m128i)v, 16), 16);
    _mm_storel_epi64((__m128i *)p, _mm_packs_epi32(x, x));
}
#else
static inline void isa_store_u16(void *p, IsaI32 v) {
    const uint16_t h[4] = {(uint16_t)v[0], (uint16_t)v[1], (uint16_t)v[2], (uint16_t)v[3]};
    __builtin_memcpy(p, h, sizeof h);
}
template <typename Q>
static inline void isa_store_8bit(Q *p, IsaI32 v) {
    for (int i = 0; i < 4; ++i) p[i] = (Q)v[i];
}
static inline IsaI32 isa_load_u8(const uint8_t *p) { return (IsaI32){p[0], p[1], p[2], p[3]}; }
static inline IsaI32 isa_load_s8(const int8_t *p) { return (IsaI32){p[0], p[1], p[2], p[3]}; }
static inline IsaF32 isa_load_bf16(const void *p) {
    uint16_t h[4];
    __builtin_memcpy(h, p, 8);
    typedef uint32_t U __attribute__((vector_size(16)));
    return (IsaF32)((U){h[0], h[1], h[2], h[3]} << 16);
}
#endif
static inline IsaF32 isa_load_f16(const void *) { return (IsaF32){}; }
static inline void isa_store_f16(void *, IsaF32) {}
#include "kernels.hpp"
}

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi2")
namespace avx2 {
constexpr int64_t kVecBytes = 32;
constexpr bool kHaveF16 = true;
typedef int32_t IsaI32 __attribute__((vector_size(32)));
typedef float IsaF32 __attribute__((vector_size(32)));
static inline IsaI32 isa_load_u8(const uint8_t *p) { return (IsaI32)_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)); }
static inline IsaI32 isa_load_s8(const int8_t *p) { return (IsaI32)_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)); }
static inline IsaF32 isa_load_f16(const void *p) { return (IsaF32)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
static inline IsaF32 isa_load_bf16(const void *p) {
    // Both 128-bit halves hold the 8 values; one byte shuffle moves each into
    // the high half of its f32 lane (two cheap uops instead of widen + shift).
    const __m256i x = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
    const __m256i to_high = _mm256_setr_epi8(-1, -1, 0, 1, -1, -1, 2, 3, -1, -1, 4, 5, -1, -1, 6, 7,
                                             -1, -1, 8, 9, -1, -1, 10, 11, -1, -1, 12, 13, -1, -1, 14, 15);
    return (IsaF32)_mm256_shuffle_epi8(x, to_high);
}
static inline void isa_store_f16(void *p, IsaF32 v) {
    _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph((__m256)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
static inline __m128i isa_pack_i16(IsaI32 v) {
    return _mm_packs_epi32(_mm256_castsi256_si128((__m256i)v), _mm256_extracti128_si256((__m256i)v, 1));
}
static inline void isa_store_8bit(uint8_t *p, IsaI32 v) {
    const __m128i w = isa_pack_i16(v);
    _mm_storel_epi64((__m128i *)p, _mm_packus_epi16(w, w));
}
static inline void isa_store_8bit(int8_t *p, IsaI32 v) {
    const __m128i w = isa_pack_i16(v);
    _mm_storel_epi64((__m128i *)p, _mm_packs_epi16(w, w));
}
static inline void isa_store_u16(void *p, IsaI32 v) {
    _mm_storeu_si128((__m128i *)p, _mm_packus_epi32(_mm256_castsi256_si128((__m256i)v), _mm256_extracti128_si256((__m256i)v, 1)));
}
#include "kernels.hpp"
}
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c,bmi2")
namespace avx512 {
constexpr int64_t kVecBytes = 64;
constexpr bool kHaveF16 = true;
typedef int32_t IsaI32 __attribute__((vector_size(64)));
typedef float IsaF32 __attribute__((vector_size(64)));
// (maskz forms: the plain ones start from an undefined vector, which GCC 12
// reports as -Wmaybe-uninitialized)
constexpr __mmask16 kAll = (__mmask16)0xffff;
static inline IsaI32 isa_load_u8(const uint8_t *p) {
    return (IsaI32)_mm512_maskz_cvtepu8_epi32(kAll, _mm_loadu_si128((const __m128i *)p));
}
static inline IsaI32 isa_load_s8(const int8_t *p) {
    return (IsaI32)_mm512_maskz_cvtepi8_epi32(kAll, _mm_loadu_si128((const __m128i *)p));
}
static inline IsaF32 isa_load_f16(const void *p) {
    return (IsaF32)_mm512_maskz_cvtph_ps(kAll, _mm256_loadu_si256((const __m256i *)p));
}
static inline IsaF32 isa_load_bf16(const void *p) {
    return (IsaF32)_mm512_maskz_slli_epi32(kAll, _mm512_maskz_cvtepu16_epi32(kAll, _mm256_loadu_si256((const __m256i *)p)), 16);
}
static inline void isa_store_f16(void *p, IsaF32 v) {
    _mm256_storeu_si256((__m256i *)p, _mm512_maskz_cvtps_ph(kAll, (__m512)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
static inline void isa_store_8bit(uint8_t *p, IsaI32 v) {
    _mm_storeu_si128((__m128i *)p, _mm512_maskz_cvtusepi32_epi8(kAll, (__m512i)v));
}
static inline void isa_store_8bit(int8_t *p, IsaI32 v) {
    _mm_storeu_si128((__m128i *)p, _mm512_maskz_cvtsepi32_epi8(kAll, (__m512i)v));
}
static inline void isa_store_u16(void *p, IsaI32 v) {
    _mm256_storeu_si256((__m256i *)p, _mm512_maskz_cvtepi32_epi16(kAll, (__m512i)v));
}
#include "kernels.hpp"
}
#pragma GCC pop_options
#define DNNPOOL_HAVE_X86_VARIANTS 1
#endif

RowFn select_row_fn(int isa, int dtype, int kind, int variant, bool with_idx) {
#ifdef DNNPOOL_HAVE_X86_VARIANTS
    if (isa == kAvx512) return avx512::select(dtype, kind, variant, with_idx);
    if (isa == kAvx2) return avx2::select(dtype, kind, variant, with_idx);
#endif
    return baseline::select(dtype, kind, variant, with_idx);
}

}  // namespace dnnpool
