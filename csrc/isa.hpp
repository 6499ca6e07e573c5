// The kernels, compiled once per instruction set: each csrc/isa_*.cpp
// includes kernels.hpp inside its own namespace under its own
// `#pragma GCC target`, as a translation unit of its own so a parallel build
// compiles them side by side.  plan.cpp picks one at run time.
#ifndef DNNPOOL_ISA_HPP
#define DNNPOOL_ISA_HPP
#include <cstdint>
#include <type_traits>   // std::integral_constant (kernels_phases.hpp)
#include <utility>   // std::integer_sequence (kernels.hpp)
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>   // the ISA sources' intrinsics
#endif
#include "plan.hpp"

namespace dnnpool {
// Whether any lane of a generic vector is NaN, lane by lane: the fallback
// for vectors without an ISA compare (isa_any_nan).
template <typename V>
static inline bool lanes_hold_nan(V v) {
    bool nan = false;
    for (int l = 0; l < (int)(sizeof(V) / sizeof(v[0])); ++l) nan |= v[l] != v[l];
    return nan;
}
namespace baseline {
RowFn select(int dtype, int kind, int variant, bool with_idx, bool byte_lanes);
MoveFn select_move(int64_t bytes, bool to_last);
}
#if defined(__x86_64__) && defined(__GNUC__)
#define DNNPOOL_HAVE_X86_VARIANTS 1
namespace avx2 {
RowFn select(int dtype, int kind, int variant, bool with_idx, bool byte_lanes);
MoveFn select_move(int64_t bytes, bool to_last);
}
namespace avx512 {
RowFn select(int dtype, int kind, int variant, bool with_idx, bool byte_lanes);
MoveFn select_move(int64_t bytes, bool to_last);
}
namespace avx512_bf16 {   // (bf16's kernels only: see isa_avx512_bf16.cpp)
RowFn select(int dtype, int kind, int variant, bool with_idx, bool byte_lanes);
}
namespace avx512_emulated {
RowFn select(int dtype, int kind, int variant, bool with_idx, bool byte_lanes);
MoveFn select_move(int64_t bytes, bool to_last);
}
#endif
}  // namespace dnnpool
#endif
