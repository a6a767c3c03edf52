#include "core/util/run_on_threads.h"

#include <exception>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace streetgan {

void runOnThreads(int count, const std::function<void(int part)>& work) {
  std::mutex mutex;
  std::exception_ptr first;
  const auto guarded = [&](int part) {
    try {
      work(part);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex);
      if (!first) first = std::current_exception();
    }
  };
  // Room for every part first: once a thread runs, nothing here may throw before it is joined.
  std::vector<std::thread> threads;
  std::vector<int> here;  // the parts this thread runs
  threads.reserve(static_cast<std::size_t>(count > 1 ? count : 1));
  here.reserve(static_cast<std::size_t>(count > 1 ? count : 1));
  here.push_back(0);
  for (int part = 1; part < count; ++part) {
    try {
      threads.emplace_back(guarded, part);
    } catch (const std::system_error&) {
      here.push_back(part);
    } catch (const std::bad_alloc&) {
      here.push_back(part);
    }
  }
  for (int part : here) guarded(part);
  for (auto& thread : threads) thread.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace streetgan
