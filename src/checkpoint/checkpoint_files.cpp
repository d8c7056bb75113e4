#include "checkpoint/checkpoint_files.h"

#include <sys/stat.h>
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "attn/error.h"
#include "checkpoint/json_file.h"
#include "checkpoint/pytorch_bin.h"

namespace attn {

bool is_regular_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::string other_than_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || S_ISREG(info.st_mode)) return "";
  if (S_ISDIR(info.st_mode)) return "a directory";
  if (S_ISFIFO(info.st_mode)) return "a FIFO";
  if (S_ISCHR(info.st_mode)) return "a character device";
  if (S_ISBLK(info.st_mode)) return "a block device";
  if (S_ISSOCK(info.st_mode)) return "a socket";
  return "neither a file nor a directory";
}

void refuse_other_than_file(const std::string& path, const std::string& file_words) {
  const std::string found = other_than_file(path);
  if (!found.empty()) throw InputError(path, "", fmt::format("expected {}, found {}", file_words, found));
}

namespace {

std::unique_ptr<WeightsFile> open_weights(const std::string& path, bool pickled) {
  if (pickled) return std::make_unique<PytorchBinFile>(path);
  return std::make_unique<SafetensorsFile>(path);
}

}  // namespace

CheckpointFiles::CheckpointFiles(const std::string& folder) {
  const auto in_folder = [&](const char* name) { return folder + "/" + name; };
  refuse_other_than_file(in_folder(kSafetensorsFile), "the weights as a safetensors file");
  refuse_other_than_file(in_folder(kSafetensorsIndexFile), "the index of the weights' shards as a JSON file");
  refuse_other_than_file(in_folder(kPytorchBinFile), "the weights as a pytorch_model.bin file");
  refuse_other_than_file(in_folder(kPytorchBinIndexFile), "the index of the weights' shards as a JSON file");
  if (is_regular_file(in_folder(kSafetensorsFile)))
    open_single(in_folder(kSafetensorsFile), false);
  else if (is_regular_file(in_folder(kSafetensorsIndexFile)))
    open_sharded(folder, in_folder(kSafetensorsIndexFile), false);
  else if (is_regular_file(in_folder(kPytorchBinFile)))
    open_single(in_folder(kPytorchBinFile), true);
  else if (is_regular_file(in_folder(kPytorchBinIndexFile)))
    open_sharded(folder, in_folder(kPytorchBinIndexFile), true);
  else
    throw InputError(folder, "",
                     fmt::format("found none of {}, {}, {} and {}: the weights of a Hugging Face checkpoint",
                                 kSafetensorsFile, kSafetensorsIndexFile, kPytorchBinFile, kPytorchBinIndexFile));
}

void CheckpointFiles::open_single(const std::string& path, bool pickled) {
  weights_path_ = path;
  files_.push_back(open_weights(path, pickled));
  for (const auto& t : files_.back()->tensors()) {
    entries_[t.name] = Entry{files_.back().get(), &t};
    names_.push_back(t.name);
  }
}

namespace {

// A shard is a file beside the index: no folder in its name, so an index cannot point at
// /etc/passwd or ../../x.
bool plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

}  // namespace

void CheckpointFiles::open_sharded(const std::string& folder, const std::string& index_path, bool pickled) {
  weights_path_ = index_path;
  const Json index = read_json_object_file(index_path);
  const auto map_it = index.find("weight_map");
  if (map_it == index.end()) throw InputError(index_path, "weight_map", "missing (tensor name -> shard file)");
  if (!map_it->is_object())
    throw InputError(
        index_path, "weight_map",
        fmt::format("expected an object (tensor name -> shard file), found {}", describe_config_value(*map_it)));
  if (map_it->empty())
    throw InputError(index_path, "weight_map", "expected at least one tensor, found an empty object");
  std::map<std::string, const WeightsFile*> shards;
  // Several shard names may link to one file: it is mapped and its header parsed once.
  std::map<std::pair<dev_t, ino_t>, const WeightsFile*> opened;
  for (const auto& [name, shard] : map_it->items()) {
    const std::string where = "weight_map." + name;
    if (!shard.is_string())
      throw InputError(index_path, where,
                       fmt::format("expected a shard's file name, found {}", describe_config_value(shard)));
    const std::string file = shard.get<std::string>();
    if (!plain_file_name(file))
      throw InputError(index_path, where, fmt::format("expected a file name beside the index, found \"{}\"", file));
    auto it = shards.find(file);
    if (it == shards.end()) {
      const std::string path = folder + "/" + file;
      refuse_other_than_file(path, pickled ? "a shard of the weights as a pytorch_model.bin file"
                                           : "a shard of the weights as a safetensors file");
      if (!is_regular_file(path))
        throw InputError(index_path, where, fmt::format("names the shard \"{}\", which is not in {}", file, folder));
      struct stat info {};
      ::stat(path.c_str(), &info);
      auto same = opened.find({info.st_dev, info.st_ino});
      if (same == opened.end()) {
        files_.push_back(open_weights(path, pickled));
        same = opened.emplace(std::make_pair(info.st_dev, info.st_ino), files_.back().get()).first;
      }
      it = shards.emplace(file, same->second).first;
    }
    const StoredTensor* tensor = it->second->find(name);
    if (!tensor)
      throw InputError(index_path, where, fmt::format("the shard \"{}\" holds no tensor of that name", file));
    entries_[name] = Entry{it->second, tensor};
    names_.push_back(name);
  }
}

std::vector<CheckpointFiles::Entry> CheckpointFiles::every_tensor() const {
  std::vector<Entry> all;
  for (const auto& file : files_)
    for (const auto& t : file->tensors()) all.push_back(Entry{file.get(), &t});
  return all;
}

CheckpointFiles::Entry CheckpointFiles::find(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? Entry{} : it->second;
}

std::uint64_t CheckpointFiles::reading_bytes() const {
  std::uint64_t most = 0;
  for (const auto& file : files_) most = std::max(most, file->reading_bytes());
  return most;
}

}  // namespace attn
