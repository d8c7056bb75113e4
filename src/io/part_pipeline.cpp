#include "io/part_pipeline.h"

#include <algorithm>
#include <system_error>

#include "core/memory_budget.h"

namespace attn {

namespace {
// Parts in flight (being formatted, or formatted and not yet written) per thread: enough
// that the caller, finding the next part to write still in a helper's hands, has others
// to take meanwhile...
constexpr std::size_t kSlotsPerThread = 4;
// ... unless they would hold more text than this; never fewer than one part per thread
// (a part is at least one row of a tensor, which can be long).
constexpr std::size_t kMaxHeldBytes = std::size_t{16} << 20;
// More threads than this would mostly wait for the one that writes.
constexpr int kMaxThreads = 64;

int thread_count(int threads) { return std::clamp(threads, 1, kMaxThreads); }
std::size_t slot_count(int threads) { return kSlotsPerThread * static_cast<std::size_t>(thread_count(threads)); }

}  // namespace

char* PartBuffer::room(std::size_t size) {
  if (size > capacity_) {
    // the old buffer freed first: the two are never held at once (PartHolding counts one)
    data_.reset();
    capacity_ = 0;
    data_.reset(new char[size]);
    capacity_ = size;
  }
  return data_.get();
}

std::size_t PartPipeline::window(int threads, std::size_t part_bytes) {
  return std::clamp(kMaxHeldBytes / std::max<std::size_t>(1, part_bytes),
                    static_cast<std::size_t>(thread_count(threads)), slot_count(threads));
}

PartHolding::PartHolding(int threads) : threads_(threads), capacities_(slot_count(threads)) {}

void PartHolding::add(std::size_t parts, std::size_t part_bytes, std::size_t last_part_bytes) {
  // slot s's largest part is part s: every part after it in that slot is a later one, as
  // large or the last
  const std::size_t used = std::min(parts, PartPipeline::window(threads_, part_bytes));
  for (std::size_t s = 0; s < used; ++s)
    capacities_[s] = std::max(capacities_[s], s + 1 == parts ? last_part_bytes : part_bytes);
}

std::uint64_t PartHolding::bytes() const {
  std::uint64_t bytes = 0;
  for (const std::size_t capacity : capacities_)
    bytes += static_cast<std::uint64_t>(heap_block_bytes(static_cast<long double>(capacity)));
  return bytes;
}

PartPipeline::PartPipeline(int threads) : threads_(thread_count(threads)), slots_(slot_count(threads)) {}

PartPipeline::~PartPipeline() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  for (auto& helper : helpers_) helper.join();
}

void PartPipeline::start_helpers() {
  helpers_started_ = true;
  for (int i = 1; i < threads_; ++i) {
    try {
      helpers_.emplace_back([this] { helper_loop(); });
    } catch (const std::system_error&) {
      break;  // no thread to be had (a process limit): fewer helpers, or the caller alone
    }
  }
}

// (under mutex_) A part is left to take, and its slot is free.
bool PartPipeline::can_claim() const {
  return format_ != nullptr && !failure_ && next_ < parts_ && next_ < emitted_ + window_;
}

void PartPipeline::helper_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return stopping_ || (shared_ && can_claim()); });
    if (stopping_) return;
    // The call cannot end before this part is written, so *format_ outlives its use.
    const std::size_t part = next_++;
    Slot& slot = slots_[part % window_];
    const Format& format = *format_;
    ++busy_;
    lock.unlock();
    std::size_t length = 0;
    std::exception_ptr failure;
    try {
      length = format(part, slot.buffer);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    --busy_;
    if (failure && !failure_) failure_ = failure;
    slot.length = length;
    slot.done = !failure;
    done_.notify_one();
  }
}

// (under mutex_, through `lock`) No part is taken any more; returns once no helper is
// formatting one.
void PartPipeline::finish_job(std::unique_lock<std::mutex>& lock) {
  if (!lock.owns_lock()) lock.lock();
  format_ = nullptr;
  shared_ = false;
  done_.wait(lock, [this] { return busy_ == 0; });
}

void PartPipeline::run(std::size_t parts, std::size_t part_bytes, bool shared, const Format& format, const Emit& emit) {
  if (parts == 0) return;
  shared = shared && threads_ > 1 && parts > 1;
  if (shared && !helpers_started_) start_helpers();
  std::unique_lock<std::mutex> lock(mutex_);
  format_ = &format;
  shared_ = shared && !helpers_.empty();
  parts_ = parts;
  window_ = window(threads_, part_bytes);
  next_ = emitted_ = 0;
  failure_ = nullptr;
  for (auto& slot : slots_) slot.done = false;
  if (shared_) work_.notify_all();
  try {
    while (emitted_ < parts_) {
      if (failure_) std::rethrow_exception(failure_);
      Slot& first = slots_[emitted_ % window_];
      if (emitted_ < next_ && first.done) {  // the next part to write is ready
        lock.unlock();
        emit(first.buffer.data(), first.length);
        lock.lock();
        first.done = false;
        ++emitted_;
        if (shared_) work_.notify_one();  // its slot is free for another part
      } else if (can_claim()) {           // format a part here meanwhile
        const std::size_t part = next_++;
        Slot& slot = slots_[part % window_];
        lock.unlock();
        const std::size_t length = format(part, slot.buffer);
        lock.lock();
        slot.length = length;
        slot.done = true;
      } else {  // everything left is in a helper's hands
        done_.wait(lock);
      }
    }
  } catch (...) {
    finish_job(lock);
    throw;
  }
  finish_job(lock);
}

}  // namespace attn
