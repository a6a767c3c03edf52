// The event readers on a long run's log, side by side with the floor they all share: parsing each
// line as a JSON object and nothing else (what every reader did before the typed events of
// core/runs/run_event.h). Prints, per reader, the median of --repeats timings over --lines step
// events and its ratio to that floor:
//   json only            nlohmann::json::parse of every line
//   EventStreamReader    split, parse, typed RunEvent, fed in 64 KiB chunks (what the studio's
//                        dashboard and session get as a followed run's bytes arrive)
//   RunHistoryReader     every point placed (the Compare view)
//   RunSummaryBuilder    the Runs tab: our writer's lines (sorted keys), the last step parsed once
//   RunSummaryBuilder*   the same steps with "type" in the middle of the line, so every step is
//                        parsed (what the Runs tab did with our writer's lines before issue 32)
// Built with the tests (build/tests/core/bench_event_readers), not registered with CTest:
//   build/tests/core/bench_event_readers [--lines 200000] [--repeats 5]
#include "core/runs/event_stream_reader.h"
#include "core/runs/run_history.h"
#include "core/runs/run_summary.h"
#include "core/util/median.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

std::string makeLog(int lines, bool sorted_keys) {
  std::string log = R"({"config":{"batch_size":32,"epochs":5,"preset":"demo"},"device":"cpu","images_seen":0,"pid":0,)"
                    R"("time":1.0,"type":"run_started","v":1,"world_size":1})" "\n";
  char line[512];
  for (int i = 1; i <= lines; ++i) {
    const double time = 1 + i * 0.01;
    if (sorted_keys)  // as EventLog writes them: keys sorted, "type" last but "v"
      std::snprintf(line, sizeof line,
                    R"({"d_g_z1":0.41,"d_g_z2":0.31,"d_x":0.61,"data_wait_fraction":0.02,"epoch":1,"images_per_s":83.2,)"
                    R"("images_seen":%d,"iteration":%d,"iterations":%d,"loss_d":1.2345,"loss_g":2.3456,"step":%d,)"
                    R"("time":%.2f,"type":"step","v":1})" "\n",
                    i * 32, i, lines, i, time);
    else
      std::snprintf(line, sizeof line,
                    R"({"d_g_z1":0.41,"d_g_z2":0.31,"d_x":0.61,"data_wait_fraction":0.02,"epoch":1,"type":"step",)"
                    R"("images_per_s":83.2,"images_seen":%d,"iteration":%d,"iterations":%d,"loss_d":1.2345,)"
                    R"("loss_g":2.3456,"step":%d,"time":%.2f,"v":1})" "\n",
                    i * 32, i, lines, i, time);
    log += line;
  }
  return log;
}

double timeIt(int repeats, const std::function<void()>& work) {
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    work();
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return streetgan::median(seconds);
}

}  // namespace

int main(int argc, char** argv) {
  int lines = 200000, repeats = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--lines") == 0) lines = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::max(1, std::atoi(argv[i + 1]));
  }
  const std::string sorted = makeLog(lines, true), unsorted = makeLog(lines, false);
  std::size_t sink = 0;
  const double floor = timeIt(repeats, [&] {
    std::size_t start = 0;
    for (std::size_t end; (end = sorted.find('\n', start)) != std::string::npos; start = end + 1)
      sink += nlohmann::json::parse(sorted.begin() + static_cast<std::ptrdiff_t>(start),
                                    sorted.begin() + static_cast<std::ptrdiff_t>(end), nullptr, false)
                  .is_object();
  });
  // In 64 KiB chunks, each chunk's events handed on and dropped, as a followed run's arrive.
  const double typed = timeIt(repeats, [&] {
    streetgan::EventStreamReader reader;
    for (std::size_t at = 0; at < sorted.size(); at += 65536)
      sink += reader.feed(std::string_view(sorted).substr(at, 65536)).size();
  });
  const double history = timeIt(repeats, [&] {
    streetgan::RunHistoryReader reader;
    reader.feed(sorted);
    sink += reader.history().steps.size();
  });
  const double summary = timeIt(repeats, [&] {
    streetgan::RunSummaryBuilder builder("/runs/bench");
    builder.feed(sorted);
    sink += static_cast<std::size_t>(builder.summary(false).step);
  });
  const double summary_all = timeIt(repeats, [&] {
    streetgan::RunSummaryBuilder builder("/runs/bench");
    builder.feed(unsorted);
    sink += static_cast<std::size_t>(builder.summary(false).step);
  });
  std::printf("%d step lines (%.1f MB), median of %d\n", lines, sorted.size() / 1e6, repeats);
  std::printf("%-22s %10s %12s %10s\n", "reader", "seconds", "lines/s", "vs json");
  const auto row = [&](const char* name, double seconds) {
    std::printf("%-22s %10.3f %12.0f %9.2fx\n", name, seconds, lines / seconds, seconds / floor);
  };
  row("json only", floor);
  row("EventStreamReader", typed);
  row("RunHistoryReader", history);
  row("RunSummaryBuilder", summary);
  row("RunSummaryBuilder*", summary_all);
  return sink == 0 ? 1 : 0;
}
