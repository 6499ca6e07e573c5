// AVX2's widening loads and narrowing stores of 8 lanes of 32 bits, included
// inside a namespace compiled with the avx2 target: by isa_avx2.cpp, and by
// isa_avx512_emulated.cpp once per half of its 16-lane vectors.
typedef int32_t IsaI32 __attribute__((vector_size(32)));
typedef float IsaF32 __attribute__((vector_size(32)));
typedef double IsaF64 __attribute__((vector_size(32)));
typedef int16_t IsaI16 __attribute__((vector_size(32)));
static inline IsaI16 isa_load_u8_i16(const uint8_t *p) { return (IsaI16)_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p)); }
static inline IsaI16 isa_load_s8_i16(const int8_t *p) { return (IsaI16)_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p)); }
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
// Two vectors' low halves (a's lanes, then b's): one pack and one lane fix for both.
static inline void isa_store_u16_pair(void *p, IsaI32 a, IsaI32 b) {
    _mm256_storeu_si256((__m256i *)p, _mm256_permute4x64_epi64(_mm256_packus_epi32((__m256i)a, (__m256i)b), 0xd8));
}
// a > b ? a : b in one instruction (GCC writes the NaN-aware select around
// it as two compares instead).
static inline IsaF32 isa_max(IsaF32 a, IsaF32 b) { return (IsaF32)_mm256_max_ps((__m256)a, (__m256)b); }
static inline IsaF64 isa_max(IsaF64 a, IsaF64 b) { return (IsaF64)_mm256_max_pd((__m256d)a, (__m256d)b); }
// Whether any lane is NaN: one compare and a mask test (checked lane by
// lane, small 3-D NXC maxima took 1.05-1.10x their time).
static inline bool isa_any_nan(IsaF32 v) { return _mm256_movemask_ps(_mm256_cmp_ps((__m256)v, (__m256)v, _CMP_UNORD_Q)) != 0; }
static inline bool isa_any_nan(IsaF64 v) { return _mm256_movemask_pd(_mm256_cmp_pd((__m256d)v, (__m256d)v, _CMP_UNORD_Q)) != 0; }
// The lanes of `within` where neither a nor b is NaN (PairProbe).
typedef uint32_t IsaLanes;   // one bit a lane
constexpr IsaLanes kAllLanes = 0xff;
static inline IsaLanes isa_ordered_lanes(IsaLanes within, IsaF32 a, IsaF32 b) {
    return within & (IsaLanes)_mm256_movemask_ps(_mm256_cmp_ps((__m256)a, (__m256)b, _CMP_ORD_Q));
}
// A 64-byte line (both pointers on one) stored past the caches.
static inline void isa_store_line_uncached(void *to, const void *from) {
    _mm256_stream_si256((__m256i *)to, _mm256_load_si256((const __m256i *)from));
    _mm256_stream_si256((__m256i *)to + 1, _mm256_load_si256((const __m256i *)from + 1));
}
