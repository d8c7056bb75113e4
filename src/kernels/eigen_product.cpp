#include "kernels/eigen_product.h"

// One thread per product: the callers split the work (Eigen's own parallel product waited
// more than it multiplied, see matmul.h).
#ifndef EIGEN_DONT_PARALLELIZE
#define EIGEN_DONT_PARALLELIZE
#endif
#include <Eigen/Core>

namespace attn {

void fix_eigen_blocking() {
  // L1 data, L2, L3 in bytes, as Eigen reads them off an Intel Ice Lake core.
  Eigen::setCpuCacheSizes(48 * 1024, 1280 * 1024, 36 * 1024 * 1024);
}

void eigen_product(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                   std::size_t K, std::size_t P) {
  using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  using ConstMap = Eigen::Map<const RowMatrix, Eigen::Unaligned, Stride>;
  const auto m = static_cast<Eigen::Index>(M), k = static_cast<Eigen::Index>(K), p = static_cast<Eigen::Index>(P);
  const ConstMap A(a.data, a.transposed ? k : m, a.transposed ? m : k, Stride(static_cast<Eigen::Index>(a.stride)));
  const ConstMap B(b.data, b.transposed ? p : k, b.transposed ? k : p, Stride(static_cast<Eigen::Index>(b.stride)));
  Eigen::Map<RowMatrix, Eigen::Unaligned, Stride> C(c, m, p, Stride(static_cast<Eigen::Index>(ldc)));
  if (a.transposed && b.transposed)
    C.noalias() = A.transpose() * B.transpose();
  else if (a.transposed)
    C.noalias() = A.transpose() * B;
  else if (b.transposed)
    C.noalias() = A * B.transpose();
  else
    C.noalias() = A * B;
}

}  // namespace attn
