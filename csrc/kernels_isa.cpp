// Compiles kernels.hpp once per instruction set and picks a row function.
// One build runs on any x86-64: the wider variants are only selected when the
// CPU reports the features (see isa.cpp).
#include <cstdint>
#include "plan.hpp"

namespace dnnpool {

namespace baseline {
#include "kernels.hpp"
}

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi2")
namespace avx2 {
#include "kernels.hpp"
}
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c,bmi2")
namespace avx512 {
#include "kernels.hpp"
}
#pragma GCC pop_options
#define DNNPOOL_HAVE_X86_VARIANTS 1
#endif

RowFn select_row_fn(int isa, int dtype, int kind, int variant, bool with_idx) {
    // The strided fallback gains nothing from wide vectors; keep one copy.
    if (variant == kChannelInnerStrided) isa = kBaseline;
#ifdef DNNPOOL_HAVE_X86_VARIANTS
    if (isa == kAvx512) return avx512::select(dtype, kind, variant, with_idx);
    if (isa == kAvx2) return avx2::select(dtype, kind, variant, with_idx);
#endif
    return baseline::select(dtype, kind, variant, with_idx);
}

}  // namespace dnnpool
