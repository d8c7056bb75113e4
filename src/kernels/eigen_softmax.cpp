// attn train's softmax: the one every shipped trained model was trained with (Eigen's
// vectorized exp, compiled for the build's own instruction set), kept so that those files
// retrain byte for byte (docs/architecture.md); every other command runs rows_isa.cpp's.
#include "kernels/eigen_softmax.h"

#include <algorithm>
#include <limits>

#include <Eigen/Core>

#include "attn/tensor.h"
#include "kernels/parallel.h"

namespace attn {

namespace {

namespace ei = Eigen::internal;
// The widest packet of doubles the build's CPU has: 8 with AVX-512, 4 with AVX2.
using Packet = ei::packet_traits<double>::type;
constexpr std::size_t kLanes = ei::packet_traits<double>::size;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kExpLow = -708.0;

// The largest of x[0..n), n >= 1. Exact in any order; the order is fixed by the indices
// all the same (packets from x[0], then the tail one by one).
double row_max(const double* x, std::size_t n) {
  double max = kNegInf;
  std::size_t j = 0;
  if (n >= kLanes) {
    Packet m = ei::ploadu<Packet>(x);
    for (j = kLanes; j + kLanes <= n; j += kLanes) m = ei::pmax(m, ei::ploadu<Packet>(x + j));
    max = ei::predux_max(m);
  }
  for (; j < n; ++j) max = std::max(max, x[j]);
  return max;
}

// exp(x - shift) lane by lane, 0 where x - shift < kExpLow (see softmax.h).
Packet exp_shifted(const Packet& x, const Packet& shift, const Packet& low) {
  const Packet d = ei::psub(x, shift);
  return ei::pandnot(ei::pexp(ei::pmax(d, low)), ei::pcmp_lt(d, low));
}

// y[j] = exp(x[j] - shift) for j < n, every element by the same packet code.
void exp_row(const double* x, double shift, double* y, std::size_t n) {
  const Packet s = ei::pset1<Packet>(shift), low = ei::pset1<Packet>(kExpLow);
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) ei::pstoreu(y + j, exp_shifted(ei::ploadu<Packet>(x + j), s, low));
  if (j == n) return;
  double tail[kLanes];  // the last n - j < kLanes values, padded with exp(0)'s argument
  std::fill(tail, tail + kLanes, shift);
  std::copy(x + j, x + n, tail);
  ei::pstoreu(tail, exp_shifted(ei::ploadu<Packet>(tail), s, low));
  std::copy(tail, tail + (n - j), y + j);
}

}  // namespace

std::size_t softmax_rows_eigen(const double* in, double* out, std::size_t rows, std::size_t T) {
  if (T == 0) return 0;
  std::size_t masked = 0;
#pragma omp parallel for schedule(static) reduction(+ : masked) if (rows * T >= kParallelMinElements)
  for (std::size_t r = 0; r < rows; ++r) {
    const double* x = in + r * T;
    double* y = out + r * T;
    const double max = row_max(x, T);
    if (max == kNegInf) {  // every key masked: zero weights, as the reference
      std::fill(y, y + T, 0.0);
      ++masked;
      continue;
    }
    exp_row(x, max, y, T);
    const double sum = pairwise_sum(y, T);
    for (std::size_t j = 0; j < T; ++j) y[j] /= sum;
  }
  return masked;
}

}  // namespace attn
