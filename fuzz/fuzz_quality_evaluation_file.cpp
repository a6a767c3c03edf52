// An evaluations/metrics-*.json file (a run folder may come from anyone): read from a file, then
// written again and read back; the same bytes as `streetgan metrics --json`'s object (no stamp).
#include "core/runs/quality_evaluation_file.h"
#include "fuzz/fuzz_scratch_folder.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const FuzzScratchFolder scratch("fuzz-metrics");
  static const std::string path = scratch.file("metrics-input.json");
  if (!scratch.write("metrics-input.json", data, size)) return 0;
  auto read = streetgan::QualityEvaluationFile::read(path);
  if (read) {
    // What was read writes again, and reads back as the same object.
    const std::string text =
        streetgan::QualityEvaluationFile::toJson(*read).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    auto again = streetgan::QualityEvaluationFile::fromJson(nlohmann::json::parse(text), "again");
    if (!again ||
        streetgan::QualityEvaluationFile::toJson(*again).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) != text)
      std::abort();
  }
  auto json = nlohmann::json::parse(data, data + size, nullptr, false);
  if (!json.is_discarded()) (void)streetgan::QualityEvaluationFile::fromJson(json, "fuzz");
  return 0;
}
