// `streetgan tensorboard RUN... [--out DIR] [--max-image-mib N]`: TensorBoard event files from existing runs'
// events.jsonl (runs from before the `tensorboard` key, remote runs' local copies).
#include "app/cli/command_line.h"
#include "app/cli/command_lines.h"
#include "app/cli/commands.h"

#include "core/runs/event_stream_reader.h"
#include "core/runs/run_directory.h"
#include "core/runs/tensorboard_recorder.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

namespace streetgan::cli {

namespace {

namespace fs = std::filesystem;

bool hasEventFiles(const fs::path& dir) {
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
    if (it->path().filename().string().rfind("events.out.tfevents.", 0) == 0) return true;
  return false;
}

}  // namespace

int runTensorBoard(const Args& args) {
  CommandLine line = tensorBoardCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (line.positionals().empty()) return fail(line.program(), "give at least one run directory", kExitUsage);
  auto max_image_mib = line.integer("--max-image-mib", 4096, 0, 1 << 30);
  if (!max_image_mib) return fail(line.program(), max_image_mib.error(), kExitUsage);
  // Every run is checked before anything is written.
  std::vector<std::pair<fs::path, fs::path>> jobs;
  for (const std::string& run : line.positionals()) {
    const fs::path log = RunDirectory(run).eventsPath();
    std::error_code error;
    if (!fs::exists(fs::symlink_status(log, error)))
      return fail(line.program(), run + " is not a run directory (no " + log.filename().string() + ")", kExitUsage);
    if (!fs::is_regular_file(log, error))
      return fail(line.program(), log.string() + " is not a regular file (a FIFO, device or folder)", kExitUsage);
    const fs::path out = line.has("--out") ? fs::path(line.value("--out")) / fs::path(run).lexically_normal().filename()
                                           : fs::path(RunDirectory(run).tensorboardDir());
    // RUN/tensorboard as a link (a run folder from another host) would send the files anywhere.
    if (!line.has("--out") && fs::is_symlink(fs::symlink_status(out, error)))
      return fail(line.program(), out.string() + " is a symbolic link; give --out DIR", kExitUsage);
    if (hasEventFiles(out))
      return fail(line.program(), out.string() + " already holds TensorBoard event files; give --out DIR", kExitUsage);
    jobs.emplace_back(run, out);
  }
  for (const auto& [run, out] : jobs) {
    TensorBoardRecorder recorder(run.string(), out.string(), [](const std::string& warning) {
      std::fprintf(stderr, "warning: %s\n", warning.c_str());
    });
    // The folders this command makes, removed again (when empty) if it fails.
    std::error_code ignored;
    std::vector<fs::path> made;
    for (fs::path folder = out; !folder.empty() && !fs::exists(fs::symlink_status(folder, ignored)); folder = folder.parent_path())
      made.push_back(folder);
    recorder.setSampleBudget(*max_image_mib << 20);
    const std::string log_path = RunDirectory(run.string()).eventsPath();
    std::ifstream log(log_path, std::ios::binary);
    // The protocol's own reader: lines of any length arrive in chunks, an overlong or malformed one
    // is counted and skipped.
    EventStreamReader reader;
    std::string chunk(1 << 20, '\0');
    long long records = 0;
    Status recorded;
    const auto recordAll = [&](const std::vector<StreamEvent>& events) {
      for (const StreamEvent& event : events) {
        if (!recorded) return;
        recorded = recorder.record(event);
        if (recorded) ++records;
      }
    };
    while (recorded && log) {
      log.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      recordAll(reader.feed(std::string_view(chunk.data(), static_cast<std::size_t>(log.gcount()))));
    }
    if (recorded) recordAll(reader.finish());
    if (!recorded) {
      // A full disk: the part written is no use, so it goes, and the folders made for it.
      if (!recorder.path().empty()) fs::remove(recorder.path(), ignored);
      for (const fs::path& folder : made) fs::remove(folder, ignored);  // only when empty
      return fail(line.program(), recorded.error(), kExitFailure);
    }
    const long long malformed = reader.malformedLines();
    if (recorder.path().empty()) return fail(line.program(), log_path + " has no run_started event", kExitFailure);
    std::string notes;
    if (malformed > 0) notes += std::to_string(malformed) + " malformed lines skipped";
    if (const std::int64_t skipped = recorder.skippedSamples(); skipped > 0)
      notes += (notes.empty() ? "" : ", ") + std::to_string(skipped) + " sample grids skipped";
    std::printf("%s: %lld events -> %s%s\n", run.string().c_str(), records, recorder.path().c_str(),
                notes.empty() ? "" : (" (" + notes + ")").c_str());
  }
  return kExitOk;
}

}  // namespace streetgan::cli
