#include "checkpoint/checkpoint_files.h"

#include <sys/stat.h>
#include <map>

#include <fmt/format.h>

#include "attn/error.h"
#include "checkpoint/json_file.h"

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

CheckpointFiles::CheckpointFiles(const std::string& folder) {
  const std::string single = folder + "/" + kSafetensorsFile;
  const std::string index = folder + "/" + kSafetensorsIndexFile;
  refuse_other_than_file(single, "the weights as a safetensors file");
  refuse_other_than_file(index, "the index of the weights' shards as a JSON file");
  if (is_regular_file(single))
    open_single(single);
  else if (is_regular_file(index))
    open_sharded(folder, index);
  else
    throw InputError(folder, "",
                     fmt::format("found neither {} nor {} (attn reads safetensors weights only; pytorch_model.bin "
                                 "is a pickle, which attn does not load)",
                                 kSafetensorsFile, kSafetensorsIndexFile));
}

void CheckpointFiles::open_single(const std::string& path) {
  weights_path_ = path;
  files_.push_back(std::make_unique<SafetensorsFile>(path));
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

void CheckpointFiles::open_sharded(const std::string& folder, const std::string& index_path) {
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
  std::map<std::string, const SafetensorsFile*> shards;
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
      refuse_other_than_file(path, "a shard of the weights as a safetensors file");
      if (!is_regular_file(path))
        throw InputError(index_path, where, fmt::format("names the shard \"{}\", which is not in {}", file, folder));
      files_.push_back(std::make_unique<SafetensorsFile>(path));
      it = shards.emplace(file, files_.back().get()).first;
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

}  // namespace attn
