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
namespace baseline {
RowFn select(int dtype, int kind, int variant, bool with_idx);
MoveFn select_move(int64_t bytes, bool to_last);
}
#if defined(__x86_64__) && defined(__GNUC__)
#define DNNPOOL_HAVE_X86_VARIANTS 1
namespace avx2 {
RowFn select(int dtype, int kind, int variant, bool with_idx);
MoveFn select_move(int64_t bytes, bool to_last);
}
namespace avx512 {
RowFn select(int dtype, int kind, int variant, bool with_idx);
MoveFn select_move(int64_t bytes, bool to_last);
}
namespace avx512_emulated {
RowFn select(int dtype, int kind, int variant, bool with_idx);
MoveFn select_move(int64_t bytes, bool to_last);
}
#endif
}  // namespace dnnpool
#endif
