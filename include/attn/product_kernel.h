// Which build of attn's large matrix product this process runs. The portable binary holds
// three, one per instruction set (SSE2, the x86-64 baseline; AVX2 with FMA; AVX-512), and
// takes the best the CPU has, once, at start-up; ATTN_CPU=baseline|avx2|avx512 forces one.
// Each kernel gives the same bits run after run, but the baseline's last bits differ from
// the others' (no fused multiply-add): docs/architecture.md. Owned by src/kernels/.
#ifndef ATTN_PRODUCT_KERNEL_H_
#define ATTN_PRODUCT_KERNEL_H_

#include <optional>
#include <string>

namespace attn {

// The kernel in use: "baseline", "avx2" or "avx512".
const char* product_kernel_name();

// Chooses the kernel for the rest of the process; `request` is ATTN_CPU's value (null or
// empty: the best this CPU has). Returns the one-line error for a name that is not a
// kernel or a kernel whose instructions this CPU lacks, having chosen nothing.
std::optional<std::string> choose_product_kernel(const char* request);

}  // namespace attn

#endif  // ATTN_PRODUCT_KERNEL_H_
