// parseProgressLine on what a long command's stderr may hold: the whole input as one line, then
// each of its lines, as the studio's jobs split stderr. Every line that parses must survive the
// writer: formatted again, it parses back to the same task and counts (and the same detail when
// the writer did not have to cut it), within the line's length limit.
#include "core/util/progress_line.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void check(std::string_view text) {
  const auto line = streetgan::parseProgressLine(text);
  if (!line) return;
  const std::string again = streetgan::formatProgressLine(*line);
  const auto reparsed = streetgan::parseProgressLine(again);
  if (again.size() > streetgan::kMaxProgressLineBytes || !reparsed || reparsed->task != line->task ||
      reparsed->done != line->done || reparsed->total != line->total)
    std::abort();
  if (line->detail.size() <= streetgan::kMaxProgressDetailBytes && reparsed->detail != line->detail) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check(input);
  for (std::size_t start = 0; start < input.size();) {
    const std::size_t end = input.find('\n', start);
    check(input.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return 0;
}
