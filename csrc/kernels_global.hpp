// Global-plane kernel: the window is the whole (dense, contiguous) plane of
// one (n, c), so each output is one reduction over P consecutive elements.
// Row space: (n, c).  Partial results live in vector lanes combined in a
// fixed order, so the result never depends on threads.

// Lane i combined with lane i + w, for w = W, W/2, .., 1, in registers
// (lane 0 ends with all of them).
template <int K, int W, typename V, int... I>
static inline V fold_lanes(V v, LaneSeq<I...> lanes) {
    if constexpr (W == 0) return v;
    else return fold_lanes<K, W / 2>(vcombine<K>(v, __builtin_shufflevector(v, v, ((I + W) % sizeof...(I))...)), lanes);
}

// Lanes of Vec<T>::V as a mask (the type of a vector comparison).
template <typename T>
using LaneMask = decltype(typename Vec<T>::V{} < typename Vec<T>::V{});

// The lanes that hold a plane's last P % VL values when its last vector is
// read whole (P >= VL): the lanes before them repeat values already taken.
template <typename T, int... I>
static inline LaneMask<T> tail_lanes(int64_t P, LaneSeq<I...>) {
    constexpr int64_t VL = sizeof...(I);
    typedef decltype(LaneMask<T>{}[0]) Lane;
    return (LaneMask<T>){I...} >= (LaneMask<T>){} + (Lane)(VL - P % VL);
}

// One plane's P >= VL values as one vector of lane partials: two
// accumulators over pairs of vectors (bf16: the pair's even and odd values),
// then one more vector, then the last P % VL values (the plane's last
// vector, `tail` lanes of it), the pair combined last.
template <typename T, int K>
static inline __attribute__((always_inline)) typename Vec<T>::V plane_lanes(const T *__restrict p, int64_t P,
                                                                            LaneMask<T> tail) {
    typedef typename Vec<T>::V V;
    constexpr int64_t VL = Vec<T>::lanes;
    const V id = (V){} + identity<T, K>();
    V a0 = id, a1 = id;
    int64_t j = 0;
    for (; j + 2 * VL <= P; j += 2 * VL) {
        V x0, x1;
        if constexpr (__is_same(T, bf16)) {
            load_pair_split<T>(p + j, x0, x1);   // one load, no widening shuffles: even values, odd values
        } else {
            x0 = load_vec<T>(p + j);
            x1 = load_vec<T>(p + j + VL);
        }
        a0 = vcombine<K>(a0, x0);
        a1 = vcombine<K>(a1, x1);
    }
    if (j + VL <= P) {
        const V x0 = load_vec<T>(p + j);
        a0 = vcombine<K>(a0, x0);
        j += VL;
    }
    if (j < P) a1 = vcombine<K>(a1, tail ? load_vec<T>(p + P - VL) : id);
    return vcombine<K>(a0, a1);
}

// The plane in lane q of fold_planes' result holds the partials of v[q'],
// q' = q with its log2(VL) bits reversed (the butterfly interleaves pairs).
constexpr int bit_reversed(int q, int vl) {
    int r = 0;
    for (int w = 1; w < vl; w *= 2) r = r * 2 + (q / w) % 2;
    return r;
}

// One butterfly level on the pair (a, b), blocks of 2H lanes each holding
// one plane's partials: block halves combined (lower with upper, as
// fold_lanes does), a's planes in the even H-blocks, b's in the odd ones.
template <int K, int H, typename V, int... I>
static inline __attribute__((always_inline)) V fold_pair(V a, V b, LaneSeq<I...>) {
    constexpr int VL = sizeof...(I);
    const V lo = __builtin_shufflevector(a, b, ((I / H) % 2 == 0 ? I : VL + I - H)...);
    const V hi = __builtin_shufflevector(a, b, ((I / H) % 2 == 0 ? I + H : VL + I)...);
    return vcombine<K>(lo, hi);
}

// VL planes' lane partials folded at once: lane q of the result combines
// the lanes of v[bit_reversed(q)] in fold_lanes' order (the same bits),
// with VL - 1 butterflies instead of VL folds of log2(VL) steps each.
template <int K, int H, typename V, int... I>
static inline __attribute__((always_inline)) V fold_planes(V *v, LaneSeq<I...> lanes) {
    if constexpr (H == 0) {
        return v[0];
    } else {
        constexpr int M = H;   // 2H vectors of VL / 2H planes each: H pairs
#pragma GCC unroll 16
        for (int m = 0; m < M; ++m) v[m] = fold_pair<K, H>(v[2 * m], v[2 * m + 1], lanes);
        return fold_planes<K, H / 2>(v, lanes);
    }
}

template <typename T, int K, bool WithIdx>
static void global_plane_rows(const ExecCtx *c, int64_t r0, int64_t r1, void *) {
    typedef typename Traits<T>::Acc Acc;
    typedef typename AvgOut<T, K>::Div Div;
    typedef typename Vec<T>::V V;
    constexpr int64_t VL = Vec<T>::lanes;
    const AxisPlan &AD = c->ax[0], &AH = c->ax[1], &AW = c->ax[2];
    const int64_t P = AD.in * AH.in * AW.in;
    const Div div = (Div)(AD.div[0] * AH.div[0] * AW.div[0]);
    int64_t n = r0 / c->C, ch = r0 % c->C;
    auto next = [&]() { if (++ch == c->C) ch = 0, ++n; };
    auto src_plane = [&]() { return (const T *)c->src + n * c->ss[0] + ch * c->ss[1]; };
    auto dst_point = [&]() { return (T *)c->dst + n * c->ds[0] + ch * c->ds[1]; };
    auto put = [&](T *o, Acc v) {
        if constexpr (K == kMax) *o = P ? Traits<T>::store(v) : Traits<T>::lowest();
        else *o = AvgOut<T, K>::make(v, div, (int32_t)P, QParams(c));
    };
    const LaneMask<T> tail = tail_lanes<T>(P, LaneIdx<VL>{});
    int64_t r = r0;
    // Values only, planes of a vector or more: VL planes at a time, folded
    // together (fold_planes) rather than one by one.  Each plane's bits are
    // those of the one-by-one loop below, so where a group starts (a
    // thread's first row) changes nothing.
    if constexpr (!WithIdx) {
        const bool dense_out = c->ds[1] == 1 && c->ds[0] == c->C;
        if (P >= VL)
            for (; r + VL <= r1; r += VL) {
                T *os[VL];
                V part[VL];
#pragma GCC unroll 16
                for (int q = 0; q < (int)VL; ++q, next()) {
                    os[q] = dst_point();
                    part[bit_reversed(q, VL)] = plane_lanes<T, K>(src_plane(), P, tail);
                }
                const V tot = fold_planes<K, VL / 2>(part, LaneIdx<VL>{});
                if constexpr (K == kMax) {
                    if (dense_out) { store_as<T, true>(os[0], tot); continue; }
                } else if constexpr (__is_same(Acc, float) || __is_same(Acc, double)) {
                    if (dense_out) { store_as<T>(os[0], tot / div); continue; }   // the quotients put forms
                }
                for (int q = 0; q < (int)VL; ++q) put(os[q], tot[q]);
            }
    }
    for (; r < r1; ++r, next()) {
        const T *__restrict p = src_plane();
        T *o = dst_point();
        Acc v = identity<T, K>();
        if (P >= VL) v = fold_lanes<K, VL / 2>(plane_lanes<T, K>(p, P, tail), LaneIdx<VL>{})[0];
        else
            for (int64_t j = 0; j < P; ++j) v = combine<Acc, K>(v, Traits<T>::load(p[j]));
        put(o, v);
        if constexpr (K == kMax && WithIdx) {
            // The first element equal to the maximum (or the first NaN).
            int64_t at = -1;
            for (int64_t q = 0; q < P; ++q) {
                const Acc x = Traits<T>::load(p[q]);
                if (is_nan(v) ? is_nan(x) : x == v) { at = q; break; }
            }
            if (at >= 0) {
                *o = p[at];   // the first maximum itself (a +0/-0 tie keeps the first)
                const int64_t w = at % AW.in, h = (at / AW.in) % AH.in, d = at / (AW.in * AH.in);
                at = n * c->is[0] + ch * c->is[1] + d * c->is[2] + h * c->is[3] + w * c->is[4];
            }
            c->idx[n * c->xs[0] + ch * c->xs[1]] = at;
        }
    }
}
