// An evaluations/parzen-*.json file (a run folder may come from anyone): read from a file, then
// written again and read back; the same bytes as `streetgan parzen --json`'s object (no stamp).
#include "core/runs/parzen_evaluation_file.h"
#include "fuzz/fuzz_scratch_folder.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const FuzzScratchFolder scratch("fuzz-parzen");
  static const std::string path = scratch.file("parzen-input.json");
  if (!scratch.write("parzen-input.json", data, size)) return 0;
  auto read = streetgan::ParzenEvaluationFile::read(path);
  if (read) {
    (void)read->best();
    // What was read writes again, and reads back as the same file.
    const std::string text = streetgan::ParzenEvaluationFile::fileText(*read);
    auto again = streetgan::ParzenEvaluationFile::fromJson(nlohmann::json::parse(text), "again");
    if (!again || streetgan::ParzenEvaluationFile::fileText(*again) != text) std::abort();
  }
  auto json = nlohmann::json::parse(data, data + size, nullptr, false);
  if (!json.is_discarded()) (void)streetgan::ParzenEvaluationFile::fromJson(json, "fuzz");
  return 0;
}
