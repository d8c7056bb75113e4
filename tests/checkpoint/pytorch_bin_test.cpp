// pytorch_model.bin as torch.save wrote it (tests/reference/hf_checkpoints_bin.py: zip and
// legacy formats, shards, F32, F16, BF16, F64, tied heads) holds the very numbers of the
// safetensors case it was made from; a folder with both reads safetensors; the zip's
// damage is refused naming the entry.
#include <cstring>
#include <fstream>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/pytorch_bin.h"
#include "checkpoint_test_files.h"
#include "pickle_bytes.h"

using attn_test::TempFolder;
using attn_test::write_bytes;

namespace {

const std::string kDir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/hf_checkpoints/";

std::vector<std::pair<std::string, std::string>> bin_cases() {
  std::ifstream in(kDir + "bin_cases.txt");
  std::vector<std::pair<std::string, std::string>> cases;
  std::string bin, source;
  while (in >> bin >> source) cases.emplace_back(bin, source);
  return cases;
}

std::uint64_t element_bytes(const attn::StoredTensor& t) {
  return t.element_count() ? (t.end - t.begin) / t.element_count() : 0;
}

// The InputError parse_pytorch_bin gives `bytes`.
attn::InputError bin_error(const std::string& bytes) {
  try {
    attn::parse_pytorch_bin(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "x.bin");
  } catch (const attn::InputError& e) {
    return e;
  }
  FAIL("accepted");
  return attn::InputError("", "", "");
}

}  // namespace

TEST_CASE("pytorch_model.bin holds the safetensors case's tensors bit for bit", "[checkpoint][pytorch_bin]") {
  const auto cases = bin_cases();
  REQUIRE(cases.size() >= 10);
  for (const auto& [bin, source] : cases) {
    DYNAMIC_SECTION(bin) {
      const attn::CheckpointFiles pickled(kDir + bin), safetensors(kDir + source);
      CHECK(pickled.weights_path().find("pytorch_model.bin") != std::string::npos);
      for (const std::string& name : safetensors.names()) {
        const auto want = safetensors.find(name);
        const auto got = pickled.find(name);
        REQUIRE(got.tensor != nullptr);
        CHECK(got.tensor->dtype_name == want.tensor->dtype_name);
        CHECK(got.tensor->shape == want.tensor->shape);
        REQUIRE(got.tensor->end - got.tensor->begin == want.tensor->end - want.tensor->begin);
        if (want.tensor->dtype == attn::Dtype::Other) continue;
        const attn::TensorView a = got.file->view(*got.tensor), b = want.file->view(*want.tensor);
        CHECK(std::memcmp(a.bytes(), b.bytes(), got.tensor->end - got.tensor->begin) == 0);
        CHECK(element_bytes(*got.tensor) == element_bytes(*want.tensor));
      }
      // a tied head is the embeddings' storage under a second name: the same bytes
      const auto head = pickled.find("lm_head.weight");
      if (head.tensor && !safetensors.find("lm_head.weight").tensor) {
        const std::string embeddings = safetensors.find("model.embed_tokens.weight").tensor
                                           ? "model.embed_tokens.weight"
                                       : safetensors.find("transformer.wte.weight").tensor ? "transformer.wte.weight"
                                                                                           : "wte.weight";
        const auto tied = pickled.find(embeddings);
        CHECK(head.file == tied.file);
        CHECK(head.tensor->begin == tied.tensor->begin);
        CHECK(head.tensor->end == tied.tensor->end);
      }
    }
  }
}

TEST_CASE("a folder with model.safetensors and pytorch_model.bin reads safetensors", "[checkpoint][pytorch_bin]") {
  TempFolder folder;
  write_bytes(folder.file("model.safetensors"), attn_test::read_bytes(kDir + "gpt2_f32/model.safetensors"));
  write_bytes(folder.file("pytorch_model.bin"), "not even a pickle");
  CHECK(attn::CheckpointFiles(folder.path()).weights_path() == folder.file("model.safetensors"));
  std::remove(folder.file("model.safetensors").c_str());
  CHECK_THROWS_WITH(attn::CheckpointFiles(folder.path()),
                    Catch::Contains("pytorch_model.bin: expected a zip archive (torch.save since PyTorch 1.6) or a "
                                    "pickle (its legacy format), found a file starting with the byte 0x6e"));
}

TEST_CASE("a zip's end record saturated as in a file over 4 GiB is read through its zip64 record",
          "[checkpoint][pytorch_bin]") {
  // torch.save (miniz) always writes the zip64 end record and its locator before the end
  // record; a file over 4 GiB has 0xffff entries and 0xffffffff offsets in the end record,
  // and the zip64 record's numbers stand for them.
  const std::string good = attn_test::read_bytes(kDir + "llama_bf16_bin/pytorch_model.bin");
  std::string saturated = good;
  const std::size_t end = saturated.rfind(std::string("PK\5\6", 4));
  REQUIRE(end == saturated.size() - 22);
  saturated.replace(end + 8, 12, std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 12));
  const auto parse = [](const std::string& bytes) {
    return attn::parse_pytorch_bin(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "x.bin");
  };
  const auto a = parse(good), b = parse(saturated);
  REQUIRE(a.size() == 21);
  REQUIRE(b.size() == a.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK((b[i].name == a[i].name && b[i].begin == a[i].begin));
  // without the locator, the saturated numbers cannot be read
  std::string no_locator = saturated;
  no_locator[end - 20] = 'X';
  CHECK(bin_error(no_locator).message() ==
        "the end record says the archive is zip64, but no zip64 locator precedes it");
}

TEST_CASE("a damaged zip archive is refused naming the entry", "[checkpoint][pytorch_bin]") {
  const std::string good = attn_test::read_bytes(kDir + "gpt2_f32_bin/pytorch_model.bin");
  REQUIRE(good.size() > 1000);
  REQUIRE_NOTHROW(attn::parse_pytorch_bin(reinterpret_cast<const std::uint8_t*>(good.data()), good.size(), "x.bin"));
  // truncated: the end records are gone
  attn::InputError e = bin_error(good.substr(0, good.size() / 2));
  CHECK(e.json_path() == "end of central directory");
  CHECK(e.message() == "expected a zip archive's end record in its last 64 KiB, found none (truncated?)");
  // an entry renamed "../../../../../../x0" in its central and local headers alike (the same length)
  const std::string name = "pytorch_model/data/0";
  std::string climbing = good;
  for (std::size_t at = climbing.find(name); at != std::string::npos; at = climbing.find(name, at + 1))
    climbing.replace(at, name.size(), "../../../../../../x0");
  e = bin_error(climbing);
  CHECK(e.json_path() == "../../../../../../x0");
  CHECK(e.message().find("a zip entry named outside the archive's folder") == 0);
  // the first entry (data.pkl) compressed: method 8 in its central header
  std::string compressed = good;
  const std::size_t central = compressed.find(std::string("PK\1\2", 4));
  REQUIRE(central != std::string::npos);
  compressed[central + 10] = 8;
  e = bin_error(compressed);
  CHECK(e.json_path() == "pytorch_model/data.pkl");
  CHECK(e.message().find("the entry is compressed (method 8)") == 0);
  // a storage key no entry holds
  std::string missing = good;
  for (std::size_t at = missing.find(name); at != std::string::npos; at = missing.find(name, at + 1))
    missing[at + name.size() - 1] = 'x';
  e = bin_error(missing);
  CHECK(e.message().find("its storage \"0\" is not in the file") == 0);
}

TEST_CASE("views torch may save are read where their storage holds them", "[checkpoint][pytorch_bin]") {
  using namespace attn_test;  // NOLINT: the opcode writers
  // one storage of 8 floats 0 ... 7 under four views: a matrix, a row from element 5 (its
  // dimension of 1 with any stride, as torch's contiguity ignores it), a scalar, an empty
  // tensor at the very end
  const std::string sd = state_dict({{"a", tensor(legacy_storage("FloatStorage", "k", 8), 0, {2, 3}, {3, 1})},
                                     {"b", tensor(legacy_storage("FloatStorage", "k", 8), 5, {1, 3}, {99, 1})},
                                     {"s", tensor(legacy_storage("FloatStorage", "k", 8), 7, {}, {})},
                                     {"e", tensor(legacy_storage("FloatStorage", "k", 8), 8, {0, 4}, {4, 1})}});
  const std::string file = legacy_file(sd, {{"k", raw(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7})}});
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(file.data());
  const std::vector<attn::StoredTensor> t = attn::parse_pytorch_bin(bytes, file.size(), "x.bin");
  REQUIRE(t.size() == 4);
  const std::uint64_t data = file.size() - 32;  // the storage's bytes end the file
  CHECK(t[0].begin == data);
  CHECK(t[0].end == data + 24);
  CHECK(t[1].begin == data + 20);
  CHECK(t[1].shape == attn::Shape{1, 3});
  CHECK(attn::TensorView(t[1], bytes + t[1].begin)[2] == 7.0);
  CHECK(t[2].shape.empty());
  CHECK(attn::TensorView(t[2], bytes + t[2].begin)[0] == 7.0);
  CHECK(t[3].begin == t[3].end);
  CHECK(t[0].dtype_name == "F32");

  // what the legacy format's layout must be
  CHECK(bin_error(file + "x").message() == "1 bytes after the last storage, expected none");
  std::string magic = file;
  magic[5] = '\x00';
  CHECK(bin_error(magic).message().find("expected torch's magic number 0x1950a86a20f9469cfc6c, found an integer of 10 "
                                        "bytes") == 0);
  std::string big_endian = file;
  big_endian[file.find("little_endian") + 13] = '\x89';  // NEWTRUE to NEWFALSE
  CHECK(bin_error(big_endian).message() == "little_endian is False: attn reads storages a little-endian machine wrote");
  const std::string unlisted = legacy_file(sd, {});
  CHECK(bin_error(unlisted).message() == "its storage \"k\" is not in the file");
  CHECK(bin_error(unlisted).json_path() == "a");
}
