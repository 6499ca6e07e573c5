// Kernels for AVX-512 (F, BW, VL, DQ): 64-byte vectors.
#include "isa.hpp"

#ifdef DNNPOOL_HAVE_X86_VARIANTS
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c,bmi2")
namespace dnnpool {
namespace avx512 {
#include "isa_avx512_ops.hpp"
constexpr bool kHaveBf16Convert = false;   // (isa_avx512_bf16.cpp has it)
#include "kernels.hpp"
}  // namespace avx512
}  // namespace dnnpool
#endif
