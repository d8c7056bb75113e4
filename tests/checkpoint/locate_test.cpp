// Finding a model: a folder as it is, a Hub name in huggingface_hub's cache (HF_HUB_CACHE,
// else HF_HOME/hub, else ~/.cache/huggingface/hub), and one line for anything else.
#include "checkpoint/locate.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "checkpoint_test_files.h"

using attn_test::TempFolder;
using attn_test::write_bytes;

namespace {

// CACHE/models--ORG--NAME/refs/main holding `commit`, and the snapshot folder it names.
std::string make_cache_entry(const std::string& cache, const std::string& entry, const std::string& commit) {
  const std::string base = cache + "/" + entry;
  REQUIRE(std::system(("mkdir -p '" + base + "/refs' '" + base + "/snapshots/" + commit + "'").c_str()) == 0);
  write_bytes(base + "/refs/main", commit);  // huggingface_hub writes it without a newline
  return base + "/snapshots/" + commit;
}

std::string refusal(const std::string& source, const attn::HubEnvironment& env) {
  try {
    attn::locate_model(source, env);
  } catch (const attn::InputError& e) {
    CHECK(e.file() == source);
    return e.message();
  }
  FAIL("located " << source);
  return "";
}

}  // namespace

TEST_CASE("a model folder is used as it is", "[checkpoint][locate]") {
  TempFolder folder;
  CHECK(attn::locate_model(folder.path(), {}) == folder.path());
}

TEST_CASE("a Hub name is found in the cache that HF_HUB_CACHE, HF_HOME or HOME gives", "[checkpoint][locate]") {
  TempFolder root;
  const std::string commit = "607a30d783dfa663caf39e06633721c8d4cfcd7e";
  const std::string home_snapshot =
      make_cache_entry(root.path() + "/.cache/huggingface/hub", "models--HuggingFaceTB--SmolLM2-135M", commit);
  CHECK(attn::locate_model("HuggingFaceTB/SmolLM2-135M", {"", "", root.path()}) == home_snapshot);
  const std::string hf_home_snapshot = make_cache_entry(root.path() + "/hfhome/hub", "models--gpt2", commit);
  CHECK(attn::locate_model("gpt2", {"", root.path() + "/hfhome", root.path()}) == hf_home_snapshot);
  const std::string cache_snapshot = make_cache_entry(root.path() + "/cache", "models--gpt2", "abc123");
  CHECK(attn::locate_model("gpt2", {root.path() + "/cache", root.path() + "/hfhome", root.path()}) == cache_snapshot);
}

TEST_CASE("a Hub name not in the cache says where attn looked and how to download it", "[checkpoint][locate]") {
  TempFolder root;
  CHECK(refusal("gpt2", {root.path() + "/cache", "", ""}) ==
        "not a folder, and not in the Hugging Face cache (looked for " + root.path() +
            "/cache/models--gpt2/refs/main, from HF_HUB_CACHE); attn never downloads: run `huggingface-cli download "
            "gpt2` on a machine with internet, or give a folder");
  // refs/main naming a snapshot that is not there (an interrupted download)
  make_cache_entry(root.path() + "/hub", "models--org--m", "aaaa");
  REQUIRE(std::system(("echo bbbb > '" + root.path() + "/hub/models--org--m/refs/main'").c_str()) == 0);
  CHECK(refusal("org/m", {"", root.path(), ""})
            .find("looked for " + root.path() + "/hub/models--org--m/snapshots/bbbb, from HF_HOME") !=
        std::string::npos);
  // refs/main that is /dev/zero (getline read it without end), a FIFO (the read blocked for
  // ever) or a folder: a regular file only, the ref named with what was found (issue 31).
  const std::string ref = root.path() + "/hub/models--org--m/refs/main";
  const auto ref_refusal = [&] {
    try {
      attn::locate_model("org/m", {"", root.path(), ""});
    } catch (const attn::InputError& e) {
      CHECK(e.file() == ref);
      return e.message();
    }
    return std::string("located");
  };
  REQUIRE(std::system(("ln -sf /dev/zero '" + ref + "'").c_str()) == 0);
  CHECK(ref_refusal() == "expected a regular file naming a commit, found a device");
  REQUIRE(std::system(("rm '" + ref + "' && mkfifo '" + ref + "'").c_str()) == 0);
  CHECK(ref_refusal() == "expected a regular file naming a commit, found a FIFO (named pipe)");
  REQUIRE(std::system(("rm '" + ref + "' && mkdir '" + ref + "'").c_str()) == 0);
  CHECK(ref_refusal() == "expected a regular file naming a commit, found a folder");
}

TEST_CASE("a path that is a file or does not exist is one clear line", "[checkpoint][locate]") {
  TempFolder root;
  write_bytes(root.file("config.json"), "{}");
  CHECK(refusal(root.file("config.json"), {}) ==
        "expected a model folder (config.json and model.safetensors) or a Hub name, found a file");
  CHECK(refusal(root.file("nothing/here"), {}) ==
        "no such file or folder (expected a model folder or a Hub name such as gpt2)");
  CHECK(refusal("./gpt2", {root.path(), "", ""}) ==
        "no such file or folder (expected a model folder or a Hub name such as gpt2)");
}
