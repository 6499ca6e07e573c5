// The AVX-512 (F, BW, VL, DQ) vector primitives the kernels build on:
// 64-byte vectors.  Included inside a variant's namespace by each unit that
// compiles AVX-512 kernels (isa_avx512.cpp, isa_avx512_bf16.cpp), under its
// own target pragma.
constexpr int64_t kVecBytes = 64;
constexpr int64_t kRegisterBytes = 64;   // a vector register's bytes
constexpr bool kHaveF16 = true;
typedef int32_t IsaI32 __attribute__((vector_size(64)));
typedef float IsaF32 __attribute__((vector_size(64)));
typedef double IsaF64 __attribute__((vector_size(64)));
// (maskz forms: the plain ones start from an undefined vector, which GCC 12
// reports as -Wmaybe-uninitialized)
constexpr __mmask16 kAll = (__mmask16)0xffff;
typedef int16_t IsaI16 __attribute__((vector_size(64)));
constexpr __mmask32 kAll32 = (__mmask32)0xffffffffu;
static inline IsaI16 isa_load_u8_i16(const uint8_t *p) {
    return (IsaI16)_mm512_maskz_cvtepu8_epi16(kAll32, _mm256_loadu_si256((const __m256i *)p));
}
static inline IsaI16 isa_load_s8_i16(const int8_t *p) {
    return (IsaI16)_mm512_maskz_cvtepi8_epi16(kAll32, _mm256_loadu_si256((const __m256i *)p));
}
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
static inline void isa_store_u16_pair(void *p, IsaI32 a, IsaI32 b) {   // a narrowing store is one instruction here
    isa_store_u16(p, a);
    isa_store_u16((char *)p + 32, b);
}
static inline IsaF32 isa_max(IsaF32 a, IsaF32 b) { return (IsaF32)_mm512_maskz_max_ps(kAll, (__m512)a, (__m512)b); }
static inline IsaF64 isa_max(IsaF64 a, IsaF64 b) { return (IsaF64)_mm512_maskz_max_pd((__mmask8)0xff, (__m512d)a, (__m512d)b); }
static inline bool isa_any_nan(IsaF32 v) { return _mm512_cmp_ps_mask((__m512)v, (__m512)v, _CMP_UNORD_Q) != 0; }
static inline bool isa_any_nan(IsaF64 v) { return _mm512_cmp_pd_mask((__m512d)v, (__m512d)v, _CMP_UNORD_Q) != 0; }
// The lanes of `within` where neither a nor b is NaN (one masked compare).
typedef __mmask16 IsaLanes;
constexpr IsaLanes kAllLanes = kAll;
static inline IsaLanes isa_ordered_lanes(IsaLanes within, IsaF32 a, IsaF32 b) {
    return _mm512_mask_cmp_ps_mask(within, (__m512)a, (__m512)b, _CMP_ORD_Q);
}
// A 64-byte line (both pointers on one) stored past the caches.
static inline void isa_store_line_uncached(void *to, const void *from) {
    _mm512_stream_si512((__m512i *)to, _mm512_load_si512(from));
}
