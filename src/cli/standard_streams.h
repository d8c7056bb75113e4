// Standard input, output and error as attn uses them.
//
// A descriptor the caller closed (`attn explain --dump f.json >&-`) would be handed to the
// next file attn opens, so that the dump's temporary file became standard output and the
// walkthrough was written into the dump. So each closed one is taken at start-up by
// /dev/null opened read-only: writing to it still fails, as writing to a closed descriptor
// does, and nothing else can get its number.
//
// Output that could not be written (standard output closed, /dev/full, a full disk) is an
// error, not a success with the output lost: check_standard_output() reports it before a
// dump is committed and before attn exits 0.
#ifndef ATTN_CLI_STANDARD_STREAMS_H_
#define ATTN_CLI_STANDARD_STREAMS_H_

namespace attn::cli {

// Takes the numbers of closed descriptors 0, 1 and 2 (see above). First thing in main.
void guard_standard_streams();

// Flushes standard output; EnvironmentError("cannot write to standard output: <reason>")
// when anything written to it was lost.
void check_standard_output();

}  // namespace attn::cli

#endif  // ATTN_CLI_STANDARD_STREAMS_H_
