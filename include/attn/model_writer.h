// A model as a model file (docs/model-file.md) with every tensor written out as numbers:
// what attn train writes, loadable by explain, grad and train again. Every double is
// written as Python's repr writes it (the shortest text that reads back as the same
// double), so that loading the file gives the model's numbers bit for bit.
#ifndef ATTN_MODEL_WRITER_H_
#define ATTN_MODEL_WRITER_H_

#include <string>

#include "attn/model.h"
#include "attn/run_input.h"

namespace attn {

// The model file's text: "comment", the "model" block with every choice spelled out, the
// vocabulary, the weights (per-head matrices as "heads"), `input` (its
// text, tokens or X, the target, labels or output_grad), and the output head. Vectors on
// one line, matrices one row per line.
std::string model_file_json(const Model& model, const RunInput& input, const std::string& comment);

}  // namespace attn

#endif  // ATTN_MODEL_WRITER_H_
