#include "io/part_pipeline.h"

#include <algorithm>
#include <system_error>

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
}  // namespace

char* PartBuffer::room(std::size_t size) {
  if (size > capacity_) {
    data_.reset(new char[size]);
    capacity_ = size;
  }
  return data_.get();
}

PartPipeline::PartPipeline(int threads)
    : threads_(std::clamp(threads, 1, kMaxThreads)), slots_(kSlotsPerThread * static_cast<std::size_t>(threads_)) {}

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
  window_ = std::clamp(kMaxHeldBytes / std::max<std::size_t>(1, part_bytes), static_cast<std::size_t>(threads_),
                       slots_.size());
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
