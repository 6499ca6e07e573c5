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

template <typename T, int K, bool WithIdx>
static void global_plane_rows(const ExecCtx *c, int64_t r0, int64_t r1, void *) {
    typedef typename Traits<T>::Acc Acc;
    typedef typename AvgOut<T, K>::Div Div;
    const AxisPlan &AD = c->ax[0], &AH = c->ax[1], &AW = c->ax[2];
    const int64_t P = AD.in * AH.in * AW.in;
    const Div div = (Div)(AD.div[0] * AH.div[0] * AW.div[0]);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / c->C, ch = r % c->C;
        const T *__restrict p = (const T *)c->src + n * c->ss[0] + ch * c->ss[1];
        T *o = (T *)c->dst + n * c->ds[0] + ch * c->ds[1];
        // Two vector accumulators, then the lanes in a fixed order, then the tail.
        typedef typename Vec<T>::V V;
        constexpr int64_t VL = Vec<T>::lanes;
        V a0 = (V){} + identity<T, K>(), a1 = a0;
        int64_t j = 0;
        for (; j + 2 * VL <= P; j += 2 * VL) {
            const V x0 = load_vec<T>(p + j), x1 = load_vec<T>(p + j + VL);
            a0 = vcombine<K>(a0, x0);
            a1 = vcombine<K>(a1, x1);
        }
        if (j + VL <= P) {
            const V x0 = load_vec<T>(p + j);
            a0 = vcombine<K>(a0, x0);
            j += VL;
        }
        Acc v = fold_lanes<K, VL / 2>(vcombine<K>(a0, a1), LaneIdx<VL>{})[0];
        for (; j < P; ++j) v = combine<Acc, K>(v, Traits<T>::load(p[j]));
        if constexpr (K == kMax) {
            *o = P ? Traits<T>::store(v) : Traits<T>::lowest();
            if constexpr (WithIdx) {
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
        } else {
            *o = AvgOut<T, K>::make(v, div, (int32_t)P, QParams(c));
        }
    }
}
