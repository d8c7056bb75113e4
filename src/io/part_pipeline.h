// Text made in parts by several threads and written in order by one: the JSON dump's
// tensors (formatting doubles is most of a dump's time).
//
// Why not an OpenMP loop: a parallel region ends only when every thread of its team has
// been through it, so each tensor waited for the other threads to be woken and scheduled,
// and an `ordered` loop made each thread wait for the part before its own. On a busy
// machine (more runnable threads than cores) those waits were most of the dump: 0.57 s of
// 0.85 s at base 128 tokens, load 7 on 2 cores. Here the calling thread never waits for a
// helper to start: it takes parts itself, and a helper that is not running simply takes
// none. It waits only for a part a helper has already begun.
#ifndef ATTN_IO_PART_PIPELINE_H_
#define ATTN_IO_PART_PIPELINE_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace attn {

// A part's text: kept from part to part and from tensor to tensor, and never zero-filled
// (a vector's resize would clear it first, and fresh memory is faulted in page by page).
class PartBuffer {
 public:
  // At least `size` writable bytes; what was there before is not kept.
  char* room(std::size_t size);
  const char* data() const { return data_.get(); }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t capacity_ = 0;
};

// The bytes a PartPipeline's buffers hold, counted before it runs (the memory estimate):
// each slot keeps the largest part it has formatted, and part p of a run goes to slot
// p % window, so the slots' sizes follow from the parts' sizes alone.
class PartHolding {
 public:
  explicit PartHolding(int threads);
  // A run() of `parts` parts of `part_bytes` each but the last, of `last_part_bytes`.
  void add(std::size_t parts, std::size_t part_bytes, std::size_t last_part_bytes);
  // What malloc hands out for the buffers (each block's usable size, at most).
  std::uint64_t bytes() const;

 private:
  int threads_;
  std::vector<std::size_t> capacities_;
};

class PartPipeline {
 public:
  // Writes part `part`'s text into `buffer` (through buffer.room) and returns its length.
  // Called on several threads at once, for different parts.
  using Format = std::function<std::size_t(std::size_t part, PartBuffer& buffer)>;
  // Called on the caller's thread, part after part, in order.
  using Emit = std::function<void(const char* text, std::size_t length)>;

  // `threads`, the caller included; threads - 1 helpers are started when first needed.
  explicit PartPipeline(int threads);
  ~PartPipeline();
  PartPipeline(const PartPipeline&) = delete;
  PartPipeline& operator=(const PartPipeline&) = delete;

  // Formats parts 0 .. parts - 1 (each at most part_bytes of text) and emits them in
  // order; with shared == false the caller formats them all (a tensor too small to be worth
  // waking a thread). The text is the same whoever formats which part. An exception from
  // format or emit is rethrown here once no helper is still formatting a part of this call.
  void run(std::size_t parts, std::size_t part_bytes, bool shared, const Format& format, const Emit& emit);

  // The parts of one run() in flight at once, at most: part p is formatted in slot
  // p % window (never fewer than one a thread).
  static std::size_t window(int threads, std::size_t part_bytes);

 private:
  struct Slot {
    PartBuffer buffer;
    std::size_t length = 0;
    bool done = false;
  };
  bool can_claim() const;
  void helper_loop();
  void start_helpers();
  void finish_job(std::unique_lock<std::mutex>& lock);

  int threads_;
  std::vector<std::thread> helpers_;
  bool helpers_started_ = false;
  std::vector<Slot> slots_;  // parts not yet emitted, part p in slots_[p % window_]
  std::mutex mutex_;
  std::condition_variable work_;  // helpers wait for a part to take
  std::condition_variable done_;  // the caller waits for a helper's part
  // The current call's job (all under mutex_).
  const Format* format_ = nullptr;
  bool shared_ = false;
  std::size_t parts_ = 0, next_ = 0, emitted_ = 0;
  std::size_t window_ = 1;  // parts formatted or being formatted and not yet emitted, at most
  int busy_ = 0;            // helpers formatting a part
  std::exception_ptr failure_;
  bool stopping_ = false;
};

}  // namespace attn

#endif  // ATTN_IO_PART_PIPELINE_H_
