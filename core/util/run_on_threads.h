#pragma once
// runOnThreads(): the parts `work(0)` … `work(count - 1)` at once, part 0 on the calling thread and
// each other part on a thread of its own. Nothing escapes a worker thread (where it would end the
// program): the first exception a part throws is rethrown on the calling thread once every part
// has finished. A thread that cannot be started (no memory for its stack, a process limit) is not
// an error: its part runs on the calling thread instead.
#include <functional>

namespace streetgan {

void runOnThreads(int count, const std::function<void(int part)>& work);

}  // namespace streetgan
