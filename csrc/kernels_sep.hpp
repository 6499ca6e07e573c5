// Separable kernel: every divisor policy is a product of per-axis factors and
// the first maximum in row-major order is the first row's first maximum among
// the rows attaining it, so a window reduces axis by axis:
//   * W pass on padded rows (padding = identity, index -1): tap by tap in one
//     fused pass (stride phases split first so every tap is a unit-stride
//     stream; C lanes at stride 1: four output columns sharing their taps as
//     one van Herk block) or, for stride 1 without dilation and a large
//     window, in two fused passes (windows of a taps, then k/a of them) or by
//     doubling (O(log k) passes), whichever plan.hpp's cost model prefers;
//   * D/H pass over rows: tap by tap fused (C lanes: column strip by column
//     strip), or sliding along H (van Herk blocks or doubling);
//   * finalize: divisor products, rounding, empty windows.
// A "same" stride-1 window over rows of at most 64 positions (kPlaneMaxRow)
// pools a chunk of rows as one flat run of values (chunk_plane): H taps over
// runs of rows, W taps (C values apart with C lanes) masked at the rows' ends.
// One lane with a small window (k2/k3 s2, k3 s3, k4 s4: most NCX
// downsampling; k2/k3 s1; k1 s2-s4: decimation; k2 s3, k2/k3 s4: windows
// with gaps) fuses the W pass and the
// finish in registers (kernels_phases.hpp), reading the stacked D/H result
// or, for windows of one row, src itself.
// With indices the W pass comes first (row-major first maximum); for values
// the D/H taps are pooled first, straight from src, so W runs on output rows
// only.  Every pass is a flat loop over (position, lane): it vectorises for one
// lane (NCX: a plane per channel; the rows of a chunk are stacked so passes
// span whole chunks) and for C lanes (NXC).  Row space: (n, c, od, oh) with
// one lane, (n, od, oh) with C lanes.  An output's value depends only on the
// plan, never on where a thread's rows start.

// Rows at least this long are pooled straight from src; shorter ones are
// widened first so the D/H pass runs over whole stacked chunks.
constexpr int64_t kLongRow = 64;
// Values per column strip of chunk_strips (a strip of every src row a chunk
// reads fits in L1).
constexpr int64_t kStripValues = 256;
// Strips of src rows whose addresses are close to a multiple of 4 KB apart
// share L1 sets (64 sets of 64-byte lines, 8 ways on current x86 cores); a
// window with more such rows than ways evicts its own rows before the next
// output row reuses them, so its taps go in passes of kTapPart (partial
// results continued in place: the same order, the same bits).
constexpr int64_t kL1Sets = 64, kL1Ways = 8, kTapPart = 5;
// How far on one-lane rows over a src beyond the caches prefetch
// (rows_ahead).  Measured, 1 thread, against no prefetch: ResNet-50's k3 s2
// p1 at batch 32 (128 MB) 0.62, VGG's k2 s2 at batch 8 (51 MB) 0.21-0.34,
// the 3-D k3 s2 p1 at batch 8 (51 MB) 0.53; a distance of 4 output rows
// 0.72 / 0.37 / 0.83, of 16 or 32 output rows about that of 16 KB.
constexpr int64_t kAheadBytes = 16 << 10;
// Stacked passes over planes (3-D) prefetch their rows one output plane on
// instead, the rows the next output plane's windows read first (up to
// kPlaneAheadBytes on; they must still be in L2 when read).  Against 16 KB,
// 1 thread, k3 s2 p1 windows: planes of 112 x 112 floats (51 MB) 0.77-0.79
// of the time, of 224 x 224 (103 MB) 0.79-0.93; of 56 x 56 0.99-1.03, of
// 384 x 384 and 512 x 512 (1.2 and 2 MB on) 0.98-1.11.
constexpr int64_t kPlaneAheadBytes = 512 << 10;

template <typename T, int K, bool I, bool Lanes>
struct SepPass {
    typedef typename Traits<T>::Acc Acc;
    typedef typename AvgOut<T, K>::Div Div;
    const ExecCtx *c;
    const SepLayout &g;
    const AxisPlan &AD, &AH, &AW;
    int64_t L, OWL;
    Acc *xp, *ph, *hb, *vr;
    int64_t *xpi, *phi, *hbi, *vri;
    Acc *fP, *fA, *fB, *fC;   // flat: padded rows, phases, two pass results
    int64_t *fPi, *fAi, *fBi, *fCi;
    int64_t *toff;            // tap offsets of the pass at hand
    int64_t *voff;            // (d, h) tap offsets of each output row of a chunk
    Div *wdiv;
    int32_t *wcnt;
    bool all_w;               // every output column sees an input element
    int64_t part;             // stack_taps: taps per pass
    int fused;                // finish_rows' window (fused_window; 0: the W pass and emit instead)
    int direct_code;          // direct_rows' window (direct_window; 0: the passes instead)
    int pair_code;            // pair_rows' window (pair_window; 0: none)
    bool plane;               // chunk_plane (plane_window)
    DoublingShifts<T> shifts; // one lane, doubles_row: the doubled W pass's shuffles
    typedef typename IdxVec<Acc>::Lane Lane;
    Lane *pcol;               // chunk_plane: the column of each position of a chunk
    Div *pdiv;                // chunk_plane: the divisor of each position of the chunk [pdiv_lo, pdiv_hi)
    int32_t *pcnt;            // ... and (quantized averages) its count of input elements
    int64_t pdiv_lo = -1, pdiv_hi = -1;
    int64_t pdiv_rows = 0;    // ... for that many rows of a chunk (each row's values written together)
    // Float maxima: output rows [clean_lo, clean_hi) of the chunk have
    // stacked rows known to hold no NaN (C lanes: their shared blocks probed
    // clean; one lane: their src rows scanned clean), so the fused W pass
    // compares them without NaN tests.  Cleared by chunk(), set by
    // stack_taps only.
    static constexpr bool kProbed = K == kMax && !I && (__is_same(Acc, float) || __is_same(Acc, double));
    int64_t clean_lo = 0, clean_hi = 0;
    const T *src_end;         // one past src's last element

    template <typename P>
    static P *at(char *scr, size_t off, bool used = true) { return used ? (P *)(scr + off) : nullptr; }

    SepPass(const ExecCtx *ctx, char *scr)
        : c(ctx), g(ctx->sep), AD(ctx->ax[0]), AH(ctx->ax[1]), AW(ctx->ax[2]), shifts(ctx->sep.w_doubled ? ctx->ax[2].k : 0) {
        L = g.lanes;
        OWL = AW.out * L;
        xp = at<Acc>(scr, g.xp);
        ph = at<Acc>(scr, g.ph);
        hb = at<Acc>(scr, g.hb);
        vr = at<Acc>(scr, g.vr);
        xpi = at<int64_t>(scr, g.xpi, I);
        phi = at<int64_t>(scr, g.phi, I);
        hbi = at<int64_t>(scr, g.hbi, I);
        vri = at<int64_t>(scr, g.vri, I);
        fP = at<Acc>(scr, g.fbuf[0]);
        fA = at<Acc>(scr, g.fbuf[1]);
        fB = at<Acc>(scr, g.fbuf[2]);
        fC = at<Acc>(scr, g.fbuf[3]);
        fPi = at<int64_t>(scr, g.fbufi[0], I);
        fAi = at<int64_t>(scr, g.fbufi[1], I);
        fBi = at<int64_t>(scr, g.fbufi[2], I);
        fCi = at<int64_t>(scr, g.fbufi[3], I);
        toff = at<int64_t>(scr, g.toff);
        voff = at<int64_t>(scr, g.voff);
        wdiv = at<Div>(scr, g.wdiv);
        wcnt = at<int32_t>(scr, g.wcnt);
        src_end = past_src<T>(c);
        all_w = true;
        for (int64_t ow = 0; ow < AW.out; ++ow) {
            all_w = all_w && AW.kend[ow] > AW.kbeg[ow];
            wdiv[ow] = (Div)AW.div[ow];
            wcnt[ow] = (int32_t)(AW.kend[ow] - AW.kbeg[ow]);
        }
        for (int64_t i = 0; i < 64 / (int64_t)sizeof(Div); ++i) wdiv[AW.out + i] = 1;   // the slack: harmless divisors
        part = strip_part();
        fused = fused_window();
        direct_code = direct_window();
        pair_code = pair_window();
        plane = plane_window();
        pcol = (Lane *)fA;
        pdiv = (Div *)fC;
        pcnt = (int32_t *)fP;
        if (plane) {   // (a running column: dividing per position, 4 x 32 x 48 x 48 k3 s1 p1 took 1.12x the time)
            // One row's columns, then copies of what is there: a value at a
            // time took NXC 1 x 8 x 28 x 28 k3 s1 p1 maxima (one chunk of
            // 6,272 values) 1.7x the time of the whole pooling.
            const int64_t row = AW.in * L, total = g.chunk * row + Vec<T>::lanes;
            for (int64_t w = 0; w < AW.in; ++w)
                for (int64_t l = 0; l < L; ++l) pcol[w * L + l] = (Lane)w;
            for (int64_t have = row; have < total;) {
                const int64_t m = have < total - have ? have : total - have;
                __builtin_memcpy(pcol + have, pcol, m * sizeof(Lane));
                have += m;
            }
        }
    }

    // The plan's flat planes (plane_fits) over dense rows: chunk_plane.
    // Its buffers are the flat path's (fbuf: chunk rows of xlen >= W + k - 1
    // positions and 64 values of slack each).
    // C lanes: the rows' (w, c) values flat, channels dense.
    bool plane_window() const {
        if (Lanes && (c->ss[1] != 1 || c->ds[1] != 1)) return false;
        return g.plane && flat_plane_rows(c->ss, c->ds, AH, AW, L);
    }

    // The W pass and the finish in registers (finish_rows), for values whose
    // every output column sees an input element, written as dense rows:
    //   * one lane, a small strided window (strided_windows) over rows of at
    //     least one vector: 16 * S + KW;
    //   * a stride-1 undilated window the planner takes tap by tap (neither
    //     slid nor factored), one lane or C lanes that fill whole vectors:
    //     kSlideRow (slide_row).
    static constexpr int kSlideRow = 1;
    // The small strided windows of the register paths (plan.hpp) for this
    // row's W axis.
    int small_strided_code() const { return dnnpool::small_strided_code(AW); }
    int fused_window() const {
        constexpr int64_t VL = Vec<T>::lanes;
        if (I || K == kQAvg || AW.d != 1 || !all_w || AW.out * L < VL) return 0;
        if (Lanes ? c->ds[1] != 1 || c->ds[4] != L || L % VL != 0 : c->ds[4] != 1) return 0;
        if (!Lanes && AW.out >= VL && small_strided_code()) return small_strided_code();
        return AW.s == 1 && (doubles_row() || (!g.h_fact && !g.h_dbl)) ? kSlideRow : 0;
    }
    // Whether the fused W pass loads past its rows' ends (the doubled pass's
    // slack), so takes rows from scratch, never straight from src.
    bool fused_reads_past_rows() const { return fused == kSlideRow && doubles_row(); }
    // One lane, stride 1 undilated: the W pass by doubling
    // (kernels_doubling.hpp) rather than tap by tap or factored, as the plan
    // says (g.w_doubled: it also leaves the slack that pass reads).
    static constexpr bool kDoublable = !Lanes && !I && K != kQAvg && kVecBytes == 64;   // (instantiated only then)
    bool doubles_row() const { return kDoublable && g.w_doubled; }
    // One lane: the divisors of output columns [x, x + VL) of a row whose D
    // and H windows count dh (wdiv's slack past the row: divisors of 1).
    typename Vec<T>::V col_divisors(Div dh, int64_t x) const { return dh * *(const typename Vec<T>::VU *)(wdiv + x); }

    // Output columns [lo, hi] where direct_rows' vector blocks may start:
    // windows that start inside the row and whose S * VL (+ S) loads end
    // inside it (none when lo > hi).
    void block_starts(int64_t S, int64_t KW, int64_t &lo, int64_t &hi) const {
        const int64_t reach = S * Vec<T>::lanes + (KW - 1) / S * S, pw = AW.pb;
        lo = (pw + S - 1) / S;
        hi = AW.in - reach + pw >= 0 ? (AW.in - reach + pw) / S : -1;
    }
    // One lane, a small strided window (fused_window's codes) over dense
    // rows: direct_rows, straight from src.  Indices when the offsets of a
    // window's taps from its first one fit the value lanes.  Values when
    // vector blocks cover every output column from the first (no W padding:
    // the scalar columns' data-dependent branches cost resnet50's k3 s2 p1
    // 2.7 times the stacked passes' time) but for up to kDirectTail windows
    // inside the row past the last block (whose loads would leave the row:
    // k1 s2 over odd rows, k3 s2 over 35), and no pass shares rows between
    // output rows (stack_taps' shared blocks, the sliding D/H passes).
    // Values whose W windows overlap (KW > S) load each (d, h) row once per
    // tap base, the stacked passes once: past kDirectMaxRows rows those
    // win (1 thread, 8 channels of 16 x 56 x 56, unpadded: k3 s1 maxima
    // 0.26-0.51 of the time, bf16 0.37, k3 s2 0.54, k2 s1 0.74-0.83, k3
    // averages 0.53-0.67; 2-D windows of 4 and 5 rows 0.94-1.05).  Three
    // rows stay (2-D k3 s1: direct rows 0.92-0.96 of the stacked time).
    // Windows of more rows whose stride-1 H windows share two rows or more
    // go stacked whatever their W taps (taps_shared combines a shared row
    // once): 3-D k3 windows strided 3 along W, 64 channels, 1 thread (Intel
    // Xeon), 0.74-0.86 of the direct time at strides (1, 1, 3) and (2, 1,
    // 3).  Direct rows stay for k2 along H (0.87-0.96 of the stacked time)
    // and k3 strided 2 along H (0.96).
    static constexpr int64_t kDirectTail = 4, kDirectMaxRows = 3;
    int direct_window() const {
        constexpr int64_t VL = Vec<T>::lanes;
        if (Lanes || AW.d != 1 || AW.out < VL || c->ss[4] != 1 || c->ds[4] != 1) return 0;
        const int code = small_strided_code();
        if constexpr (I) {
            return c->xs[4] == 1 && IdxVec<Acc>::offsets_fit(c) ? code : 0;
        } else {
            if (K == kQAvg || g.align >= 2 || g.v_dbl || g.vstream || !code) return 0;
            int64_t lo, hi;
            const int64_t S = code >> 4, KW = code & 15;
            const bool shares_rows = AH.s == 1 && AH.k >= 3;
            if ((KW > S || shares_rows) && AD.k * AH.k > kDirectMaxRows) return 0;
            block_starts(S, KW, lo, hi);
            const int64_t tail = AW.out - (hi + VL);
            const bool tail_inside = (AW.out - 1) * S - AW.pb + KW <= AW.in;
            return lo == 0 && hi >= 0 && (tail <= 0 || (tail <= kDirectTail && tail_inside)) ? code : 0;
        }
    }

    // One lane, over a src beyond the caches: each src row an output row
    // reads is prefetched kAheadBytes on, into the rows of later output rows
    // and planes (a plane of a few dozen KB is too short a stream for the
    // hardware prefetchers).  That distance in values, or 0: none.
    int64_t rows_ahead() const {
        return !Lanes && src_past_prefetch_floor<T>(c) ? kAheadBytes / (int64_t)sizeof(T) : 0;
    }
    // stack_taps' distance (values): one output plane on (kPlaneAheadBytes).
    int64_t planes_ahead() const {
        const int64_t rows = rows_ahead(), plane = AD.s * c->ss[2];
        return rows && AD.out > 1 && plane * (int64_t)sizeof(T) <= kPlaneAheadBytes ? plane : rows;
    }

    // One lane, output row oh straight from src (direct_rows, pair_rows):
    // its window's (d, h) rows (window_rows: src offsets in toff, index
    // values in voff), prefetched `ahead` values on; 0 when there are none
    // (the row is then emitted as empty).
    int64_t src_window(int64_t n, int64_t ch, int64_t od, int64_t oh, const T *src_nc, int64_t ahead) {
        const int64_t nrows = window_rows(c, od, oh, toff, voff);
        if (nrows == 0) emit(nullptr, nullptr, n, ch, od, oh, 0);
        else if (ahead) prefetch_window<T>(src_nc + ahead, toff, nrows, 1, 0, AW.in * (int64_t)sizeof(T));
        return nrows;
    }
    T *dst_row(int64_t n, int64_t ch, int64_t od, int64_t oh) const {
        return (T *)c->dst + n * c->ds[0] + ch * c->ds[1] + od * c->ds[2] + oh * c->ds[3];
    }

    // One lane (direct_window): output rows [oh0, oh1) straight from src.
    // Blocks of VL output columns whose loads stay inside the row (the last
    // overlapping the one before) cover the middle.  Values combine the
    // window's (d, h) rows per load, then its KW taps: the stacked passes'
    // order, the same bits; the columns past their last block (a few,
    // direct_window) go one by one in that order.  Indices take
    // the rows in order and each row's KW taps (strided_idx_taps), so the
    // first maximum in row-major order wins (right_wins); their other
    // columns go one by one by the same rule in the same order.
    template <int S, int KW>
    void direct_rows(int64_t n, int64_t ch, int64_t od, int64_t oh0, int64_t oh1) {
        typedef typename Vec<T>::V V;
        typedef IdxVec<Acc> IV;
        constexpr int64_t VL = Vec<T>::lanes;
        const T *src_nc = (const T *)c->src + n * c->ss[0] + ch * c->ss[1];
        const int64_t ibase = n * c->is[0] + ch * c->is[1], is4 = c->is[4], pw = AW.pb;
        int64_t *roff = toff, *ridx = voff;   // the window's (d, h) rows: src offsets, index values
        int64_t lo, hi;
        block_starts(S, KW, lo, hi);
        const int64_t ahead = rows_ahead();
        for (int64_t oh = oh0; oh < oh1; ++oh) {
            const int64_t nrows = src_window(n, ch, od, oh, src_nc, ahead);
            if (nrows == 0) continue;
            T *o = dst_row(n, ch, od, oh);
            int64_t *xo = I ? c->idx + n * c->xs[0] + ch * c->xs[1] + od * c->xs[2] + oh * c->xs[3] : nullptr;
            const Div dh = (Div)(AD.div[od] * AH.div[oh]);
            int64_t done_lo = AW.out, done_hi = AW.out;   // columns the blocks covered
            if (lo <= hi) {
                done_lo = lo;
                for (int64_t ow = lo;; ow += VL) {
                    if (ow > hi) ow = hi;
                    const T *p = src_nc + ow * S - pw;
                    if constexpr (I) {
                        V acc = strided_tap<T, S, 0>(row_load<T>(p + roff[0]));
                        typename IV::M off = typename IV::M{};
                        strided_idx_taps<T, S, KW, 1>(p + roff[0], 0, is4, acc, off);
                        for (int64_t r = 1; r < nrows; ++r)
                            strided_idx_taps<T, S, KW, 0>(p + roff[r], ridx[r] - ridx[0], is4, acc, off);
                        store_as<T, true>(o + ow, in_order<S, Acc>(acc, LaneIdx<VL>{}));
                        IV::store_offsets(xo + ow, in_order<S, Acc>(off, LaneIdx<VL>{}),
                                          ibase + ridx[0] + (ow * S - pw) * is4, S * is4);
                    } else if constexpr (K != kQAvg) {   // (never called for quantized averages)
                        // The rows combined once per load: S vectors from each
                        // tap offset that is a multiple of S (the taps' bases).
                        constexpr int NB = (KW - 1) / S + 1;
                        V cols[NB][S];
                        for (int b = 0; b < NB; ++b)
                            for (int j = 0; j < S; ++j) cols[b][j] = load_any<T>(p + roff[0] + b * S + j * VL);
                        for (int64_t r = 1; r < nrows; ++r)
                            for (int b = 0; b < NB; ++b)
                                for (int j = 0; j < S; ++j)
                                    cols[b][j] = vcombine<K>(cols[b][j], load_any<T>(p + roff[r] + b * S + j * VL));
                        auto rows = [&](int64_t base, int j) __attribute__((always_inline)) { return cols[base / S][j]; };
                        const V v = strided_windows<T, K, S, KW>(rows);
                        if constexpr (K == kMax) store_as<T, true>(o + ow, v);
                        else store_as<T>(o + ow, v / col_divisors(dh, ow));
                    }
                    done_hi = ow + VL;
                    if (ow == hi) break;
                }
            }
            if constexpr (!I && K != kQAvg) {
                // The columns past the last block (direct_window: windows
                // inside the row): each tap's rows in order, then the taps.
                const QParams qp(c);
                for (int64_t ow = done_hi; ow < AW.out; ++ow) {
                    const T *p = src_nc + ow * S - pw;
                    auto tap_rows = [&](int kw) {
                        Acc v = Traits<T>::load(p[roff[0] + kw]);
                        for (int64_t r = 1; r < nrows; ++r) v = combine<Acc, K>(v, Traits<T>::load(p[roff[r] + kw]));
                        return v;
                    };
                    Acc acc = tap_rows(0);
                    for (int kw = 1; kw < KW; ++kw) acc = combine<Acc, K>(acc, tap_rows(kw));
                    if constexpr (K == kMax) o[ow] = Traits<T>::store(acc);
                    else o[ow] = AvgOut<T, K>::make(acc, dh * wdiv[ow], 0, qp);
                }
            }
            if constexpr (I) {
                for (int64_t ow = 0; ow < AW.out; ++ow) {
                    if (ow == done_lo) ow = done_hi;
                    if (ow >= AW.out) break;
                    const int64_t kw0 = AW.kbeg[ow], kw1 = AW.kend[ow], iw0 = ow * S - pw;
                    Acc acc = Traits<T>::max_init();
                    int64_t arg = -1;
                    for (int64_t r = 0; r < nrows; ++r)
                        for (int64_t kw = kw0; kw < kw1; ++kw) {
                            const Acc v = Traits<T>::load(src_nc[roff[r] + iw0 + kw]);
                            if (right_wins(acc, arg, v)) { acc = v; arg = ibase + ridx[r] + (iw0 + kw) * is4; }
                        }
                    o[ow] = arg >= 0 ? Traits<T>::store(acc) : Traits<T>::lowest();
                    xo[ow] = arg;
                }
            }
        }
    }

    // One lane, stride 2, a window of 2 or 3 taps (pads_begin below it) whose
    // rows never read past their end (no right padding, and 2 OW values
    // fill whole vectors), and at most 3 (d, h) rows: pair_rows, straight
    // from src.  Values as for direct_rows: rows the passes share, and
    // quantized averages, stay on the passes.  (The 3-D k3 s2 p1's 9 rows,
    // 56 long, took 1.28-1.44 times the stacked passes' time.)  16 *
    // pads_begin + KW, or 0.
    int pair_window() const {
        constexpr int64_t VL = Vec<T>::lanes;
        if (I || K == kQAvg || Lanes || AW.s != 2 || AW.d != 1 || AW.k < 2 || AW.k > 3 || AW.pb >= AW.k) return 0;
        if (AD.k * AH.k > 3) return 0;
        if (c->ss[4] != 1 || c->ds[4] != 1 || g.align >= 2 || g.v_dbl || g.vstream) return 0;
        const int64_t OW = AW.out, reach = 2 * OW + (AW.k - 1 - AW.pb == 2 ? 1 : 0);
        // the last block overlaps the one before, and reads the vector before it
        if (OW < VL || reach > AW.in || (OW % VL != 0 && 2 * (OW - VL) < VL)) return 0;
        return (int)(16 * AW.pb + AW.k);
    }

    // Output rows [oh0, oh1) of pair_window's windows.  A block of VL
    // outputs reads 2 VL values of each window row once, combines the rows
    // per load and splits the result into its even and odd positions
    // (pair_phase).  Tap kw is position 2 ow + kw - PB: the evens or the odds
    // as they are, or moved by one output (pair_shift), the lane from the
    // block before (padding for the first) or after.  Blocks go along the
    // row, the last one overlapping the one before (and loading the values
    // before it).  The rows in order, then the taps in order:
    // the stacked passes' bits.  (Float maxima keep their NaN tests: a
    // probe, one add per load, costs more than the tests' one compare per
    // combine.)
    template <int KW, int PB>
    void pair_rows(int64_t n, int64_t ch, int64_t od, int64_t oh0, int64_t oh1) {
        const T *src_nc = (const T *)c->src + n * c->ss[0] + ch * c->ss[1];
        const int64_t *roff = toff;   // the window's (d, h) rows
        // From the plan's pair_ordered_floor of src on, the window's rows are
        // combined in address order first (pair_rows_in_order), then paired
        // from there.
        if (src_bytes<T>(c) >= c->pair_ordered_floor && AW.in <= kOrderedRowValues) {
            pair_rows_in_order<KW, PB>(n, ch, od, oh0, oh1);
            return;
        }
        const int64_t ahead = rows_ahead();
        for (int64_t oh = oh0; oh < oh1; ++oh) {
            const int64_t nrows = src_window(n, ch, od, oh, src_nc, ahead);
            if (nrows == 0) continue;
            T *o = dst_row(n, ch, od, oh);
            const Div dh = (Div)(AD.div[od] * AH.div[oh]);
            switch (nrows) {   // (loads and combines unrolled)
            case 1: pair_row<KW, PB, 1>(src_nc, roff, o, dh); break;
            case 2: pair_row<KW, PB, 2>(src_nc, roff, o, dh); break;
            default: pair_row<KW, PB, 3>(src_nc, roff, o, dh); break;
            }
        }
    }
    // pair_rows from rows_in_order's line (out of line: its stack array
    // and branch cost pair_rows' own loop 1.1x its time).  Its window rows
    // are prefetched rows_ahead() on, as pair_rows' are: on an Intel Xeon
    // (Sapphire Rapids class), against the order alone, ResNet-50's k3 s2
    // p1 maxima at batch 32 (103 MB) took 0.64-0.66 of the time in f32 at 1
    // and 2 threads, 0.79-0.89 in bf16 and f16 at 1 (0.94-0.96 at 2), the
    // exclude-pad average 0.67-0.70, 4 x 64 x 224 x 224 0.67 at 1; VGG's
    // k2 s2 at batch 8 0.74 in f32 at 1 thread, 0.97-1.04 otherwise.  (Paired
    // per load, prefetched the same, was faster still there: Intel cores
    // leave this route, pair_ordered_floor_bytes.)
    template <int KW, int PB>
    __attribute__((noinline)) void pair_rows_in_order(int64_t n, int64_t ch, int64_t od, int64_t oh0, int64_t oh1) {
        const T *src_nc = (const T *)c->src + n * c->ss[0] + ch * c->ss[1];
        alignas(64) Acc line[kOrderedRowValues];
        static constexpr int64_t at_line = 0;
        const int64_t ahead = rows_ahead();
        for (int64_t oh = oh0; oh < oh1; ++oh) {
            const int64_t nrows = src_window(n, ch, od, oh, src_nc, ahead);
            if (nrows == 0) continue;
            rows_in_order(src_nc, toff, nrows, line);
            pair_row<KW, PB, 1>(line, &at_line, dst_row(n, ch, od, oh), (Div)(AD.div[od] * AH.div[oh]));
        }
    }
    // A window's nrows src rows (src_nc + roff[r]) combined into `line`,
    // row by row in address order, the rows in order (the bits of
    // pair_row's per-load combines).  Row by row, the hardware prefetchers
    // follow the lines in order (see ordered_row in kernels_block.hpp; the
    // caller's software prefetches run ahead of them).
    // Against rows paired per load (AMD EPYC, 1 and 2 threads): ResNet-50's
    // k3 s2 p1 maxima at batch 32 (103 MB) 0.82-0.92 of the time, bf16
    // 0.79-0.88; k2 s2 over 128 channels at batch 8 (51 MB) 0.88-1.01,
    // averages 0.78-0.80.  Under the 32 MB L3 it was mixed: at 26 MB, rows
    // of 224 0.69-0.73, rows of 56 and 112 1.05-1.12 (kPairOrderedMinBytes).
    // The last vector, overlapping the one before, combines its rows afresh
    // (sums must not count the overlap twice).
    void rows_in_order(const T *src_nc, const int64_t *roff, int64_t nrows, Acc *line) const {
        typedef typename Vec<T>::V V;
        typedef typename Vec<T>::VU VU;
        constexpr int64_t VL = Vec<T>::lanes;
        const int64_t whole = AW.in - AW.in % VL;
        for (int64_t r = 0; r < nrows; ++r) {
            const T *p = src_nc + roff[r];
            for (int64_t x = 0; x < whole; x += VL) {
                const V v = load_any<T>(p + x);
                *(VU *)(line + x) = r ? vcombine<K>(*(const VU *)(line + x), v) : v;
            }
            asm volatile("" ::: "memory");   // the next row's loads after this row's
        }
        if (whole < AW.in) {
            const int64_t x = AW.in - VL;
            V v = load_any<T>(src_nc + roff[0] + x);
            for (int64_t r = 1; r < nrows; ++r) v = vcombine<K>(v, load_any<T>(src_nc + roff[r] + x));
            *(VU *)(line + x) = v;
        }
    }

    // One output row of pair_rows from its window's NR rows at src_nc + roff[r].
    template <int KW, int PB, int NR, typename S = T>
    __attribute__((always_inline)) void pair_row(const S *src_nc, const int64_t *roff, T *o, Div dh) {
        typedef typename Vec<T>::V V;
        constexpr int64_t VL = Vec<T>::lanes;
        constexpr LaneIdx<VL> lanes{};
        constexpr bool kAfter = KW - 1 - PB == 2;   // a tap two on: the next block's first even value
        constexpr int kBefore = (int)VL - 1;          // pair_shift<kBefore>(before, v): v one output back
        const int64_t OW = AW.out, grid = OW / VL, last = OW % VL ? OW - VL : -1;
        const V pad = V{} + identity<T, K>();
        const S *row[NR];
        for (int r = 0; r < NR; ++r) row[r] = src_nc + roff[r];
        auto rows = [&](int64_t x) __attribute__((always_inline)) {
            V v = load_any<T>(row[0] + x);
            for (int r = 1; r < NR; ++r) v = vcombine<K>(v, load_any<T>(row[r] + x));
            return v;
        };
        auto split = [&](int64_t x, V &E, V &O) __attribute__((always_inline)) {
            const V a = rows(x), b = rows(x + VL);
            E = pair_phase<0>(a, b, lanes);
            O = pair_phase<1>(a, b, lanes);
        };
        auto finish = [&](int64_t ow, V E, V O, V Eb, V Ob, V Ea) __attribute__((always_inline)) {
            auto tap = [&](auto kc) __attribute__((always_inline)) {
                constexpr int t = decltype(kc)::value - PB;
                if constexpr (t == -2) return pair_shift<kBefore>(Eb, E, lanes);
                else if constexpr (t == -1) return pair_shift<kBefore>(Ob, O, lanes);
                else if constexpr (t == 0) return E;
                else if constexpr (t == 1) return O;
                else return Ea;
            };
            V v = tap(std::integral_constant<int, 0>{});
            v = vcombine<K>(v, tap(std::integral_constant<int, 1>{}));
            if constexpr (KW == 3) v = vcombine<K>(v, tap(std::integral_constant<int, 2>{}));
            if constexpr (K == kMax) store_as<T, true>(o + ow, v);
            else if constexpr (K == kAvg) store_as<T>(o + ow, v / col_divisors(dh, ow));
        };
        V Eb = pad, Ob = pad, E, O, En = pad, On = pad, Ea = pad;
        split(0, E, O);
        for (int64_t j = 0; j < grid; ++j) {
            const int64_t x0 = 2 * VL * j;
            const bool more = j + 1 < grid;
            if (more) split(x0 + 2 * VL, En, On);
            // The row's last block reads its next even value as the last of
            // a vector; with an overlapping block to come, that lane's output
            // is pooled again there, so En's stale lane will do.
            if constexpr (kAfter)
                Ea = more || last >= 0 ? pair_shift<1>(E, En, lanes) : shift_in_last(E, rows(x0 + VL + 1), lanes);
            finish(j * VL, E, O, Eb, Ob, Ea);
            Eb = E;
            Ob = O;
            E = En;
            O = On;
        }
        if (last >= 0) {
            const int64_t x0 = 2 * last;
            if constexpr (PB > 0) {
                const V before = rows(x0 - VL);
                Eb = pair_phase<0>(before, before, lanes);
                Ob = pair_phase<1>(before, before, lanes);
            }
            split(x0, E, O);
            if constexpr (kAfter) Ea = shift_in_last(E, rows(x0 + VL + 1), lanes);
            finish(last, E, O, Eb, Ob, Ea);
        }
    }

    // Taps per pass of stack_taps: the most L1 sets a window's src strips
    // share decides (see kTapPart).
    int64_t strip_part() const {
        const int64_t len = (valid_hi() - valid_lo()) * L, strip = len < kStripValues ? len : kStripValues;
        const int64_t lines = (strip * (int64_t)sizeof(T) + 63) / 64, period = kL1Sets * 64;
        int32_t share[kL1Sets] = {};
        int32_t most = 0;
        for (int64_t t = 0; t < AD.k; ++t)
            for (int64_t kh = 0; kh < AH.k; ++kh) {
                const int64_t at = (t * AD.d * c->ss[2] + kh * AH.d * c->ss[3]) * (int64_t)sizeof(T);
                const int64_t set = (at % period + period) % period / 64;
                for (int64_t j = 0; j < lines; ++j) {
                    const int32_t n = ++share[(set + j) % kL1Sets];
                    most = n > most ? n : most;
                }
            }
        return most > kL1Ways ? kTapPart : AD.k * AH.k;
    }

    // Valid positions [j0, j1) of a padded row (w = j - pb).
    int64_t valid_lo() const { return AW.pb < g.wp ? AW.pb : g.wp; }
    int64_t valid_hi() const { return AW.pb + AW.in < g.wp ? AW.pb + AW.in : g.wp; }
    // src rows are unit-stride streams of (w, lane).
    bool dense_rows() const { return Lanes ? c->ss[4] == L : c->ss[4] == 1; }

    // Widens input positions j in [j0, j1) of one row into buf (L values per
    // position) with their indices; `Into` (values only) combines instead.
    template <bool Into>
    __attribute__((always_inline)) void load_row(const T *row, int64_t ibase, Acc *__restrict buf, int64_t *__restrict bufi, int64_t j0, int64_t j1) {
        const int64_t sw = c->ss[4], pb = AW.pb;
        const T *__restrict p = row + (j0 - pb) * sw;
        if (!Into && dense_rows()) {
            widen_span<T>(buf, p, (j1 - j0) * L);
        } else {
            for (int64_t q = 0; q < j1 - j0; ++q)
                for (int64_t l = 0; l < L; ++l) {
                    const Acc v = Traits<T>::load(p[q * sw + l]);
                    buf[q * L + l] = Into ? combine<Acc, K>(buf[q * L + l], v) : v;
                }
        }
        if constexpr (I && !Into) {
            const int64_t a = ibase + (j0 - pb) * c->is[4], step = c->is[4];
            if constexpr (!Lanes) {   // one lane: a plain induction, which vectorises
                for (int64_t q = 0; q < j1 - j0; ++q) bufi[q] = a + q * step;
            } else {
                const int64_t lc = c->is[1];
                for (int64_t q = 0; q < j1 - j0; ++q)
                    for (int64_t l = 0; l < L; ++l) bufi[q * L + l] = a + q * step + l * lc;
            }
        }
    }

    // One input row into a padded row b of xlen positions.  Values: the pads
    // by vector stores whose spills the row (left) or what follows b (the
    // next row, or the buffer's slack) overwrites.
    void widen(const T *row, int64_t ibase, Acc *b, int64_t *bi) {
        const int64_t j0 = valid_lo(), j1 = valid_hi();
        const Acc id0 = identity<T, K>();
        if constexpr (I) fill_rows<Acc, I>(b, bi, id0, j0 * L);
        else fill_pad<T>(b, id0, j0 * L);
        load_row<false>(row, ibase, b + j0 * L, bi + (I ? j0 * L : 0), j0, j1);
        if constexpr (I) fill_rows<Acc, I>(b + j1 * L, bi + (I ? j1 * L : 0), id0, (g.xlen - j1) * L);
        else fill_pad<T>(b + j1 * L, id0, (g.xlen - j1) * L);
    }

    // Values only: the padded row b = the src rows at row0 + off[0..nt) pooled.
    void rows_from_src(const T *row0, const int64_t *off, int64_t nt, Acc *b) {
        const int64_t j0 = valid_lo(), j1 = valid_hi();
        const Acc id0 = identity<T, K>();
        fill_pad<T>(b, id0, j0 * L);   // spills are overwritten below / by the next row
        fill_pad<T>(b + j1 * L, id0, (g.xlen - j1) * L);
        if (dense_rows()) {
            taps_reduce<T, K, false, T>(b + j0 * L, nullptr, row0 + (j0 - AW.pb) * c->ss[4], nullptr, off, nt,
                                        (j1 - j0) * L);
        } else {
            load_row<false>(row0 + off[0], 0, b + j0 * L, nullptr, j0, j1);
            for (int64_t t = 1; t < nt; ++t) load_row<true>(row0 + off[t], 0, b + j0 * L, nullptr, j0, j1);
        }
    }

    // Splits nr stacked rows into s phases of nr * phase_len positions: phase
    // p holds padded positions p, p + s, ...
    template <int S, typename V>
    static void deinterleave(const V *__restrict x, V *__restrict ph, int64_t len, int64_t s) {
        if constexpr (S != 0) {
            for (int64_t q = 0; q < len; ++q)
                for (int p = 0; p < S; ++p) ph[p * len + q] = x[q * S + p];
        } else {
            for (int64_t p = 0; p < s; ++p)
                for (int64_t q = 0; q < len; ++q) ph[p * len + q] = x[q * s + p];
        }
    }
    template <typename V>
    static void split_phases(const V *x, V *ph, int64_t len, int64_t s) {
        switch (s) {
        case 2: deinterleave<2>(x, ph, len, s); break;
        case 3: deinterleave<3>(x, ph, len, s); break;
        case 4: deinterleave<4>(x, ph, len, s); break;
        default: deinterleave<0>(x, ph, len, s); break;
        }
    }

    // split_phases for positions of L (fewer than a vector's) values: a copy
    // of the 16, 32 or 64 bytes that hold a position, whose spill past it the
    // next position's copy overwrites (the last one's lands in the buffers'
    // slack of 64 values).
    template <int B, typename V>
    static void copy_lane_phases(const V *__restrict x, V *__restrict ph, int64_t len, int64_t s, int64_t L) {
        const int64_t bytes = L * (int64_t)sizeof(V);
        for (int64_t p = 0; p < s; ++p)
            for (int64_t q = 0; q < len; ++q) {
                const char *from = (const char *)(x + (q * s + p) * L);
                char *to = (char *)(ph + (p * len + q) * L);
                for (int64_t b = 0; b < bytes; b += B) __builtin_memcpy(to + b, from + b, B);
            }
    }
    template <typename V>
    static void split_lane_phases(const V *x, V *ph, int64_t len, int64_t s, int64_t L) {
        const int64_t bytes = L * (int64_t)sizeof(V);
        if (bytes <= 16) copy_lane_phases<16>(x, ph, len, s, L);
        else if (bytes <= 32) copy_lane_phases<32>(x, ph, len, s, L);
        else copy_lane_phases<64>(x, ph, len, s, L);
    }

    // Y[x] = X[x*S] (+) ... (+) X[x*S + KW-1]: the common small strided
    // windows in one pass (the compiler turns the fixed pattern into shuffles).
    template <int S, int KW>
    static void strided_reduce(const Acc *__restrict X, Acc *__restrict Y, int64_t n) {
        for (int64_t x = 0; x < n; ++x) {
            Acc a = X[x * S];
            for (int kw = 1; kw < KW; ++kw) a = combine<Acc, K>(a, X[x * S + kw]);
            Y[x] = a;
        }
    }
    static bool strided_reduce_fixed(const Acc *X, Acc *Y, int64_t n, int64_t s, int64_t k) {
        if (s == 2 && k == 2) strided_reduce<2, 2>(X, Y, n);
        else if (s == 2 && k == 3) strided_reduce<2, 3>(X, Y, n);
        else if (s == 3 && k == 3) strided_reduce<3, 3>(X, Y, n);
        else if (s == 4 && k == 4) strided_reduce<4, 4>(X, Y, n);
        else return false;
        return true;
    }

    // W pass of nr stacked padded rows X (xlen positions each) into Y (rows
    // of *yw positions; positions past OW are don't-cares).  X may be destroyed.
    void horizontal(Acc *X, int64_t *Xi, int64_t nr, Acc *PH, int64_t *PHi, Acc *Y, int64_t *Yi, int64_t *yw) {
        const int64_t s = AW.s, k = AW.k, d = AW.d, xl = g.xlen;
        if (s == 1) {
            *yw = xl;
            const int64_t nout = ((nr - 1) * xl + AW.out) * L;
            if constexpr (!I) {
                if (g.h_fact) {
                    window_factored<T, K>(X, L, k, g.h_fact, PH, Y, nout / L, toff);
                    return;
                }
            }
            if (g.h_dbl) {
                // One row: blocks aligned to its padded position 0; stacked
                // rows (one lane, never vectorising blocks) by doubling.
                if (nr == 1) window_reduce<Acc, K, I>(X, Xi, nout / L + k - 1, L, k, Y, Yi, nout / L, 0);
                else window_doubling<Acc, K, I>(X, Xi, nout / L + k - 1, L, k, Y, Yi, nout / L);
                return;
            }
            for (int64_t kw = 0; kw < k; ++kw) toff[kw] = kw * d * L;
            if constexpr (!I && Lanes) {   // C lanes: slide_shared's blocks, from each row's column 0
                constexpr int G = (int)kShareRows;
                if (k >= G && d == 1) {
                    for (int64_t r = 0; r < nr; ++r) {
                        Acc *y = Y + r * xl * L;
                        const Acc *x = X + r * xl * L;
                        int64_t ow = 0;
                        for (; ow + G <= AW.out; ow += G) taps_shared<T, K, G>(y + ow * L, L, x + ow * L, L, k, L, 0, G);
                        taps_reduce<T, K, I, Acc>(y + ow * L, Yi, x + ow * L, Xi, toff, k, (AW.out - ow) * L);
                    }
                    return;
                }
            }
            taps_reduce<T, K, I, Acc>(Y, Yi, X, Xi, toff, k, nout);
            return;
        }
        if (Lanes && !g.w_phases) {   // lanes of a vector or more: one fused pass per output
            *yw = AW.out;
            for (int64_t kw = 0; kw < k; ++kw) toff[kw] = kw * d * L;
            for (int64_t r = 0; r < nr; ++r)
                for (int64_t ow = 0; ow < AW.out; ++ow) {
                    const int64_t xo = (r * xl + ow * s) * L, yo = (r * AW.out + ow) * L;
                    taps_reduce<T, K, I, Acc>(Y + yo, Yi + (I ? yo : 0), X + xo, Xi + (I ? xo : 0), toff, k, L);
                }
            return;
        }
        const int64_t plen = g.phase_len, total = nr * plen;
        *yw = plen;
        if constexpr (!I && !Lanes) {
            if (d == 1 && strided_reduce_fixed(X, Y, (nr - 1) * plen + AW.out, s, k)) return;
        }
        if constexpr (Lanes) {
            split_lane_phases(X, PH, total, s, L);
            if constexpr (I) split_lane_phases(Xi, PHi, total, s, L);
        } else {
            split_phases(X, PH, total, s);
            if constexpr (I) split_phases(Xi, PHi, total, s);
        }
        for (int64_t kw = 0, p = 0, q = 0; kw < k; ++kw) {
            toff[kw] = (p * total + q) * L;
            p += d % s;
            q += d / s;
            if (p >= s) { p -= s; ++q; }
        }
        taps_reduce<T, K, I, Acc>(Y, Yi, PH, PHi, toff, k, ((nr - 1) * plen + AW.out) * L);
    }

    // Y row r = taps kh of X rows r*s + kh*d (rows of w values); X may be destroyed.
    // X row 0 is padded row `origin` (stride 1 when doubling).
    void vertical(Acc *X, int64_t *Xi, int64_t xrows, int64_t w, int64_t nr, Acc *Y, int64_t *Yi, int64_t origin) {
        if (g.v_dbl) {
            window_reduce<Acc, K, I>(X, Xi, xrows, w, AH.k, Y, Yi, nr, origin);
            return;
        }
        for (int64_t kh = 0; kh < AH.k; ++kh) toff[kh] = kh * AH.d * w;
        if (AH.s == 1) {
            taps_reduce<T, K, I, Acc>(Y, Yi, X, Xi, toff, AH.k, nr * w);
        } else {
            for (int64_t r = 0; r < nr; ++r) {
                const int64_t xo = r * AH.s * w;
                taps_reduce<T, K, I, Acc>(Y + r * w, Yi + (I ? r * w : 0), X + xo, Xi + (I ? xo : 0), toff, AH.k, w);
            }
        }
    }

    // Finalizes output row (n, ch, od, oh) from its pooled values V (null:
    // the depth/height window holds no input row; vcnt = its valid (d, h) taps).
    // C lanes: the end of the run of output columns from ow on that finish
    // alike (the same count and divisor) and lie side by side in dst, so one
    // block_store takes them (whole vectors, then single values: the bits of
    // a store per column).
    int64_t same_columns(int64_t ow) const {
        int64_t oe = ow + 1;
        if (c->ds[4] == L)
            while (oe < AW.out && wcnt[oe] == wcnt[ow] && wdiv[oe] == wdiv[ow]) ++oe;
        return oe;
    }
    void emit(const Acc *V, const int64_t *Vi, int64_t n, int64_t ch, int64_t od, int64_t oh, int64_t vcnt) {
        T *__restrict out = (T *)c->dst + n * c->ds[0] + ch * c->ds[1] + od * c->ds[2] + oh * c->ds[3];
        const int64_t ows = c->ds[4], ls = c->ds[1], OW = AW.out;
        const int32_t *__restrict wcnt = this->wcnt;
        const Div *__restrict wdiv = this->wdiv;
        if constexpr (K == kMax) {
            if (!V) {
                for (int64_t ow = 0; ow < OW; ++ow)
                    for (int64_t l = 0; l < L; ++l) out[ow * ows + l * ls] = Traits<T>::lowest();
            } else if (!Lanes && ows == 1 && all_w) {
                block_store<T, K>(V, OW, out, 1, 1, c);
            } else if (Lanes && ls == 1) {
                for (int64_t ow = 0, oe; ow < OW; ow = oe) {
                    oe = same_columns(ow);
                    block_store<T, K>(V + ow * L, (oe - ow) * L, out + ow * ows, wcnt[ow], 1, c);
                }
            } else if (!Lanes && ows == 1) {
                for (int64_t ow = 0; ow < OW; ++ow)
                    out[ow] = wcnt[ow] ? Traits<T>::store(V[ow]) : Traits<T>::lowest();
            } else {
                for (int64_t ow = 0; ow < OW; ++ow)
                    for (int64_t l = 0; l < L; ++l)
                        out[ow * ows + l * ls] = wcnt[ow] ? Traits<T>::store(V[ow * L + l]) : Traits<T>::lowest();
            }
            if constexpr (I) {
                int64_t *xo = c->idx + n * c->xs[0] + ch * c->xs[1] + od * c->xs[2] + oh * c->xs[3];
                const int64_t xws = c->xs[4], xls = c->xs[1];
                for (int64_t ow = 0; ow < OW; ++ow)
                    for (int64_t l = 0; l < L; ++l)
                        xo[ow * xws + l * xls] = (V && wcnt[ow]) ? Vi[ow * L + l] : -1;
            }
        } else {
            const Div dh = (Div)(AD.div[od] * AH.div[oh]);
            const QParams q(c);
            const int32_t vc = (int32_t)vcnt;
            if (!Lanes && ows == 1 && V) {
                int64_t ow = 0;
                if constexpr (K == kAvg && !__is_same(T, Acc)) {   // 16-bit: per-column divisors in lanes (GCC vectorises f32/f64 itself)
                    typedef typename Vec<T>::V Vv;
                    typedef typename Vec<T>::VU VU;
                    constexpr int64_t VL = Vec<T>::lanes;
                    for (; ow + VL <= OW; ow += VL)
                        store_as<T>(out + ow, (Vv) * (const VU *)(V + ow) / col_divisors(dh, ow));
                    if (ow < OW) {
                        // The tail in one vector too: V rows and wdiv have slack
                        // past OW (lanes past it are computed, then dropped).
                        store_head_as<T>(out + ow, (Vv) * (const VU *)(V + ow) / col_divisors(dh, ow), OW - ow);
                        ow = OW;
                    }
                }
                for (; ow < OW; ++ow) out[ow] = AvgOut<T, K>::make(V[ow], dh * wdiv[ow], vc * wcnt[ow], q);
            } else if (Lanes && ls == 1 && V) {
                for (int64_t ow = 0, oe; ow < OW; ow = oe) {
                    oe = same_columns(ow);
                    block_store<T, K>(V + ow * L, (oe - ow) * L, out + ow * ows, vc * wcnt[ow], dh * wdiv[ow], c);
                }
            } else if (!Lanes && ows == 1) {
                for (int64_t ow = 0; ow < OW; ++ow) out[ow] = AvgOut<T, K>::make((Acc)0, dh * wdiv[ow], 0, q);
            } else {
                for (int64_t ow = 0; ow < OW; ++ow) {
                    const Div div = dh * wdiv[ow];
                    const int32_t nvalid = vc * wcnt[ow];
                    for (int64_t l = 0; l < L; ++l)
                        out[ow * ows + l * ls] = AvgOut<T, K>::make(V ? V[ow * L + l] : (Acc)0, div, nvalid, q);
                }
            }
        }
    }

    // stack_taps over stride-1 rows: blocks of g.align output rows, aligned to
    // output row 0, share their rows' loads and partial results (taps_shared)
    // when all their windows are full; the rest go tap by tap (with NaN
    // tests).  Float maxima, blocks of 4: Nan = false, the shared blocks
    // without NaN tests, probed; returns false when a probe found a NaN (the
    // caller redoes the chunk with Nan = true), else [*lo_out, *hi_out) are
    // the rows of the probed blocks (empty unless they are one range, as the
    // full windows of a stride-1 axis are).  Scan (one lane): every block and
    // row whose src rows rows_clean finds clean goes without NaN tests.
    template <bool Nan, bool Probe = !Nan, bool Scan = false>
    bool shared_stack(Acc *stack, const T *base, int64_t oh0, int64_t oh1, int64_t len, int64_t sv, int64_t xl,
                      int64_t tmax, int64_t *lo_out = nullptr, int64_t *hi_out = nullptr) {
        const int64_t grp = g.align, j0 = valid_lo(), s3 = c->ss[3];
        typename Vec<T>::V probe{};
        int64_t full_lo = oh1, full_hi = oh0, full_rows = 0;
        // Long rows start their blocks at the first aligned src value, behind
        // one head vector they overlap (the same windows again, the same bits
        // stored twice); the first strip takes the values up to it too, so
        // that happens once per row.  Rows under 32 vectors (NCX rows of 128)
        // lose more to the extra vector than the aligned loads win.
        constexpr int64_t VL = Vec<T>::lanes;
        const int64_t lead = sv < len && len >= 32 * VL ? aligned_head<T>(base, len) : 0;
        for (int64_t x = 0, m; x < len; x += m) {
            m = x == 0 ? sv + lead : sv;
            if (m > len - x) m = len - x;
            for (int64_t ob = oh0 - oh0 % grp; ob < oh1; ob += grp) {
                const int64_t lo = ob > oh0 ? ob : oh0, hi = ob + grp < oh1 ? ob + grp : oh1;
                bool full = ob + grp <= AH.out;
                for (int64_t g = 0; full && g < grp; ++g) full = AH.kend[ob + g] - AH.kbeg[ob + g] == AH.k;
                Acc *y = stack + (lo - oh0) * xl + j0 * L + x;
                if (full) {
                    if (x == 0) {
                        full_lo = lo < full_lo ? lo : full_lo;
                        full_hi = hi > full_hi ? hi : full_hi;
                        full_rows += hi - lo;
                    }
                    const T *rows = base + x + (ob - AH.pb) * s3;
                    const int g0 = (int)(lo - ob), g1 = (int)(hi - ob);
                    const bool plain = Scan && rows_clean(ob - AH.pb + AH.k + grp - 1);
                    auto shared = [&](int64_t at, int64_t cnt) {
                        if constexpr (Scan)
                            if (plain) return taps_shared<T, K, 4, false, false>(y + at, xl, rows + at, s3, AH.k, cnt, g0, g1);
                        if (grp == 4) taps_shared<T, K, 4, Nan, Probe>(y + at, xl, rows + at, s3, AH.k, cnt, g0, g1, &probe);
                        else if (grp == 3) taps_shared<T, K, 3>(y + at, xl, rows + at, s3, AH.k, cnt, g0, g1);
                        else taps_shared<T, K, 2>(y + at, xl, rows + at, s3, AH.k, cnt, g0, g1);
                    };
                    // The head vector; the values after it; a last vector
                    // overlapping the one before instead of a scalar tail.
                    const int64_t head = x == 0 ? lead : 0, tail = m - head >= VL ? (m - head) % VL : 0;
                    if (head) shared(0, VL);
                    shared(head, m - head - tail);
                    if (tail) shared(m - VL, VL);
                    continue;
                }
                for (int64_t oh = lo; oh < hi; ++oh, y += xl) {
                    const int64_t nt = AH.kend[oh] - AH.kbeg[oh];
                    const int64_t *off = voff + (oh - oh0) * tmax;
                    if (!nt) continue;
                    if constexpr (Scan)
                        if (rows_clean(oh - AH.pb + AH.kend[oh])) {
                            taps_pass<T, K, false>(y, base + x, off, nt, m, false);
                            continue;
                        }
                    taps_pass<T, K, Nan || Probe>(y, base + x, off, nt, m, false);
                }
            }
        }
        if constexpr (Probe) {
            if (holds_nan(probe)) return false;
            const bool one_range = full_rows == full_hi - full_lo;
            *lo_out = one_range ? full_lo : 0;
            *hi_out = one_range ? full_hi : 0;
        }
        return true;
    }

    // One lane, float maxima (stack_taps): src rows are checked for NaN just
    // before the first block that reads them, which then finds them in L1.
    const T *scan_base;   // the valid values of src row 0
    int64_t scan_len;     // values per row
    int64_t scan_to;      // rows [.., scan_to) checked
    int64_t nan_row;      // rows from here on may hold a NaN (AH.in: none found)
    // Whether src rows [.., end) hold no NaN, checking the rows up to end
    // not checked yet (all at once: one sum, which is NaN if a value is, or
    // if both infinities are there: a false alarm, which only keeps the NaN
    // tests).
    bool rows_clean(int64_t end) {
        typedef typename Vec<T>::V V;
        constexpr int64_t VL = Vec<T>::lanes;
        if (end > AH.in) end = AH.in;
        if (scan_to < end && nan_row == AH.in) {
            V sum[4] = {};
            for (int64_t r = scan_to; r < end; ++r) {
                const T *p = scan_base + r * c->ss[3];
                int64_t x = 0;
                for (; x + 4 * VL <= scan_len; x += 4 * VL)
                    for (int j = 0; j < 4; ++j) sum[j] += load_any<T>(p + x + j * VL);
                for (; x + VL <= scan_len; x += VL) sum[0] += load_any<T>(p + x);
                for (; x < scan_len; ++x) sum[1][0] += load_one<T>(p[x]);
            }
            const V total = (sum[0] + sum[1]) + (sum[2] + sum[3]);
            if (holds_nan(total)) nan_row = scan_to;
            scan_to = end;
        }
        return end <= scan_to && end <= nan_row;
    }

    // Values: the (d, h) taps of output rows [oh0, oh1) straight from src
    // into the padded rows of `stack` (g.xlen * L values apart).  Dense rows
    // go column strip by column strip, so the src strips of a window stay in
    // L1 across the chunk (in passes of `part` taps, see kTapPart); strided
    // rows go row by row.
    void stack_taps(int64_t n, int64_t ch, int64_t od, int64_t oh0, int64_t oh1, Acc *stack) {
        const int64_t kd0 = AD.kbeg[od], planes = AD.kend[od] - kd0;
        const int64_t id0 = od * AD.s - AD.pb + kd0 * AD.d;
        const int64_t xl = g.xlen * L, tmax = AD.k * AH.k, j0 = valid_lo(), j1 = valid_hi();
        const T *src_od = (const T *)c->src + n * c->ss[0] + ch * c->ss[1] + id0 * c->ss[2];
        const Acc id = identity<T, K>();
        const int64_t dstep = AD.d * c->ss[2], hstep = AH.d * c->ss[3], s3 = c->ss[3];   // locals: voff may alias c
        const T *base = src_od + (j0 - AW.pb) * c->ss[4];
        const int64_t len = (j1 - j0) * L, grp = g.align;
        // Tap by tap over rows under kFuseVecs vectors: runs of full windows
        // (their taps AH.s src rows apart) go together (taps_reduce_rows),
        // from the offsets of the run's first row; k3 s2 windows along H
        // carry their last row to the next window (taps_carry_rows), rows
        // of kFuseVecs vectors included.
        const bool dense_single = grp < 2 && dense_rows();   // rows one by one (no g.align groups), values adjacent
        const bool carry = dense_single && len <= kFuseVecs * Vec<T>::lanes && carries_rows();
        const bool runs = carry || (dense_single && len < kFuseVecs * Vec<T>::lanes);
        auto full = [&](int64_t oh) { return AH.kend[oh] - AH.kbeg[oh] == AH.k; };
        for (int64_t oh = oh0; oh < oh1; ++oh) {
            const int64_t r = oh - oh0, kh0 = AH.kbeg[oh], nkh = AH.kend[oh] - kh0;
            const int64_t row0 = (oh * AH.s - AH.pb + kh0 * AH.d) * s3;
            if (runs && oh > oh0 && full(oh) && full(oh - 1)) continue;
            int64_t *__restrict off = voff + r * tmax;
            for (int64_t t = 0; t < planes; ++t)
                for (int64_t kh = 0; kh < nkh; ++kh) *off++ = t * dstep + row0 + kh * hstep;
            if (nkh == 0) fill_rows<Acc, false>(stack + r * xl, nullptr, id, xl);   // emitted as empty
        }
        if (!dense_rows()) {
            for (int64_t oh = oh0; oh < oh1; ++oh) {
                const int64_t r = oh - oh0, nt = planes * (AH.kend[oh] - AH.kbeg[oh]);
                if (nt) rows_from_src(src_od, voff + r * tmax, nt, stack + r * xl);
            }
            return;
        }
        for (int64_t r = 0; r < oh1 - oh0; ++r) {
            fill_pad<T>(stack + r * xl, id, j0 * L);   // spills are overwritten below
            fill_pad<T>(stack + r * xl + j1 * L, id, (g.xlen - j1) * L);
        }
        // One output row, or windows of one row: no reuse to keep, whole rows.
        const int64_t sv = oh1 - oh0 == 1 || tmax == 1 ? len : kStripValues;
        if (grp >= 2) {
            if constexpr (kProbed) {
                // C lanes (chunks of a few rows): the shared blocks probed.
                // One lane (chunks of most of a plane's rows, border rows
                // included): the src rows scanned as the blocks reach them.
                if (Lanes && grp == 4) {
                    if (!shared_stack<false>(stack, base, oh0, oh1, len, sv, xl, tmax, &clean_lo, &clean_hi))
                        shared_stack<true>(stack, base, oh0, oh1, len, sv, xl, tmax);
                    return;
                }
                if (!Lanes && grp == 4) {
                    scan_base = base;
                    scan_len = len;
                    scan_to = oh0 - AH.pb > 0 ? oh0 - AH.pb : 0;
                    nan_row = AH.in;
                    shared_stack<true, false, true>(stack, base, oh0, oh1, len, sv, xl, tmax);
                    clean_lo = clean_hi = oh0;
                    while (clean_hi < oh1 && rows_clean(clean_hi - AH.pb + AH.kend[clean_hi])) ++clean_hi;
                    return;
                }
            }
            shared_stack<true>(stack, base, oh0, oh1, len, sv, xl, tmax);
            return;
        }
        const int64_t rstep = AH.s * s3, ahead = planes_ahead();
        for (int64_t x = 0; x < len; x += sv) {
            const int64_t m = len - x < sv ? len - x : sv;
            for (int64_t p0 = 0; p0 < tmax; p0 += part)
                for (int64_t oh = oh0, oe; oh < oh1; oh = oe) {
                    const int64_t r = oh - oh0, left = planes * (AH.kend[oh] - AH.kbeg[oh]) - p0;
                    oe = oh + 1;
                    if (runs && full(oh))
                        while (oe < oh1 && full(oe)) ++oe;
                    if (left <= 0) continue;
                    const int64_t *off = voff + r * tmax;
                    const int64_t nt = left < part ? left : part;
                    Acc *y = stack + r * xl + j0 * L + x;
                    if (carry && oe - oh > 1 && p0 == 0 && m >= Vec<T>::lanes) {
                        carry_rows(y, xl, base + x, off, planes, hstep, m, oe - oh, ahead);
                        continue;   // (its rows prefetched as it goes, each once)
                    }
                    if (ahead && p0 == 0)
                        for (int64_t q = 0; q < oe - oh; ++q)
                            prefetch_window<T>(base + x + q * rstep + ahead, off, left, 1, 0, m * (int64_t)sizeof(T));
                    if (oe - oh > 1) {
                        if (p0 > 0) taps_reduce_rows<T, K, T, true>(y, xl, base + x, rstep, off + p0, nt, m, oe - oh);
                        else taps_reduce_rows<T, K, T>(y, xl, base + x, rstep, off, nt, m, oe - oh);
                    } else {
                        taps_pass<T, K>(y, base + x, voff + r * tmax + p0, nt, m, p0 > 0);
                    }
                }
        }
    }

    // Whether runs of full windows go to taps_carry_rows: k3 s2 along H, up
    // to three planes, one pass.  (Rows over kFuseVecs vectors, carried in
    // groups of 8 output rows block by block, took 0.93-1.11 of the
    // row-by-row passes' time: they stay on those.)
    bool carries_rows() const {
        return AH.k == 3 && AH.s == 2 && AH.d == 1 && AD.k <= 3 && part >= AD.k * AH.k;
    }
    // A run of nr full windows (carries_rows()) to taps_carry_rows: each of
    // the planes starts at its first tap's offset (off, the run's first
    // row's), its three rows h apart; rows of n values, VL <= n <= kFuseVecs
    // vectors.
    void carry_rows(Acc *y, int64_t ys, const T *X, const int64_t *off, int64_t planes, int64_t h, int64_t n,
                    int64_t nr, int64_t ahead) {
        constexpr int64_t VL = Vec<T>::lanes;
        const T *plane[3] = {X, X, X};
        for (int64_t d = 0; d < planes; ++d) plane[d] = X + off[3 * d];
        switch ((n + VL - 1) / VL) {
        case 1: taps_carry_rows<T, K, 1>(y, ys, plane, planes, h, n, nr, ahead); break;
        case 2: taps_carry_rows<T, K, 2>(y, ys, plane, planes, h, n, nr, ahead); break;
        case 3: taps_carry_rows<T, K, 3>(y, ys, plane, planes, h, n, nr, ahead); break;
        default: taps_carry_rows<T, K, 4>(y, ys, plane, planes, h, n, nr, ahead); break;
        }
    }

    // Output row `out` from its padded row X (storage type or accumulators):
    // VL columns at a time, the last block overlapping the one before.
    template <int S, int KW, typename Src>
    void strided_row(const Src *X, T *__restrict out, Div dh) {
        constexpr int64_t VL = Vec<T>::lanes;
        const int64_t last = AW.out - VL;
        for (int64_t ow = 0;; ow += VL) {
            if (ow > last) ow = last;
            const typename Vec<T>::V v = strided_windows<T, K, S, KW>(row_load<T>(X + ow * S));
            if constexpr (K == kMax) store_as<T, true>(out + ow, v);
            else if constexpr (K == kAvg) store_as<T>(out + ow, v / col_divisors(dh, ow));
            if (ow == last) break;
        }
    }
    // Output row `out` from its padded row X (storage type or accumulators):
    // stride-1 windows of AW.k positions (L values apart) over the flat values
    // x = ow * L + l, taps in order (the sums of the tap-by-tap W pass), NV
    // vectors per block.  One lane: blocks along the row (divisors per
    // column), the last one a vector overlapping the one before; C lanes:
    // blocks along each column's channels (whole vectors, one divisor).
    // Slack: X is a scratch row with slack past its end, so one lane takes
    // taps by shuffles (slide_taps); src rows are loaded tap by tap.  Nan =
    // false: X holds no NaN (maxima in one instruction).
    template <int NV, bool Slack, bool Nan, typename Src>
    __attribute__((always_inline)) void slide_block(const Src *X, T *__restrict out, int64_t x, Div dh, Div div_col) {
        typedef typename Vec<T>::V V;
        constexpr int64_t VL = Vec<T>::lanes;
        V acc[NV];
        if constexpr (!Lanes && Slack) {
            slide_taps<T, K, NV, Nan>(X + x, AW.k, acc, LaneIdx<VL>{});
        } else {
            for (int j = 0; j < NV; ++j) acc[j] = load_any<T>(X + x + j * VL);
            for (int64_t t = 1; t < AW.k; ++t) {
                const Src *p = X + x + t * L;
                for (int j = 0; j < NV; ++j) acc[j] = vcombine<K, Nan>(acc[j], load_any<T>(p + j * VL));
            }
        }
        for (int j = 0; j < NV; ++j) {
            const int64_t xj = x + j * VL;
            if constexpr (K == kMax) {
                store_as<T, true>(out + xj, acc[j]);
            } else if constexpr (K == kAvg) {   // (quantized averages never slide here)
                const V div = Lanes ? (V){} + div_col : col_divisors(dh, xj);
                store_as<T>(out + xj, acc[j] / div);
            }
        }
    }
    // C lanes: output columns in blocks of kShareRows from column 0 (as in
    // horizontal's stacked W pass: the same bits whichever pass runs) whose
    // windows share their columns' loads and partial sums (shared_block
    // along W: k + 6 combines for four columns instead of 4k - 4).  Returns
    // the first column left to the tap-by-tap blocks.  Nan = false: the row
    // holds no NaN.
    template <bool Nan, typename Src>
    int64_t slide_shared(const Src *X, T *__restrict out, Div dh) {
        typedef typename Vec<T>::V V;
        constexpr int64_t VL = Vec<T>::lanes;
        constexpr int G = (int)kShareRows;
        int64_t ow = 0;
        for (; ow + G <= AW.out; ow += G) {
            Div div[G];
            for (int g = 0; g < G; ++g) div[g] = (Div)(dh * wdiv[ow + g]);
            T *o = out + ow * L;
            auto put = [&](int g, int64_t at, V v) {
                if constexpr (K == kMax) store_as<T, true>(o + g * L + at, v);
                else if constexpr (K == kAvg) store_as<T>(o + g * L + at, v / ((V){} + div[g]));
            };
            const Src *Xo = X + ow * L;
            int64_t x = 0;
            for (; x + 2 * VL <= L; x += 2 * VL) shared_block<T, K, G, 2, Nan, false>(Xo, L, AW.k, x, put);
            if (x < L) shared_block<T, K, G, 1, Nan, false>(Xo, L, AW.k, x, put);
        }
        return ow;
    }
    // One lane (doubling): output row `out` from its padded row X, a scratch
    // row with kDoublingSlackBytes of slack.
    template <bool Nan, typename Src>
    void doubled_row(const Src *X, T *__restrict out, Div dh) {
        typedef typename Vec<T>::V V;
        constexpr int64_t VL = Vec<T>::lanes;
        const int64_t n = AW.out;
        const int nl = shifts.nl;
        const DoublingShifts<T> &sh = shifts;
        auto put = [&](int64_t b, V v) __attribute__((always_inline)) {
            const int64_t x = b * VL;
            if constexpr (K == kAvg) v = v / col_divisors(dh, x);
            if (x + VL <= n) store_as<T, K == kMax>(out + x, v);
            else store_head_as<T, K == kMax>(out + x, v, n - x);   // the row's last outputs
        };
        const int64_t nb = (n + VL - 1) / VL;
        if (nl == 2) doubled_blocks<T, K, 2, Nan>(X, nb, sh, put, LaneIdx<VL>{});
        else if (nl == 3) doubled_blocks<T, K, 3, Nan>(X, nb, sh, put, LaneIdx<VL>{});
        else if constexpr (VL >= 16) doubled_blocks<T, K, 4, Nan>(X, nb, sh, put, LaneIdx<VL>{});   // (doubling_fits)
    }
    template <bool Slack, bool Nan, typename Src>
    void slide_row(const Src *X, T *__restrict out, Div dh) {
        constexpr int64_t VL = Vec<T>::lanes;
        constexpr int NV = 4;
        if (Lanes) {
            int64_t ow = 0;
            if (AW.k >= kShareRows) ow = slide_shared<Nan>(X, out, dh);
            for (int64_t x = ow * L; ow < AW.out; ++ow) {
                const Div div_col = dh * wdiv[ow];
                const int64_t end = x + L;
                for (; x + NV * VL <= end; x += NV * VL) slide_block<NV, Slack, Nan>(X, out, x, dh, div_col);
                for (; x < end; x += VL) slide_block<1, Slack, Nan>(X, out, x, dh, div_col);
            }
            return;
        }
        if constexpr (Slack && kDoublable) {
            if (doubles_row()) return doubled_row<Nan>(X, out, dh);
        }
        const int64_t n = AW.out;
        int64_t x = 0;
        for (; x + NV * VL <= n; x += NV * VL) slide_block<NV, Slack, Nan>(X, out, x, dh, dh);
        for (; x + VL <= n; x += VL) slide_block<1, Slack, Nan>(X, out, x, dh, dh);
        if (x < n) slide_block<1, Slack, Nan>(X, out, n - VL, dh, dh);
    }
    // clean: X holds no NaN (only float maxima tell the difference).
    template <bool Slack, typename Src>
    void finish_row(const Src *X, T *out, Div dh, bool clean = false) {
        switch (fused) {
        case kSlideRow:
            if constexpr (kProbed) {
                if (clean) {
                    slide_row<Slack, false>(X, out, dh);
                    break;
                }
            }
            slide_row<Slack, true>(X, out, dh);
            break;
        case 0x12: strided_row<1, 2>(X, out, dh); break;
        case 0x13: strided_row<1, 3>(X, out, dh); break;
        case 0x21: strided_row<2, 1>(X, out, dh); break;
        case 0x22: strided_row<2, 2>(X, out, dh); break;
        case 0x23: strided_row<2, 3>(X, out, dh); break;
        case 0x31: strided_row<3, 1>(X, out, dh); break;
        case 0x32: strided_row<3, 2>(X, out, dh); break;
        case 0x33: strided_row<3, 3>(X, out, dh); break;
        case 0x41: strided_row<4, 1>(X, out, dh); break;
        case 0x42: strided_row<4, 2>(X, out, dh); break;
        case 0x43: strided_row<4, 3>(X, out, dh); break;
        case 0x44: strided_row<4, 4>(X, out, dh); break;
        }
    }

    // The fused W pass (fused_window) of output rows [oh0, oh1): from the
    // stacked padded rows, or (stack null) straight from the src rows when a
    // window is one row whose taps never leave it (no W padding, and loads
    // that end at the row's last element: KW = S, or stride 1; a decimating
    // KW < S would load S - KW values past it).
    bool finish_rows(int64_t n, int64_t ch, int64_t od, int64_t oh0, int64_t oh1, const Acc *stack) {
        const bool direct = !stack && AD.k == 1 && AH.k == 1 && (AW.k == AW.s || AW.s == 1) && dense_rows() &&
                            valid_lo() == 0 && valid_hi() == g.wp && !fused_reads_past_rows();
        if (!fused || (!stack && !direct)) return false;
        T *out = (T *)c->dst + n * c->ds[0] + ch * c->ds[1] + od * c->ds[2];
        const T *src = (const T *)c->src + n * c->ss[0] + ch * c->ss[1] + (od * AD.s - AD.pb) * c->ss[2];
        for (int64_t oh = oh0; oh < oh1; ++oh) {
            const int64_t vcnt = (AD.kend[od] - AD.kbeg[od]) * (AH.kend[oh] - AH.kbeg[oh]);
            const Div dh = (Div)(AD.div[od] * AH.div[oh]);
            if (!vcnt) emit(nullptr, nullptr, n, ch, od, oh, 0);
            else if (stack)
                finish_row<true>(stack + (oh - oh0) * g.xlen * L, out + oh * c->ds[3], dh, oh >= clean_lo && oh < clean_hi);
            else finish_row<false>(src + (oh * AH.s - AH.pb) * c->ss[3], out + oh * c->ds[3], dh);
        }
        return true;
    }

    // Values, one lane: the taps stacked, then one W pass over the stack.
    void chunk_stacked(int64_t n, int64_t ch, int64_t od, int64_t oh0, int64_t oh1) {
        const int64_t planes = AD.kend[od] - AD.kbeg[od];
        int64_t yw;
        if (finish_rows(n, ch, od, oh0, oh1, nullptr)) return;
        stack_taps(n, ch, od, oh0, oh1, fB);
        if (finish_rows(n, ch, od, oh0, oh1, fB)) return;
        horizontal(fB, fBi, oh1 - oh0, fA, fAi, fC, fCi, &yw);
        for (int64_t oh = oh0; oh < oh1; ++oh) {
            const int64_t vcnt = planes * (AH.kend[oh] - AH.kbeg[oh]), r = oh - oh0;
            emit(vcnt ? fC + r * yw : nullptr, nullptr, n, ch, od, oh, vcnt);
        }
    }

    // Values with C lanes: the taps stacked, then W row by row.
    void chunk_strips(int64_t n, int64_t od, int64_t oh0, int64_t oh1) {
        const int64_t planes = AD.kend[od] - AD.kbeg[od], xl = g.xlen * L;
        int64_t yw;
        stack_taps(n, 0, od, oh0, oh1, hb);
        if (finish_rows(n, 0, od, oh0, oh1, hb)) return;
        for (int64_t oh = oh0; oh < oh1; ++oh) {
            const int64_t vcnt = planes * (AH.kend[oh] - AH.kbeg[oh]);
            if (vcnt) horizontal(hb + (oh - oh0) * xl, nullptr, 1, ph, phi, vr, vri, &yw);
            emit(vcnt ? vr : nullptr, vri, n, 0, od, oh, vcnt);
        }
    }

    // Flat path (one lane, no depth taps): the chunk's rows stacked.
    void chunk_flat(int64_t n, int64_t ch, int64_t od, int64_t oh0, int64_t oh1) {
        const int64_t id = od * AD.s - AD.pb + AD.kbeg[od] * AD.d;
        const T *src_p = (const T *)c->src + n * c->ss[0] + ch * c->ss[1] + id * c->ss[2];
        const int64_t ibase = n * c->is[0] + ch * c->is[1] + id * c->is[2];
        const int64_t nr = oh1 - oh0, xl = g.xlen;
        int64_t yw;
        // Long rows, or strided windows (whose vertical pass goes row by row
        // either way, so widening every row first only adds a copy), or
        // windows of one row: the taps straight from src.
        const bool strided = AH.s > 1 || AH.k == 1;
        if (!I && !g.v_dbl && ((valid_hi() - valid_lo()) * L >= kLongRow || strided)) {
            chunk_stacked(n, ch, od, oh0, oh1);
            return;
        }
        // Short rows that windows share, or a sliding vertical pass: widen
        // every input row once.
        const int64_t prows = (nr - 1) * AH.s + (AH.k - 1) * AH.d + 1, jr0 = oh0 * AH.s;
        for (int64_t q = 0; q < prows; ++q) {
            const int64_t ih = jr0 + q - AH.pb;
            Acc *row = fP + q * xl;
            int64_t *rowi = fPi + (I ? q * xl : 0);
            if (ih >= 0 && ih < AH.in) widen(src_p + ih * c->ss[3], ibase + ih * c->is[3], row, rowi);
            else fill_rows<Acc, I>(row, rowi, identity<T, K>(), xl);
        }
        if (!I) {
            vertical(fP, fPi, prows, xl, nr, fB, fBi, jr0);
            if (finish_rows(n, ch, od, oh0, oh1, fB)) return;
            horizontal(fB, fBi, nr, fA, fAi, fC, fCi, &yw);
        } else {   // indices: W first (row-major first maximum)
            horizontal(fP, fPi, prows, fA, fAi, fB, fBi, &yw);
            vertical(fB, fBi, prows, yw, nr, fC, fCi, jr0);
        }
        for (int64_t oh = oh0; oh < oh1; ++oh) {
            const int64_t vcnt = AH.kend[oh] - AH.kbeg[oh], r = oh - oh0;
            emit(vcnt ? fC + r * yw : nullptr, fCi + (I ? r * yw : 0), n, ch, od, oh, vcnt);
        }
    }

    // Positions [x, x + NV * VL) of chunk_plane's W pass: the KW taps (0:
    // AW.k at run time) of the pooled rows Vp, in order, a lane whose tap
    // lies past its row's ends taking the identity (as the padded rows'
    // pads do), then finished into out.
    template <int KW, int NV>
    __attribute__((always_inline)) void plane_block(const Acc *Vp, T *__restrict out, int64_t x) {
        typedef typename Vec<T>::V V;
        typedef typename Vec<T>::VU VU;
        typedef typename IdxVec<Acc>::M M;
        typedef Lane MU __attribute__((vector_size(kVecBytes), aligned(alignof(Lane))));
        constexpr int64_t VL = Vec<T>::lanes;
        const int64_t k = KW ? KW : AW.k, W = AW.in;
        const V idv = (V){} + identity<T, K>();
        M col[NV];
        V acc[NV];
        auto tap = [&](int64_t kw, int j) __attribute__((always_inline)) {
            const int64_t o = kw - AW.pb;
            const V v = *(const VU *)(Vp + x + o * L + j * VL);
            if (o < 0) return col[j] >= (Lane)-o ? v : idv;
            if (o > 0) return col[j] < (Lane)(W - o) ? v : idv;
            return v;
        };
        for (int j = 0; j < NV; ++j) {
            col[j] = *(const MU *)(pcol + x + j * VL);
            acc[j] = tap(0, j);
        }
        for (int64_t kw = 1; kw < k; ++kw)
            for (int j = 0; j < NV; ++j) acc[j] = vcombine<K>(acc[j], tap(kw, j));
        for (int j = 0; j < NV; ++j) {
            const int64_t at = x + j * VL;
            if constexpr (K == kMax) {
                store_as<T, true>(out + at, acc[j]);
            } else if constexpr (K == kAvg) {
                store_as<T>(out + at, acc[j] / *(const VU *)(pdiv + at));
            } else {
                typedef Div FU __attribute__((vector_size(kVecBytes), aligned(alignof(Div))));
                const QParams q(c);
                store_qavg_lanes<T>(out + at, acc[j], *(const VU *)(pcnt + at), q.scale / *(const FU *)(pdiv + at), q);
            }
        }
    }
    template <int KW>
    void plane_w_pass(const Acc *Vp, T *__restrict out, int64_t ny) {
        constexpr int64_t VL = Vec<T>::lanes;
        constexpr int NV = 2;
        int64_t x = 0;
        for (; x + NV * VL <= ny; x += NV * VL) plane_block<KW, NV>(Vp, out, x);
        for (; x + VL <= ny; x += VL) plane_block<KW, 1>(Vp, out, x);
        if (x < ny && ny >= VL) {   // the same bits again where it overlaps
            plane_block<KW, 1>(Vp, out, ny - VL);
            return;
        }
        const Acc id0 = identity<T, K>();
        for (; x < ny; ++x) {   // a chunk under one vector
            Acc acc = id0;
            for (int64_t kw = 0; kw < AW.k; ++kw) {
                const int64_t o = kw - AW.pb, iw = pcol[x] + o;
                const Acc v = iw >= 0 && iw < AW.in ? Vp[x + o * L] : id0;
                acc = kw == 0 ? v : combine<Acc, K>(acc, v);
            }
            if constexpr (K == kMax) out[x] = Traits<T>::store(acc);
            else out[x] = AvgOut<T, K>::make(acc, pdiv[x], K == kQAvg ? pcnt[x] : 0, QParams(c));
        }
    }

    // Values, plane_window: output rows [oh0, oh1) as one flat run of
    // values (positions of one lane, or the (w, c) values of C lanes).  The
    // H taps pool runs of rows with the same taps at once (row offsets W * L
    // apart), then the W taps are flat offsets L apart masked at the rows'
    // ends, with a divisor per value: the padded rows' sums and maxima, taps
    // in order, with no loop per row.
    void chunk_plane(int64_t n, int64_t ch, int64_t od, int64_t oh0, int64_t oh1) {
        constexpr int64_t VL = Vec<T>::lanes;
        const int64_t W = AW.in * L, ny = (oh1 - oh0) * W;   // W: a row's values
        const T *X = (const T *)c->src + n * c->ss[0] + ch * c->ss[1];
        T *out = (T *)c->dst + n * c->ds[0] + ch * c->ds[1] + od * c->ds[2] + oh0 * W;
        Acc *Vp = fB + AW.pb * L;   // AW.pb positions of slack before it: taps the column mask drops read them
        for (int64_t oh = oh0; oh < oh1;) {
            const int64_t kb = AH.kbeg[oh], ke = AH.kend[oh];
            int64_t oe = oh + 1;
            while (oe < oh1 && AH.kbeg[oe] == kb && AH.kend[oe] == ke) ++oe;
            for (int64_t t = 0; t < ke - kb; ++t) toff[t] = t * W;
            const T *x0 = X + (oh - AH.pb + kb) * W;
            const int64_t nv = (oe - oh) * W;
            if (nv < VL && ke > kb && x0 + toff[ke - kb - 1] + VL <= src_end) {
                // A run under a vector (a border row of a narrow plane): one
                // vector a tap, reading on into the next rows (inside src),
                // through a buffer.  Lane by lane, MaxPool NCX 4 x 32 x 14 x
                // 14 k(5,1) s1 p(2,0) took 2.5x oneDNN's time.
                Acc buf[VL];
                taps_reduce<T, K, false, T>(buf, nullptr, x0, nullptr, toff, ke - kb, VL);
                for (int64_t i = 0; i < nv; ++i) Vp[(oh - oh0) * W + i] = buf[i];
            } else {
                taps_reduce<T, K, false, T>(Vp + (oh - oh0) * W, nullptr, x0, nullptr, toff, ke - kb, nv);
            }
            oh = oe;
        }
        if (K != kMax && (oh0 != pdiv_lo || oh1 != pdiv_hi)) {   // emit's divisors and counts
            // A row slot keeps its values from the chunk before when its
            // first one says they are this row's (a row's divisors are dh
            // times its columns'): only the border rows change from one
            // chunk to the next.  (Filling every row of every chunk took
            // AvgPool NXC 8 x 8 x 56 x 56 k5 s1 p2, two chunks a plane, 1.6x
            // the time of the plane in one chunk.)
            for (int64_t oh = oh0; oh < oh1; ++oh) {
                const Div dh = (Div)(AD.div[od] * AH.div[oh]);
                const int32_t vc = (int32_t)(AH.kend[oh] - AH.kbeg[oh]);
                const int64_t x0 = (oh - oh0) * W;
                if (oh - oh0 < pdiv_rows && pdiv[x0] == dh * wdiv[0] && (K != kQAvg || pcnt[x0] == vc * wcnt[0]))
                    continue;
                for (int64_t w = 0, x = x0; w < AW.in; ++w)
                    for (int64_t l = 0; l < L; ++l, ++x) {
                        pdiv[x] = dh * wdiv[w];
                        if constexpr (K == kQAvg) pcnt[x] = vc * wcnt[w];
                    }
            }
            if (oh1 - oh0 > pdiv_rows) pdiv_rows = oh1 - oh0;
            pdiv_lo = oh0, pdiv_hi = oh1;
        }
        if (AW.k == 3) plane_w_pass<3>(Vp, out, ny);
        else plane_w_pass<0>(Vp, out, ny);
    }

    // Row operations of chunk_vstream over the n valid columns; rows are of
    // T (widened on load) or of accumulators, combined in scan order.
    // d = a (+) b, or d = a (b null).
    template <typename SA, typename SB>
    static void combine_span(Acc *d, const SA *a, const SB *b, int64_t n) {
        constexpr int64_t VL = Vec<T>::lanes;
        int64_t x = 0;
        for (; x + VL <= n; x += VL) {
            const typename Vec<T>::V va = load_any<T>(a + x);
            store_vec<T>(d + x, b ? vcombine<K>(va, load_any<T>(b + x)) : va);
        }
        for (; x < n; ++x) d[x] = b ? combine<Acc, K>(load_one<T>(a[x]), load_one<T>(b[x])) : load_one<T>(a[x]);
    }
    // The prefix P = P (+) x (P = x when `first`), then the window V = S (+) P.
    // Probe (float maxima): returns whether V holds no NaN, from the sum of
    // its values (a NaN, or infinities of both signs, say no).
    template <bool Probe, typename SX>
    static bool prefix_window(Acc *V, const Acc *S, Acc *P, const SX *x, bool first, int64_t n) {
        typedef typename Vec<T>::V Vv;
        constexpr int64_t VL = Vec<T>::lanes;
        Vv sum{};
        int64_t i = 0;
        for (; i + VL <= n; i += VL) {
            Vv p = load_any<T>(x + i);
            if (!first) p = vcombine<K>(load_any<T>(P + i), p);
            store_vec<T>(P + i, p);
            const Vv w = vcombine<K>(load_any<T>(S + i), p);
            store_vec<T>(V + i, w);
            if constexpr (Probe) sum += w;
        }
        Acc tail = 0;
        for (; i < n; ++i) {
            P[i] = first ? load_one<T>(x[i]) : combine<Acc, K>(P[i], load_one<T>(x[i]));
            V[i] = combine<Acc, K>(S[i], P[i]);
            if constexpr (Probe) tail += V[i];
        }
        return Probe && !holds_nan(sum) && tail == tail;
    }
    // f(valid columns of padded input row j): a src row, its widened copy
    // (strided rows), or a row of identities outside the input.
    template <typename F>
    void with_input_row(int64_t j, F &&f) {
        const int64_t ih = j - AH.pb;
        if (ih < 0 || ih >= AH.in) return f((const Acc *)vs_id);
        const T *x = vs_src + ih * c->ss[3];
        if (dense_rows()) return f(x);
        load_row<false>(x, 0, vs_wide, nullptr, valid_lo(), valid_hi());
        f((const Acc *)vs_wide);
    }
    const T *vs_src;   // chunk_vstream: the plane's first valid column of input row 0
    Acc *vs_id;        // a row of identities
    Acc *vs_wide;      // a strided row widened

    // Values, one lane, the H window slid by window blocks (the sums and
    // order of window_blocks, aligned to padded row 0) streaming down the
    // plane: only a block's suffix rows and the next block's running prefix
    // are kept (in L1 for rows of a few hundred positions), and each output
    // row goes through the W pass and out while it is in cache.  Every src
    // row is read twice; a chunk that starts inside a block (a thread's
    // first rows) catches the prefix up first.
    // The suffix and prefix rows start on a line, and so does the window
    // row's first valid value (its padding before it), so their stores never
    // split a line; the prefix pass, the first to read a src row, prefetches
    // the row kVsAhead rows on.  Measured together, 1 x 32 x 256 x 256 f32
    // k9 and k15 s1, 1 thread, in one process against the unaligned rows and
    // no prefetch: medians 0.89-0.94 (averages and maxima), 0.92-0.93 at 2
    // threads; the prefetch alone 0.90-0.99, the alignment alone 0.94-0.99.
    static constexpr int64_t kVsAhead = 2;
    void chunk_vstream(int64_t n, int64_t ch, int64_t od, int64_t oh0, int64_t oh1) {
        // Rows of xl positions of L values, j0 * L of them before the valid ones.
        const int64_t k = AH.k, xl = g.xlen * L, j0 = valid_lo() * L, j1 = valid_hi() * L, len = j1 - j0;
        constexpr int64_t line = kLineBytes / (int64_t)sizeof(Acc);
        const int64_t xs = (len + line - 1) / line * line;   // S and P rows: whole lines (sep_layout's budget)
        const int64_t id = od * AD.s - AD.pb + AD.kbeg[od] * AD.d;
        vs_src = (const T *)c->src + n * c->ss[0] + ch * c->ss[1] + id * c->ss[2] + (valid_lo() - AW.pb) * c->ss[4];
        Acc *S = fP, *P = fP + k * xs, *V = fB + (line - j0 % line) % line;   // S: the block's suffixes, row j at (j - bs) * xs
        const Acc id0 = identity<T, K>();
        vs_id = fP + (k + 1) * xs;
        fill_pad<T>(vs_id, id0, len);
        const int64_t row_bytes = len * (int64_t)sizeof(T), no_off = 0;
        const bool dense = dense_rows();
        auto prefetch_row = [&](int64_t j) {   // padded input row j, if it is a dense src row
            const int64_t ih = j - AH.pb;
            if (dense && ih >= 0 && ih < AH.in) prefetch_window<T>(vs_src + ih * c->ss[3], &no_off, 1, 1, 0, row_bytes);
        };
        vs_wide = fC;   // free until the W pass, which runs after the row is used
        int64_t yw;
        for (int64_t o = oh0; o < oh1;) {
            const int64_t bs = o - o % k, be = bs + k - 1, oe = bs + k < oh1 ? bs + k : oh1;
            // Suffixes S[j] = row j (+) ... (+) row be, for j from be down to o.
            for (int64_t j = be; j >= o; --j) {
                const Acc *after = j < be ? S + (j + 1 - bs) * xs : nullptr;
                with_input_row(j, [&](auto x) { combine_span(S + (j - bs) * xs, x, after, len); });
            }
            // Outputs [o, oe): the suffix from o (+) the next block's prefix to o + k - 1.
            int64_t pj = be + 1;   // the prefix's next row
            for (; o < oe; ++o) {
                fill_pad<T>(V, id0, j0);   // spills are overwritten below; the W pass may have destroyed V
                fill_pad<T>(V + j1, id0, xl - j1);
                bool clean = false;   // V probed free of NaN: the W pass compares without NaN tests
                if (o == bs) {   // a window that is its block
                    combine_span(V + j0, S, (const Acc *)nullptr, len);
                } else {
                    for (; pj < o + k - 1; ++pj)   // catching up where a chunk starts inside a block
                        with_input_row(pj, [&](auto x) {
                            if (pj == be + 1) combine_span(P, x, (const Acc *)nullptr, len);
                            else combine_span(P, P, x, len);
                        });
                    const Acc *suffix = S + (o - bs) * xs;
                    prefetch_row(pj + kVsAhead);
                    with_input_row(pj, [&](auto x) { clean = prefix_window<kProbed>(V + j0, suffix, P, x, pj == be + 1, len); });
                    ++pj;
                }
                const int64_t vcnt = AH.kend[o] - AH.kbeg[o];
                if (vcnt && fused == kSlideRow) {
                    finish_row<true>(V, (T *)c->dst + n * c->ds[0] + ch * c->ds[1] + od * c->ds[2] + o * c->ds[3],
                               (Div)(AD.div[od] * AH.div[o]), clean);
                    continue;
                }
                if (vcnt) horizontal(V, nullptr, 1, fA, nullptr, fC, nullptr, &yw);
                emit(vcnt ? fC : nullptr, nullptr, n, ch, od, o, vcnt);
            }
        }
    }

    // Indices, or a sliding vertical pass: the W pass of every input row the
    // chunk needs (row-major first maximum), then D/H.
    void chunk_rows(int64_t n, int64_t ch, int64_t od, int64_t oh0, int64_t oh1) {
        const T *src_nc = (const T *)c->src + n * c->ss[0] + ch * c->ss[1];
        const int64_t ibase = n * c->is[0] + ch * c->is[1];
        const int64_t kd0 = AD.kbeg[od], planes = AD.kend[od] - kd0;
        const int64_t id0 = od * AD.s - AD.pb + kd0 * AD.d;
        int64_t yw;
        // W pass of every needed input row into hb, then D/H.
        int64_t ih_lo, ih_hi;
        if (g.v_dbl) {   // padded rows oh0 .. oh1 + k - 2, identity outside the input
            ih_lo = oh0 - AH.pb;
            ih_hi = oh1 + AH.k - 1 - AH.pb;
        } else {
            ih_lo = oh0 * AH.s - AH.pb;
            ih_hi = (oh1 - 1) * AH.s - AH.pb + (AH.k - 1) * AH.d + 1;
            ih_lo = ih_lo < 0 ? 0 : (ih_lo > AH.in ? AH.in : ih_lo);
            ih_hi = ih_hi < ih_lo ? ih_lo : (ih_hi > AH.in ? AH.in : ih_hi);
        }
        for (int64_t t = 0; t < planes; ++t) {
            const int64_t id = id0 + t * AD.d;
            for (int64_t ih = ih_lo; ih < ih_hi; ++ih) {
                const int64_t q = (t * g.rows + ih - ih_lo) * OWL;
                if (ih >= 0 && ih < AH.in) {
                    widen(src_nc + id * c->ss[2] + ih * c->ss[3], ibase + id * c->is[2] + ih * c->is[3], xp, xpi);
                    horizontal(xp, xpi, 1, ph, phi, hb + q, hbi + (I ? q : 0), &yw);
                } else {
                    fill_rows<Acc, I>(hb + q, hbi + (I ? q : 0), identity<T, K>(), OWL);
                }
            }
        }
        if (g.v_dbl) {
            window_reduce<Acc, K, I>(hb, hbi, ih_hi - ih_lo, OWL, AH.k, vr, vri, oh1 - oh0, oh0);
            for (int64_t oh = oh0; oh < oh1; ++oh) {
                const int64_t vcnt = planes * (AH.kend[oh] - AH.kbeg[oh]);
                emit(vcnt ? vr + (oh - oh0) * OWL : nullptr, vri + (I ? (oh - oh0) * OWL : 0), n, ch, od, oh, vcnt);
            }
            return;
        }
        for (int64_t oh = oh0; oh < oh1; ++oh) {
            const int64_t kh0 = AH.kbeg[oh], kh1 = AH.kend[oh], vcnt = planes * (kh1 - kh0);
            if (vcnt == 0) {
                emit(nullptr, nullptr, n, ch, od, oh, 0);
                continue;
            }
            const int64_t q0 = oh * AH.s - AH.pb + kh0 * AH.d - ih_lo;
            int64_t nt = 0;
            for (int64_t t = 0; t < planes; ++t)
                for (int64_t kh = kh0; kh < kh1; ++kh) toff[nt++] = (t * g.rows + (kh - kh0) * AH.d) * OWL;
            taps_reduce<T, K, I, Acc>(vr, vri, hb + q0 * OWL, hbi + (I ? q0 * OWL : 0), toff, nt, OWL);
            emit(vr, vri, n, ch, od, oh, vcnt);
        }
    }

    void chunk(int64_t n, int64_t ch, int64_t od, int64_t oh0, int64_t oh1) {
        clean_lo = clean_hi = 0;
        if (AD.kend[od] == AD.kbeg[od]) {
            for (int64_t oh = oh0; oh < oh1; ++oh) emit(nullptr, nullptr, n, ch, od, oh, 0);
        } else if (pair_code) {
            switch (pair_code) {
            case 0x02: pair_rows<2, 0>(n, ch, od, oh0, oh1); break;
            case 0x12: pair_rows<2, 1>(n, ch, od, oh0, oh1); break;
            case 0x03: pair_rows<3, 0>(n, ch, od, oh0, oh1); break;
            case 0x13: pair_rows<3, 1>(n, ch, od, oh0, oh1); break;
            default: pair_rows<3, 2>(n, ch, od, oh0, oh1); break;
            }
        } else if (direct_code) {
            switch (direct_code) {
            case 0x12: direct_rows<1, 2>(n, ch, od, oh0, oh1); break;
            case 0x13: direct_rows<1, 3>(n, ch, od, oh0, oh1); break;
            case 0x21: direct_rows<2, 1>(n, ch, od, oh0, oh1); break;
            case 0x22: direct_rows<2, 2>(n, ch, od, oh0, oh1); break;
            case 0x23: direct_rows<2, 3>(n, ch, od, oh0, oh1); break;
            case 0x31: direct_rows<3, 1>(n, ch, od, oh0, oh1); break;
            case 0x32: direct_rows<3, 2>(n, ch, od, oh0, oh1); break;
            case 0x33: direct_rows<3, 3>(n, ch, od, oh0, oh1); break;
            case 0x41: direct_rows<4, 1>(n, ch, od, oh0, oh1); break;
            case 0x42: direct_rows<4, 2>(n, ch, od, oh0, oh1); break;
            case 0x43: direct_rows<4, 3>(n, ch, od, oh0, oh1); break;
            default: direct_rows<4, 4>(n, ch, od, oh0, oh1); break;
            }
        } else if (plane) {
            chunk_plane(n, ch, od, oh0, oh1);
        } else if (!I && g.vstream) {
            chunk_vstream(n, ch, od, oh0, oh1);
        } else if (g.flat) {
            chunk_flat(n, ch, od, oh0, oh1);
        } else if (!Lanes && !I && !g.v_dbl) {
            chunk_stacked(n, ch, od, oh0, oh1);
        } else if (g.strips) {
            chunk_strips(n, od, oh0, oh1);
        } else {
            chunk_rows(n, ch, od, oh0, oh1);
        }
    }
};

template <typename T, int K, bool WithIdx, bool Lanes>
static void sep_rows(const ExecCtx *c, int64_t r0, int64_t r1, void *scratch) {
    SepPass<T, K, WithIdx, Lanes> sp(c, (char *)scratch);
    const int64_t OH = c->ax[1].out, OD = c->ax[0].out;
    for (int64_t r = r0; r < r1;) {
        const int64_t oh0 = r % OH, od = (r / OH) % OD, nc = r / (OH * OD);
        int64_t oh1 = oh0 - oh0 % c->sep.align + c->sep.chunk;   // chunks after the first start on a block
        if (oh1 > OH) oh1 = OH;
        if (oh1 - oh0 > r1 - r) oh1 = oh0 + (r1 - r);
        const int64_t n = Lanes ? nc : nc / c->C, ch = Lanes ? 0 : nc % c->C;
        sp.chunk(n, ch, od, oh0, oh1);
        r += oh1 - oh0;
    }
}
