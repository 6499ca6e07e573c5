// The AVX-512 variant's kernels (64-byte vectors, 16 lanes of f32/i32) on
// AVX2 instructions: GCC splits each vector operation into two 32-byte
// halves, and the widening loads and narrowing stores go half by half
// through AVX2's.  Slower than the avx2 variant, so the dispatch never picks
// it on its own; DNNPOOL_ISA=avx512-emulated does, so the wide variant's lane
// logic (register blocks, row tails, scratch slack) is tested on machines
// without AVX-512.
#include "isa.hpp"

#ifdef DNNPOOL_HAVE_X86_VARIANTS
#pragma GCC target("avx2,fma,f16c,bmi2")
// 64-byte vectors passed by value change the calling convention without
// AVX-512; every function here is internal, so no caller sees that.
#pragma GCC diagnostic ignored "-Wpsabi"
namespace dnnpool {
namespace avx512_emulated {
namespace half {
#include "isa_avx2_ops.hpp"
}
constexpr int64_t kVecBytes = 64;
constexpr int64_t kRegisterBytes = 32;   // a vector register's bytes (a vector takes two)
constexpr bool kHaveF16 = true;
constexpr bool kHaveBf16Convert = false;   // (isa_avx512_bf16.cpp has it)
typedef int32_t IsaI32 __attribute__((vector_size(64)));
typedef float IsaF32 __attribute__((vector_size(64)));
typedef double IsaF64 __attribute__((vector_size(64)));

// A 64-byte vector from its two 32-byte halves, and half i of one.
template <typename W, typename H>
static inline W join(H lo, H hi) {
    union { W whole; H halves[2]; } u;
    u.halves[0] = lo;
    u.halves[1] = hi;
    return u.whole;
}
template <typename H, typename W>
static inline H half_of(W v, int i) {
    union { W whole; H halves[2]; } u;
    u.whole = v;
    return u.halves[i];
}

typedef int16_t IsaI16 __attribute__((vector_size(64)));
static inline IsaI16 isa_load_u8_i16(const uint8_t *p) {
    return join<IsaI16>(half::isa_load_u8_i16(p), half::isa_load_u8_i16(p + 16));
}
static inline IsaI16 isa_load_s8_i16(const int8_t *p) {
    return join<IsaI16>(half::isa_load_s8_i16(p), half::isa_load_s8_i16(p + 16));
}
static inline IsaI32 isa_load_u8(const uint8_t *p) { return join<IsaI32>(half::isa_load_u8(p), half::isa_load_u8(p + 8)); }
static inline IsaI32 isa_load_s8(const int8_t *p) { return join<IsaI32>(half::isa_load_s8(p), half::isa_load_s8(p + 8)); }
static inline IsaF32 isa_load_f16(const void *p) {
    return join<IsaF32>(half::isa_load_f16(p), half::isa_load_f16((const char *)p + 16));
}
static inline IsaF32 isa_load_bf16(const void *p) {
    return join<IsaF32>(half::isa_load_bf16(p), half::isa_load_bf16((const char *)p + 16));
}
static inline void isa_store_f16(void *p, IsaF32 v) {
    half::isa_store_f16(p, half_of<half::IsaF32>(v, 0));
    half::isa_store_f16((char *)p + 16, half_of<half::IsaF32>(v, 1));
}
template <typename Q>
static inline void isa_store_8bit(Q *p, IsaI32 v) {
    half::isa_store_8bit(p, half_of<half::IsaI32>(v, 0));
    half::isa_store_8bit(p + 8, half_of<half::IsaI32>(v, 1));
}
static inline void isa_store_u16(void *p, IsaI32 v) {
    half::isa_store_u16(p, half_of<half::IsaI32>(v, 0));
    half::isa_store_u16((char *)p + 16, half_of<half::IsaI32>(v, 1));
}
static inline void isa_store_u16_pair(void *p, IsaI32 a, IsaI32 b) {
    half::isa_store_u16_pair(p, half_of<half::IsaI32>(a, 0), half_of<half::IsaI32>(a, 1));
    half::isa_store_u16_pair((char *)p + 32, half_of<half::IsaI32>(b, 0), half_of<half::IsaI32>(b, 1));
}
template <typename W, typename H>
static inline W max_by_halves(W a, W b) {
    return join<W>(half::isa_max(half_of<H>(a, 0), half_of<H>(b, 0)), half::isa_max(half_of<H>(a, 1), half_of<H>(b, 1)));
}
static inline IsaF32 isa_max(IsaF32 a, IsaF32 b) { return max_by_halves<IsaF32, half::IsaF32>(a, b); }
static inline IsaF64 isa_max(IsaF64 a, IsaF64 b) { return max_by_halves<IsaF64, half::IsaF64>(a, b); }
static inline bool isa_any_nan(IsaF32 v) {
    return half::isa_any_nan(half_of<half::IsaF32>(v, 0)) || half::isa_any_nan(half_of<half::IsaF32>(v, 1));
}
static inline bool isa_any_nan(IsaF64 v) {
    return half::isa_any_nan(half_of<half::IsaF64>(v, 0)) || half::isa_any_nan(half_of<half::IsaF64>(v, 1));
}
// The lanes of `within` where neither a nor b is NaN, by halves.
typedef uint32_t IsaLanes;   // one bit a lane
constexpr IsaLanes kAllLanes = 0xffff;
static inline IsaLanes isa_ordered_lanes(IsaLanes within, IsaF32 a, IsaF32 b) {
    return within & (half::isa_ordered_lanes(half::kAllLanes, half_of<half::IsaF32>(a, 0), half_of<half::IsaF32>(b, 0)) |
                     half::isa_ordered_lanes(half::kAllLanes, half_of<half::IsaF32>(a, 1), half_of<half::IsaF32>(b, 1)) << 8);
}
static inline void isa_store_line_uncached(void *to, const void *from) { half::isa_store_line_uncached(to, from); }
#include "kernels.hpp"
}  // namespace avx512_emulated
}  // namespace dnnpool
#endif
