#include "io/part_pipeline.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace {

// Part p's text: "<p:" then p % 13 letters, then ">" (parts of different lengths).
std::string part_text(std::size_t part) {
  return "<" + std::to_string(part) + ":" + std::string(part % 13, static_cast<char>('a' + part % 26)) + ">";
}

std::size_t write_part(std::size_t part, attn::PartBuffer& buffer) {
  const std::string text = part_text(part);
  std::memcpy(buffer.room(text.size()), text.data(), text.size());
  return text.size();
}

std::string expected_text(std::size_t parts) {
  std::string text;
  for (std::size_t p = 0; p < parts; ++p) text += part_text(p);
  return text;
}

}  // namespace

TEST_CASE("parts are written in order whoever formats them, on any number of threads", "[part_pipeline]") {
  for (const int threads : {1, 2, 4}) {
    INFO("threads " << threads);
    attn::PartPipeline pipeline(threads);
    // Several calls on one pipeline: its slots and threads are reused.
    for (const std::size_t parts : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{500}}) {
      for (const bool shared : {true, false}) {
        std::string out;
        pipeline.run(
            parts, 16, shared,
            [](std::size_t part, attn::PartBuffer& buffer) {
              if (part % 50 == 3) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // uneven work
              return write_part(part, buffer);
            },
            [&out](const char* text, std::size_t length) { out.append(text, length); });
        CHECK(out == expected_text(parts));
      }
    }
  }
}

TEST_CASE("a helper that stalls in its part does not hold up the caller's other parts", "[part_pipeline]") {
  // A helper's first part waits until the caller has formatted every other part (or 10 s
  // have passed). The caller must take them all meanwhile; had it waited for the helper
  // (as when the threads shared out the parts in turn), it would have formatted only some.
  const std::size_t parts = 6;  // fewer than the parts a pipeline of 2 holds at once
  attn::PartPipeline pipeline(2);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<std::size_t> by_caller{0};
  std::string out;
  pipeline.run(
      parts, 16, true,
      [&](std::size_t part, attn::PartBuffer& buffer) {
        if (std::this_thread::get_id() == caller) {
          ++by_caller;
        } else {
          const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (by_caller < parts - 1 && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return write_part(part, buffer);
      },
      [&out](const char* text, std::size_t length) { out.append(text, length); });
  CHECK(by_caller >= parts - 1);  // all of them when the helper never got to run
  CHECK(out == expected_text(parts));
}

TEST_CASE("an error while formatting or writing a part reaches the caller, and the pipeline runs again",
          "[part_pipeline]") {
  attn::PartPipeline pipeline(3);
  std::string out;
  const auto append = [&out](const char* text, std::size_t length) { out.append(text, length); };
  CHECK_THROWS_WITH(pipeline.run(
                        200, 16, true,
                        [](std::size_t part, attn::PartBuffer& buffer) {
                          if (part == 37) throw std::runtime_error("part 37 failed");
                          return write_part(part, buffer);
                        },
                        append),
                    "part 37 failed");
  CHECK(out.size() <= expected_text(37).size());  // nothing from the failed part on
  CHECK(out == expected_text(200).substr(0, out.size()));

  out.clear();
  std::size_t written = 0;
  CHECK_THROWS_WITH(pipeline.run(200, 16, true, write_part,
                                 [&](const char* text, std::size_t length) {
                                   if (written++ == 10) throw std::runtime_error("disk full");
                                   out.append(text, length);
                                 }),
                    "disk full");
  CHECK(out == expected_text(10));

  out.clear();
  pipeline.run(200, 16, true, write_part, append);
  CHECK(out == expected_text(200));
}

TEST_CASE("parts too large to hold many of hold back the threads: one part each in flight", "[part_pipeline]") {
  // Writing is slow (1 ms a part), so formatting runs ahead as far as it may: four parts
  // per thread when parts are small, one per thread when four each would pass 16 MiB.
  for (const std::size_t part_bytes : {std::size_t{16}, std::size_t{1} << 30}) {
    INFO("part_bytes " << part_bytes);
    attn::PartPipeline pipeline(3);
    std::atomic<std::size_t> begun{0}, written{0}, most_in_flight{0};
    std::mutex mutex;
    std::string out;
    pipeline.run(
        60, part_bytes, true,
        [&](std::size_t part, attn::PartBuffer& buffer) {
          const std::size_t in_flight = ++begun - written;
          std::lock_guard<std::mutex> lock(mutex);
          most_in_flight = std::max<std::size_t>(most_in_flight, in_flight);
          return write_part(part, buffer);
        },
        [&](const char* text, std::size_t length) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          out.append(text, length);
          ++written;
        });
    CHECK(out == expected_text(60));
    CHECK(most_in_flight <= (part_bytes == 16 ? 12u : 3u));
  }
}
