// The OpenMP environment as attn lets libgomp read it (wait_policy.cpp): OMP_WAIT_POLICY
// PASSIVE unless the user chose, and an OMP_NUM_THREADS libgomp would refuse kept back.
#ifndef ATTN_CLI_WAIT_POLICY_H_
#define ATTN_CLI_WAIT_POLICY_H_

namespace attn::cli {

// OMP_NUM_THREADS's value when it is no list of positive thread counts ("abc", "0"), which
// libgomp was told was unset (it would have printed two lines of its own); else nullptr.
const char* refused_thread_count();

}  // namespace attn::cli

#endif  // ATTN_CLI_WAIT_POLICY_H_
