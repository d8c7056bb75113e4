// The worked examples bundled into the binary (data/examples/*.json): one per seed
// document, each reproducing that document's numbers, plus a padded batch.
#ifndef ATTN_MODEL_EXAMPLES_H_
#define ATTN_MODEL_EXAMPLES_H_

#include <string>
#include <vector>

namespace attn {

struct BundledExample {
  const char* name;  // the file name without .json: "seed000_batched_mha"
  const char* json;  // the model file's text
};

// Sorted by name.
const std::vector<BundledExample>& bundled_examples();

// A trained model's short name, its task's: "sort" for "trained_sort" (attn train --task
// sort writes it); "" for the other examples.
std::string example_short_name(const BundledExample& example);

// The example called `name` (or by its short name, or "seed000" for "seed000_batched_mha");
// InputError naming the closest one when there is none.
const BundledExample& find_example(const std::string& name);

// The first sentence of the example's "comment": what it shows.
std::string example_summary(const BundledExample& example);

}  // namespace attn

#endif  // ATTN_MODEL_EXAMPLES_H_
