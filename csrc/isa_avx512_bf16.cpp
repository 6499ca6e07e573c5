// bf16's kernels for AVX-512 with AVX512_BF16 (AMD Zen 4, Intel Cooper Lake
// and Sapphire Rapids on): the avx512 variant's code, except that averages
// round to bf16 by VCVTNEPS2BF16 / VCVTNE2PS2BF16, one instruction for one
// or two vectors where the integer rounding takes five and a narrowing
// shuffle a vector.  Only bf16's kernels are compiled here; every other type
// takes the avx512 variant's (plan.cpp's select_row_fn).
#include "isa.hpp"

#ifdef DNNPOOL_HAVE_X86_VARIANTS
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c,bmi2")
namespace dnnpool {
namespace avx512_bf16 {
#include "isa_avx512_ops.hpp"
constexpr bool kHaveBf16Convert = true;
// Whether any lane is subnormal (VFPCLASSPS).  The conversions read
// subnormal lanes as zeros whatever MXCSR says, so a vector holding one
// (an average of tiny values) rounds the integer way instead.
static inline bool isa_any_subnormal(IsaF32 v) { return _mm512_fpclass_ps_mask((__m512)v, 0x20) != 0; }
static inline bool isa_any_subnormal(IsaF32 a, IsaF32 b) {
    return (_mm512_fpclass_ps_mask((__m512)a, 0x20) | _mm512_fpclass_ps_mask((__m512)b, 0x20)) != 0;
}
// v's lanes as bf16: nearest, ties to even, NaNs made quiet, as
// bf16_rounded gives for every lane that is not subnormal.
static inline void isa_store_bf16(void *p, IsaF32 v) {
    _mm256_storeu_si256((__m256i *)p, (__m256i)_mm512_cvtneps_pbh((__m512)v));
}
// Two consecutive vectors at once.
static inline void isa_store_bf16_pair(void *p, IsaF32 a, IsaF32 b) {
    _mm512_storeu_si512(p, (__m512i)_mm512_cvtne2ps_pbh((__m512)b, (__m512)a));
}
// A split pair (the even and the odd channels, kernels.hpp's
// load_pair_split), converted at once and put back in channel order.
static inline void isa_store_bf16_split(void *p, IsaF32 even, IsaF32 odd) {
    const __m512i order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                                           6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    _mm512_storeu_si512(p, _mm512_permutexvar_epi16(order, (__m512i)_mm512_cvtne2ps_pbh((__m512)odd, (__m512)even)));
}
#define DNNPOOL_KERNELS_BF16_ONLY
#include "kernels.hpp"
#undef DNNPOOL_KERNELS_BF16_ONLY
}  // namespace avx512_bf16
}  // namespace dnnpool
#endif
