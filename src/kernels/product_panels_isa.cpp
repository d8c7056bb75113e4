// The product of a few rows of op(A) with a weight in panels (attn/tensor.h's in_panels: a
// generated token's projections), for one instruction set, compiled as product_isa.cpp is
// (ATTN_PRODUCT_ISA). A panel is K lines of 64 bytes, one line per index k: the kernel
// reads it as one stream, fetching the line kLinesAhead ahead, widens each line in
// registers and adds it into every row's sums. The sums are the tiles' (blocks of kKc, acc
// = 0, then acc + a(i,k) b(k,j) for k in order, the blocks added in order), so the bits of
// the same product with the weight as stored. (bench/panel_layout.cpp measured this read
// at 1.17 times a plain read of the same bytes, where eight stored rows 4 KiB apart were
// read at 1.6 to 1.8 times.)
#include "kernels/product_isa_inline.h"

namespace attn::ATTN_PRODUCT_NAMESPACE {

#if ATTN_PRODUCT_ISA >= 1
namespace {

// Lines fetched ahead of the one read: the hardware's prefetcher stops at each 4 KiB page,
// 64 lines, while the panel goes on.
constexpr std::size_t kLinesAhead = 64;
// A line's bytes read into one register at a time (a 512-bit one, or a 256-bit one), and
// the float64 vectors they widen to.
constexpr std::size_t kSliceBytes = kLanes * 8;
constexpr std::size_t kSlices = 64 / kSliceBytes;
template <OperandType kType>
constexpr std::size_t slice_vectors() {
  return kSliceBytes / stored_bytes<kType>() / kLanes;
}
template <OperandType kType>
constexpr std::size_t line_vectors() {
  return kSlices * slice_vectors<kType>();
}
// The rows of a taken in one pass: as many as their sums leave registers for (24 of
// AVX-512's 32, 8 of AVX2's 16), at most 8.
template <OperandType kType>
constexpr std::size_t pass_rows() {
  constexpr std::size_t sums = ATTN_PRODUCT_ISA == 2 ? 24 : 8, rows = sums / line_vectors<kType>();
  return rows < 1 ? 1 : rows > 8 ? 8 : rows;
}

// The panels a token's single row reads side by side: two streams from memory at once
// (a Llama-1B-shaped token in BF16: 104 ms reading one panel at a time, 94 reading two, 94
// reading four), where the sums leave registers for them.
template <OperandType kType>
constexpr std::size_t token_panels() {
  return 2 * line_vectors<kType>() <= (ATTN_PRODUCT_ISA == 2 ? 24 : 8) ? 2 : 1;
}

// Slice s of a line at p, widened: out[v] holds kLanes columns from slice_column(s, v) on.
// BF16 reads 32-bit pairs: shifted up a half, the even numbers as float32 (the panel's
// first 16 columns, panel_position); masked, the odd ones (the last 16). No shuffle.
template <OperandType kType>
inline void widen_slice(const unsigned char* p, Vec* out) {
  if constexpr (kType == OperandType::F64) {
    out[0] = load(reinterpret_cast<const double*>(p));
  } else if constexpr (kType == OperandType::F32) {
    out[0] = load_f32(p);
    out[1] = load_f32(p + kSliceBytes / 2);
  } else if constexpr (kType == OperandType::F16) {
    for (std::size_t v = 0; v < 4; ++v) out[v] = load_f16(p + v * kSliceBytes / 4);
  } else {
#if ATTN_PRODUCT_ISA == 2
    const __m512i pairs = _mm512_loadu_si512(p);
    const __m512 even = _mm512_castsi512_ps(_mm512_slli_epi32(pairs, 16));
    const __m512 odd = _mm512_castsi512_ps(_mm512_and_si512(pairs, _mm512_set1_epi32(static_cast<int>(0xffff0000U))));
    out[0] = _mm512_cvtps_pd(_mm512_castps512_ps256(even));
    out[1] = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(even), 1)));
    out[2] = _mm512_cvtps_pd(_mm512_castps512_ps256(odd));
    out[3] = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(odd), 1)));
#else
    const __m256i pairs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256 even = _mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16));
    const __m256 odd = _mm256_castsi256_ps(_mm256_and_si256(pairs, _mm256_set1_epi32(static_cast<int>(0xffff0000U))));
    out[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(even));
    out[1] = _mm256_cvtps_pd(_mm256_extractf128_ps(even, 1));
    out[2] = _mm256_cvtps_pd(_mm256_castps256_ps128(odd));
    out[3] = _mm256_cvtps_pd(_mm256_extractf128_ps(odd, 1));
#endif
  }
}

// The panel's first column in vector v of slice s (widen_slice's order).
template <OperandType kType>
constexpr std::size_t slice_column(std::size_t s, std::size_t v) {
  if constexpr (kType == OperandType::BF16)  // pairs: v / 2 even or odd, v % 2 the half
    return v / 2 * 16 + s * (kSliceBytes / 4) + v % 2 * kLanes;
  return (s * slice_vectors<kType>() + v) * kLanes;
}

// Rows i..i + kRows of c (ldc apart), columns j.. of kPanels panels side by side from the
// one at `panel` (K lines each, one after another), `width` columns in all (the last
// panel's may be fewer); a's rows float64, a.stride apart.
template <OperandType kType, std::size_t kRows, std::size_t kPanels = 1>
void multiply_panel(const MatrixOperand& a, std::size_t i, const unsigned char* panel, double* c, std::size_t ldc,
                    std::size_t j, std::size_t width, std::size_t K, bool fetch) {
  constexpr std::size_t kVectors = line_vectors<kType>(), kPerSlice = slice_vectors<kType>();
  constexpr std::size_t kColumns = 64 / stored_bytes<kType>();
  for (std::size_t k0 = 0; k0 < K; k0 += kKc) {
    const std::size_t k_end = smaller(K, k0 + kKc);
    Vec acc[kRows][kPanels * kVectors];
    for (std::size_t r = 0; r < kRows; ++r)
      for (std::size_t v = 0; v < kPanels * kVectors; ++v) acc[r][v] = zero();
    const double* x = a.data + i * a.stride;
    for (std::size_t k = k0; k < k_end; ++k) {
      Vec w[kPanels * kVectors];
      for (std::size_t p = 0; p < kPanels; ++p) {
        const unsigned char* line = panel + 64 * (p * K + k);
        if (fetch) _mm_prefetch(reinterpret_cast<const char*>(line + 64 * kLinesAhead), _MM_HINT_T0);
        for (std::size_t s = 0; s < kSlices; ++s)
          widen_slice<kType>(line + s * kSliceBytes, w + p * kVectors + s * kPerSlice);
      }
      for (std::size_t r = 0; r < kRows; ++r) {
        const Vec xr = broadcast(x[r * a.stride + k]);
        for (std::size_t v = 0; v < kPanels * kVectors; ++v) acc[r][v] = multiply_add(xr, w[v], acc[r][v]);
      }
    }
    for (std::size_t r = 0; r < kRows; ++r)
      for (std::size_t v = 0; v < kPanels * kVectors; ++v) {
        const std::size_t q = v % kVectors;
        const std::size_t column = v / kVectors * kColumns + slice_column<kType>(q / kPerSlice, q % kPerSlice);
        double* to = c + (i + r) * ldc + j + column;
        if (column + kLanes <= width) {
          store(to, k0 > 0 ? add(load(to), acc[r][v]) : acc[r][v]);
          continue;
        }
        alignas(64) double lanes[kLanes];
        store(lanes, acc[r][v]);
        for (std::size_t l = 0; column + l < width; ++l) to[l] = k0 > 0 ? to[l] + lanes[l] : lanes[l];
      }
  }
}

// `rows` rows of a from i (at most pass_rows) against the panel of columns j..j + width.
template <OperandType kType, std::size_t kRows = pass_rows<kType>()>
void multiply_panel_rows(const MatrixOperand& a, std::size_t i, std::size_t rows, const unsigned char* panel, double* c,
                         std::size_t ldc, std::size_t j, std::size_t width, std::size_t K, bool fetch) {
  if constexpr (kRows > 1)
    if (rows < kRows) return multiply_panel_rows<kType, kRows - 1>(a, i, rows, panel, c, ldc, j, width, K, fetch);
  multiply_panel<kType, kRows>(a, i, panel, c, ldc, j, width, K, fetch);
}

// Every row of a against each panel in turn: the first pass reads the panel from memory,
// fetching ahead; the others find it in the second-level cache.
template <OperandType kType>
void multiply_panels(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                     std::size_t K, std::size_t P) {
  constexpr std::size_t kPass = pass_rows<kType>();
  std::size_t j0 = 0;
  constexpr std::size_t kStreams = token_panels<kType>();
  if (M == 1)  // a token's row: kStreams panels read side by side
    for (; j0 + kStreams * b.panel <= P; j0 += kStreams * b.panel)
      multiply_panel<kType, 1, kStreams>(a, 0, b.stored + stored_bytes<kType>() * j0 * b.stride, c, ldc, j0,
                                         kStreams * b.panel, K, true);
  for (std::size_t j = j0; j < P; j += b.panel) {
    const unsigned char* panel = b.stored + stored_bytes<kType>() * j * b.stride;
    for (std::size_t i = 0; i < M; i += kPass)
      multiply_panel_rows<kType>(a, i, smaller(kPass, M - i), panel, c, ldc, j, smaller(b.panel, P - j), K, i == 0);
  }
}

}  // namespace
#endif

bool multiply_panel_rows(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                         std::size_t K, std::size_t P) {
#if ATTN_PRODUCT_ISA >= 1
  if (!b.panel || b.transposed || b.type == OperandType::Double || a.type != OperandType::Double || a.transposed)
    return false;
  return by_type(b.type, [&](auto t) {
    constexpr OperandType kType = decltype(t)::kType;
    if constexpr (kType != OperandType::Double) multiply_panels<kType>(a, b, c, ldc, M, K, P);
    return true;
  });
#else
  (void)a, (void)b, (void)c, (void)ldc, (void)M, (void)K, (void)P;
  return false;  // the baseline packs a panel's numbers as any other operand's (element)
#endif
}

}  // namespace attn::ATTN_PRODUCT_NAMESPACE
