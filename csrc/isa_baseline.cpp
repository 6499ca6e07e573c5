// Kernels for any x86-64 (SSE2 is part of it) and for other architectures:
// 16-byte vectors.  Each ISA provides kVecBytes and the widening loads GCC
// does not derive from generic vector code: 8-bit -> i32, bf16 and f16 -> f32
// (kHaveF16 when the ISA converts f16 in hardware; otherwise kernels.hpp
// widens element-wise), and the narrowing stores of i32 lanes already in
// range to 8 and 16 bits.
#include "isa.hpp"

namespace dnnpool {
namespace baseline {
constexpr int64_t kVecBytes = 16;
constexpr int64_t kRegisterBytes = 16;   // a vector register's bytes
constexpr bool kHaveF16 = false;
constexpr bool kHaveBf16Convert = false;   // (isa_avx512_bf16.cpp has it)
typedef int32_t IsaI32 __attribute__((vector_size(16)));
typedef float IsaF32 __attribute__((vector_size(16)));
typedef double IsaF64 __attribute__((vector_size(16)));
typedef int16_t IsaI16 __attribute__((vector_size(16)));
#if defined(__x86_64__) && defined(__GNUC__)
static inline IsaI16 isa_load_u8_i16(const uint8_t *p) {
    return (IsaI16)_mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)p), _mm_setzero_si128());
}
static inline IsaI16 isa_load_s8_i16(const int8_t *p) {
    const __m128i x = _mm_loadl_epi64((const __m128i *)p);
    return (IsaI16)_mm_srai_epi16(_mm_unpacklo_epi8(x, x), 8);
}
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
static inline IsaI16 isa_load_u8_i16(const uint8_t *p) { return (IsaI16){p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]}; }
static inline IsaI16 isa_load_s8_i16(const int8_t *p) { return (IsaI16){p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]}; }
static inline IsaI32 isa_load_s8(const int8_t *p) { return (IsaI32){p[0], p[1], p[2], p[3]}; }
static inline IsaF32 isa_load_bf16(const void *p) {
    uint16_t h[4];
    __builtin_memcpy(h, p, 8);
    typedef uint32_t U __attribute__((vector_size(16)));
    return (IsaF32)((U){h[0], h[1], h[2], h[3]} << 16);
}
#endif
#if defined(__x86_64__) && defined(__GNUC__)
static inline IsaF32 isa_max(IsaF32 a, IsaF32 b) { return (IsaF32)_mm_max_ps((__m128)a, (__m128)b); }
static inline IsaF64 isa_max(IsaF64 a, IsaF64 b) { return (IsaF64)_mm_max_pd((__m128d)a, (__m128d)b); }
static inline bool isa_any_nan(IsaF32 v) { return _mm_movemask_ps(_mm_cmpunord_ps((__m128)v, (__m128)v)) != 0; }
static inline bool isa_any_nan(IsaF64 v) { return _mm_movemask_pd(_mm_cmpunord_pd((__m128d)v, (__m128d)v)) != 0; }
// A 64-byte line (both pointers on one) stored past the caches.
static inline void isa_store_line_uncached(void *to, const void *from) {
    for (int i = 0; i < 4; ++i) _mm_stream_si128((__m128i *)to + i, _mm_load_si128((const __m128i *)from + i));
}
#else
template <typename V>
static inline V isa_max(V a, V b) { return a > b ? a : b; }
template <typename V>
static inline bool isa_any_nan(V v) { return lanes_hold_nan(v); }
static inline void isa_store_line_uncached(void *to, const void *from) { __builtin_memcpy(to, from, 64); }
#endif
static inline void isa_store_u16_pair(void *p, IsaI32 a, IsaI32 b) {
    isa_store_u16(p, a);
    isa_store_u16((char *)p + 8, b);
}
static inline IsaF32 isa_load_f16(const void *) { return (IsaF32){}; }
// The lanes of `within` where neither a nor b is NaN (PairProbe; split
// pairs, which 16-byte vectors never take).
typedef uint32_t IsaLanes;   // one bit a lane
constexpr IsaLanes kAllLanes = 0xf;
static inline IsaLanes isa_ordered_lanes(IsaLanes within, IsaF32 a, IsaF32 b) {
    IsaLanes lanes = 0;
    for (int i = 0; i < 4; ++i) lanes |= (IsaLanes)(a[i] == a[i] && b[i] == b[i]) << i;
    return within & lanes;
}
static inline void isa_store_f16(void *, IsaF32) {}
#include "kernels.hpp"
}  // namespace baseline
}  // namespace dnnpool
