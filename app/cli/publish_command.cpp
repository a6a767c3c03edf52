// `streetgan publish --run R --out SITE`: a static page that generates scenes in the browser
// (app/serve/site_publisher.h), and with --preview that page served on loopback.
#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "app/cli/model_command_lines.h"
#include "app/cli/model_options.h"
#include "app/cli/stop_signal.h"
#include "app/serve/site_publisher.h"
#include "app/serve/site_server.h"

#include "core/runs/checkpoint_reference.h"
#include "core/runs/run_directory.h"

#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <system_error>

#include <sys/stat.h>

#ifndef STREETGAN_SITE_FROM_ENGINE
#error "app/cli/CMakeLists.txt defines STREETGAN_SITE_FROM_ENGINE"
#endif

namespace streetgan::cli {
namespace fs = std::filesystem;
namespace {

// The page's files: share/streetgan/site, found from the engine's own folder (a build folder
// and an installed tree have the same layout around it).
std::string siteAssets() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) return STREETGAN_SITE_FROM_ENGINE;
  return (self.parent_path() / STREETGAN_SITE_FROM_ENGINE).lexically_normal().string();
}

// The checkpoint and the run its directions are read from: --run's newest checkpoint, or the run
// the --checkpoint file belongs to (none when it is kept elsewhere).
Status chooseModel(const CommandLine& line, PublishOptions& options) {
  if (line.has("--checkpoint") == line.has("--run")) return makeError("give either --run DIR or --checkpoint FILE");
  if (line.has("--run")) {
    auto resolved = resolveCheckpointReference(line.value("--run"));
    if (!resolved) return makeError("--run: " + resolved.error());
    options.checkpoint = resolved->path;
  } else {
    options.checkpoint = line.value("--checkpoint");
  }
  if (const auto run = RunDirectory::ofCheckpoint(options.checkpoint)) options.run = run->path();
  return {};
}

Result<PublishOptions> publishOptions(const CommandLine& line) {
  PublishOptions options;
  if (Status model = chooseModel(line, options); !model) return makeError(model.error());
  if (!line.has("--out")) return makeError("missing --out SITE (the folder to write)");
  options.out = line.value("--out");
  if (RunDirectory::owning(options.out + "/" + SiteFolder::kManifest))
    return makeError("--out: " + options.out + " is inside a run's own folders; choose a folder of your own");
  options.title = line.value("--title", options.title);
  if (line.has("--directions")) {
    options.directions.emplace();
    if (!line.value("--directions").empty()) *options.directions = splitCommaList(line.value("--directions"));
  }
  options.walk = line.value("--walk");
  auto generator = generatorOption(line);
  if (!generator) return makeError(generator.error());
  options.generator = *generator;
  auto scenes = line.integer("--scenes", options.scenes, 1, PublishOptions::kMaxScenes);
  auto seed = line.integer("--seed", 0, 0, std::numeric_limits<long long>::max());
  auto fps = line.integer("--fps", options.fps, 1, PublishOptions::kMaxFps);
  auto frames = line.integer("--frames-per-key", options.frames_per_key, 2, PublishOptions::kMaxFramesPerKey);
  for (const auto* checked : {&scenes, &seed, &fps, &frames})
    if (!*checked) return makeError(checked->error());
  options.scenes = static_cast<int>(*scenes);
  options.seed = static_cast<std::uint64_t>(*seed);
  options.fps = static_cast<int>(*fps);
  options.frames_per_key = static_cast<int>(*frames);
  options.assets = siteAssets();
  if (Status valid = checkPublishOptions(options); !valid) return makeError(valid.error());
  if (Status target = SiteFolder::checkTarget(options.out); !target) return makeError("--out: " + target.error());
  return options;
}

// With --preview the server is bound before anything is written: a bad or busy port leaves no page.
Result<std::unique_ptr<SiteServer>> previewServer(const CommandLine& line) {
  auto port = line.integer("--port", 8000, 0, 65535);
  if (!port) return makeError(port.error(), ErrorKind::Input);
  auto server = std::make_unique<SiteServer>();
  if (Status started = server->start(); !started) return makeError(started.error(), ErrorKind::Machine);
  if (auto bound = server->bind(static_cast<int>(*port)); !bound) return makeError(bound.error(), ErrorKind::Machine);
  return server;
}

int preview(const CommandLine& line, SiteServer& server, const PublishReport& report, const std::atomic<bool>& stop) {
  const Status loaded = report.files.empty() ? server.loadFolder(report.out) : server.load(report.out, report.files);
  if (!loaded) return fail(line.program(), loaded.error(), kExitFailure);
  std::printf("previewing %s on http://127.0.0.1:%d/ (Ctrl+C stops)\n", report.out.c_str(), server.port());
  std::fflush(stdout);
  if (!server.listen(&stop)) return fail(line.program(), "the server stopped listening", kExitFailure);
  std::fprintf(stderr, "streetgan publish: stopped\n");
  return kExitOk;
}

// `publish --out SITE --preview` alone: an earlier publish served as it is.
int previewEarlier(const CommandLine& line, const std::atomic<bool>& stop) {
  for (const char* option : {"--title", "--directions", "--walk", "--generator", "--scenes", "--seed", "--fps", "--frames-per-key"})
    if (line.has(option)) return fail(line.program(), std::string(option) + " goes with --run or --checkpoint", kExitUsage);
  const std::string out = line.value("--out");
  struct stat status {};
  if (out.empty() || ::lstat(out.c_str(), &status) != 0)
    return fail(line.program(), "--out: " + (out.empty() ? std::string("give the folder to preview") : out + ": no such folder"), kExitUsage);
  if (Status earlier = SiteFolder::checkTarget(out); !earlier) return fail(line.program(), "--out: " + earlier.error(), kExitUsage);
  auto server = previewServer(line);
  if (!server) return fail(line.program(), server.error(), server.errorKind() == ErrorKind::Input ? kExitUsage : kExitFailure);
  PublishReport folder;
  folder.out = out;
  return preview(line, **server, folder, stop);
}

}  // namespace

int runPublish(const Args& args) {
  CommandLine line = publishCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (line.has("--port") && !line.has("--preview")) return fail(line.program(), "--port goes with --preview", kExitUsage);
  if (line.has("--preview") && !line.has("--run") && !line.has("--checkpoint")) return previewEarlier(line, installStopHandlers());
  auto options = publishOptions(line);
  if (!options) return fail(line.program(), options.error(), kExitUsage);
  std::unique_ptr<SiteServer> server;
  if (line.has("--preview")) {
    auto made = previewServer(line);
    if (!made) return fail(line.program(), made.error(), made.errorKind() == ErrorKind::Input ? kExitUsage : kExitFailure);
    server = std::move(*made);
  }
  const auto& stop = installStopHandlers();
  auto report = publishSite(*options, &stop);
  if (!report) return fail(line.program(), report.error(), report.errorKind() == ErrorKind::Input ? kExitUsage : kExitFailure);
  std::printf("wrote the page (step %lld, generator %s, %d directions, %lld walk frames) to %s: %zu files, %lld bytes\n",
              static_cast<long long>(report->step), report->generator.c_str(), report->directions,
              static_cast<long long>(report->walk_frames), report->out.c_str(), report->files.size(),
              static_cast<long long>(report->bytes));
  std::fflush(stdout);
  if (!server) return kExitOk;
  return preview(line, *server, *report, stop);
}

}  // namespace streetgan::cli
