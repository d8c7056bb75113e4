// Large matrix products made fast: attn's blocked product (matrix_kernel.h), split
// between threads. What they compute is steps/projection.h's matmul, whose reference loop
// takes every product below kExactMaxElements multiply-adds; these take the larger ones.
// They use FMA where the CPU has it and sum in blocks, so the last bits differ from the
// reference's. Internal to src/.
#ifndef ATTN_KERNELS_MATMUL_H_
#define ATTN_KERNELS_MATMUL_H_

#include <cstddef>

#include "attn/tensor.h"
#include "kernels/matrix_kernel.h"

namespace attn {

// a is (M,K), b is (K,P), row-major -> c = a @ b (M,P). From a million multiply-adds and
// 16 columns, split into product_pieces() blocks of b's columns, shared between OpenMP's
// threads, each an ordinary one-thread product: Eigen's parallel product, used before,
// synchronized its threads inside every block of the product and spent more time waiting
// than multiplying (a third of a base-size run, measured with perf), and cut its work by
// the number of threads, which would change the sums. Columns rather than rows: each
// thread packs only its block of b, the larger operand in a projection (measured 5-20%
// faster than blocks of rows).
void matmul_fast(const double* a, const double* b, double* c, std::size_t M, std::size_t K, std::size_t P);

// The same with b a weight left where a checkpoint stores it (attn/tensor.h's StoredMatrix,
// (K,P) as the product reads it): its numbers widened to float64 as they are packed, never
// the whole matrix, so c has the bits matmul_fast gives on the widened matrix (the same
// blocks, the same order of sums).
void matmul_stored_fast(const double* a, const StoredMatrix& b, double* c, std::size_t M, std::size_t K, std::size_t P);

// Columns [first, ...) of the stored b (first: a panel's first column when b is in panels)
// as an operand of the product kernels (matrix_kernel.h): what matmul_stored_fast gives
// each of its pieces, and the kernels' tests theirs.
MatrixOperand stored_operand(const StoredMatrix& b, std::size_t first);

// How many column blocks matmul_fast cuts a product into: 1 below the sizes above, else
// one per kProductPieceColumns columns, at least 2 and at most kMaxProductPieces. Set by
// the sizes alone, never by the number of threads, so that one thread or sixteen give the
// same bits. Every block packs all of a again, a cost that grows with the number of
// blocks while the multiplying does not: blocks of 256 columns keep it small (two blocks
// for a 512-wide projection, as before there was any thread count to follow, eight for
// the feed-forward's 2048). Fewer than kFewRows rows (a generated token's, a short
// prompt's) read b in place instead, each block a run of every stored row: one block per
// kFewRowsPieceColumns columns, made even for two threads, gives runs long enough for the
// hardware's prefetcher (256 columns of GPT-2's F32 were 1 KiB runs 9 KiB apart; 2048:
// a generated GPT-2 token 28-31 ms -> 24-28 ms measured).
// A few rows' product is split from kFewRowsParallelMinWeights numbers of b on, whatever
// M: it is bound by reading b, which two cores read nearly twice as fast as one (GPT-2's
// 768 x 768 projections, a third of its layers' bytes, were read by one thread: a token
// 30.0-30.9 ms -> 28.8-29.1, and 25.4 with cli/wait_policy.cpp's short spin).
constexpr std::size_t kProductPieceColumns = 256;
constexpr std::size_t kFewRows = 8;
constexpr std::size_t kFewRowsParallelMinWeights = std::size_t{1} << 18;
constexpr std::size_t kFewRowsPieceColumns = 2048;
constexpr std::size_t kMaxProductPieces = 16;
std::size_t product_pieces(std::size_t M, std::size_t K, std::size_t P);

// a is (batches,M,K), b is (batches,K,P) -> c = a @ b (batches,M,P): one product per
// batch item (head), the items shared between the threads from a million multiply-adds in
// all. An item's product is the same whichever thread computes it.
void batched_matmul_fast(const double* a, const double* b, double* c, std::size_t batches, std::size_t M, std::size_t K,
                         std::size_t P);

// The backward pass's products, c = op(a) @ op(b) with op(a) (M,K) and op(b) (K,P), where
// an operand marked transposed is stored as its transpose: a as (K,M), b as (P,K), both
// row-major. So dW = Xᵀ·dY and dX = dY·Wᵀ read X and W where they are, without a copy.
// Split as matmul_fast splits (two blocks of the result's columns from a million
// multiply-adds), and batched as batched_matmul_fast (one item per thread).
struct Transposes {
  bool a = false, b = false;
};
void matmul_transposed_fast(const double* a, const double* b, Transposes t, double* c, std::size_t M, std::size_t K,
                            std::size_t P);
void batched_matmul_transposed_fast(const double* a, const double* b, Transposes t, double* c, std::size_t batches,
                                    std::size_t M, std::size_t K, std::size_t P);

}  // namespace attn

#endif  // ATTN_KERNELS_MATMUL_H_
