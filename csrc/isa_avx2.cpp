// Kernels for AVX2 (with FMA, F16C, BMI2): 32-byte vectors.
#include "isa.hpp"

#ifdef DNNPOOL_HAVE_X86_VARIANTS
#pragma GCC target("avx2,fma,f16c,bmi2")
namespace dnnpool {
namespace avx2 {
constexpr int64_t kVecBytes = 32;
constexpr int64_t kRegisterBytes = 32;   // a vector register's bytes
constexpr bool kHaveF16 = true;
constexpr bool kHaveBf16Convert = false;   // (isa_avx512_bf16.cpp has it)
#include "isa_avx2_ops.hpp"
#include "kernels.hpp"
}  // namespace avx2
}  // namespace dnnpool
#endif
