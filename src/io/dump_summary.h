// What a dump says besides the numbers: the model's sizes, each tensor's shape, axes and
// type, the tokens and the notes. The JSON dump writes them around its tensors; the .npz
// dump holds them all in its "__meta__.json" (docs/dump-format.md).
#ifndef ATTN_IO_DUMP_SUMMARY_H_
#define ATTN_IO_DUMP_SUMMARY_H_

#include <string>

#include <nlohmann/json.hpp>

#include "attn/model.h"
#include "attn/run_input.h"
#include "attn/trace.h"
#include "io/npz_writer.h"

namespace attn {

// The resolved hyper-parameters of the run: the dump's "model" object.
nlohmann::json model_summary(const Model& model, const RunInput& input);
// The token strings of each sequence, (B,S) with "<PAD>" where padded, or {}.
nlohmann::json token_summary(const Trace& trace);
// What the walkthrough prints as notes (unknown words, fully masked rows).
nlohmann::json warning_summary(const Trace& trace);

// The type a tensor has in the .npz: int64 for token ids, bool for padding masks (1 where
// padded), float64 for everything else (the additive masks, 0 and -inf, included).
NpyType npz_type(StepKind kind);
// NumPy's name of that type: "float64", "int64", "bool".
const char* numpy_type_name(NpyType type);

// The .npz dump's "__meta__.json": the JSON dump's keys with, instead of "data", each
// tensor's "dtype". `model` is model_summary()'s; `tensors` and `parameters`
// hold {"name", "shape", "axes", "dtype"} in dump order.
std::string npz_metadata(const nlohmann::json& model, const Trace& trace, const nlohmann::ordered_json& tensors,
                         const nlohmann::ordered_json& parameters);

}  // namespace attn

#endif  // ATTN_IO_DUMP_SUMMARY_H_
