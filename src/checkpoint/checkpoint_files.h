// The weights of a checkpoint folder: model.safetensors, or the shards listed by
// model.safetensors.index.json ("weight_map": tensor name -> shard file); failing both,
// pytorch_model.bin or the shards of pytorch_model.bin.index.json (transformers' order:
// safetensors first). Every file is mapped and its header (or pickle) checked when the
// folder is opened; no weight is read until a view of it is.
#ifndef ATTN_CHECKPOINT_CHECKPOINT_FILES_H_
#define ATTN_CHECKPOINT_CHECKPOINT_FILES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "checkpoint/safetensors.h"
#include "checkpoint/stored_tensor.h"

namespace attn {

constexpr const char* kSafetensorsFile = "model.safetensors";
constexpr const char* kSafetensorsIndexFile = "model.safetensors.index.json";
constexpr const char* kPytorchBinFile = "pytorch_model.bin";
constexpr const char* kPytorchBinIndexFile = "pytorch_model.bin.index.json";

class CheckpointFiles {
 public:
  // InputError naming the file and the tensor or field for a missing weights file, an index
  // naming a missing shard or a tensor its shard does not hold, and every header problem.
  explicit CheckpointFiles(const std::string& folder);

  struct Entry {
    const WeightsFile* file = nullptr;
    const StoredTensor* tensor = nullptr;
  };
  // The tensor called `name`, or an Entry of nullptrs.
  Entry find(const std::string& name) const;
  // Every tensor's name, in the files' header order.
  const std::vector<std::string>& names() const { return names_; }
  // Every tensor every opened file holds, file by file in header order: with a shard's
  // tensors that the index does not list (which find() does not see).
  std::vector<Entry> every_tensor() const;
  // Where the weights come from, for messages: "DIR/model.safetensors", "DIR/pytorch_model.bin"
  // or an index.
  const std::string& weights_path() const { return weights_path_; }
  // The most any file's reading held at once (WeightsFile::reading_bytes): the files are
  // read one after another.
  std::uint64_t reading_bytes() const;

 private:
  void open_single(const std::string& path, bool pickled);
  void open_sharded(const std::string& folder, const std::string& index_path, bool pickled);

  std::string weights_path_;
  std::vector<std::unique_ptr<WeightsFile>> files_;
  std::unordered_map<std::string, Entry> entries_;
  std::vector<std::string> names_;
};

// Whether `path` names an existing regular file.
bool is_regular_file(const std::string& path);
// What `path` names when it exists but is no regular file (links followed): "a directory",
// "a FIFO", "a character device", "a block device", "a socket"; "" when it is a regular file
// or nothing.
std::string other_than_file(const std::string& path);
// InputError(path, "", "expected FILE_WORDS, found a directory") when other_than_file(path)
// says something: a folder or a FIFO where a file should be is named as what it is, not as
// missing.
void refuse_other_than_file(const std::string& path, const std::string& file_words);

}  // namespace attn

#endif  // ATTN_CHECKPOINT_CHECKPOINT_FILES_H_
