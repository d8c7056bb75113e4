// A fresh folder for one test case's files, removed afterwards.
#ifndef ATTN_TESTS_TOKENIZERS_TEMP_FOLDER_H_
#define ATTN_TESTS_TOKENIZERS_TEMP_FOLDER_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace attn_test {

struct TempFolder {
  std::filesystem::path path;
  explicit TempFolder(const std::string& tag) {
    static int count = 0;
    path = std::filesystem::temp_directory_path() /
           ("attn_" + tag + "_" + std::to_string(getpid()) + "_" + std::to_string(++count));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempFolder() { std::filesystem::remove_all(path); }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path / name, std::ios::binary) << content;
    return (path / name).string();
  }
  // Copies every file of `folder` here.
  void copy_from(const std::string& folder) const {
    for (const auto& entry : std::filesystem::directory_iterator(folder))
      std::filesystem::copy_file(entry.path(), path / entry.path().filename());
  }
  std::string str() const { return path.string(); }
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace attn_test

#endif  // ATTN_TESTS_TOKENIZERS_TEMP_FOLDER_H_
