// Which build of attn's large matrix product this process runs. The portable binary holds
// three, one per instruction set (SSE2, the x86-64 baseline; AVX2 with FMA; AVX-512), and
// takes the best the CPU has, once, at start-up; ATTN_CPU=baseline|avx2|avx512 forces one.
// Each kernel gives the same bits run after run, but the baseline's last bits differ from
// the others' (no fused multiply-add): docs/architecture.md. attn train runs Eigen's
// product instead, whatever the CPU: the kernel the shipped trained files were trained
// with. Owned by src/kernels/.
#ifndef ATTN_PRODUCT_KERNEL_H_
#define ATTN_PRODUCT_KERNEL_H_

#include <optional>
#include <string>

namespace attn {

// The kernel in use: "baseline", "avx2", "avx512", or "eigen" (training).
const char* product_kernel_name();

// Chooses the kernel for the rest of the process; `request` is ATTN_CPU's value (null or
// empty: the best this CPU has). Returns the one-line error for a name that is not a
// kernel or a kernel whose instructions this CPU lacks, having chosen nothing.
std::optional<std::string> choose_product_kernel(const char* request);

// attn train: Eigen's blocked product for the rest of the process, whatever the CPU and
// ATTN_CPU. data/examples/trained_*.json were trained with it, and a model retrains byte
// for byte only under the kernel that trained it; so a trained file is the same bytes on
// every x86-64 (in the portable build, which compiles Eigen for SSE2).
void use_training_product_kernel();

// The large products' share of the process so far (--timings): the wall time spent in
// them and their floating-point operations (2 M K P each), counted where a step calls one
// (kernels/matmul.cpp), threads included. The small products the steps run in plain
// loops (below 32K multiply-adds) are not counted.
struct ProductTotals {
  double seconds = 0.0;
  double flops = 0.0;
};
ProductTotals product_totals();

}  // namespace attn

#endif  // ATTN_PRODUCT_KERNEL_H_
