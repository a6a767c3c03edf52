// `streetgan serve`: generated images over HTTP, as the original tool's Flask app served them.
#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "app/cli/model_command_lines.h"
#include "app/cli/model_options.h"
#include "app/cli/stop_signal.h"
#include "app/serve/gallery_renderer.h"
#include "app/serve/gallery_server.h"

#include <algorithm>
#include <atomic>
#include <cstdio>

#include <sys/resource.h>

namespace streetgan::cli {
namespace {

// More connection threads than this only cost memory: they answer whole requests, never wait on
// a client (ConnectionGate), and renders are bounded by --workers and --queue anyway.
constexpr long long kMaxConnections = 1024;

// Connections held open at once: what the limit on open files (ulimit -n) leaves beside the
// checkpoints, encoders and libraries, and at most 1024.
int openConnectionLimit() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0) return 256;
  const long long soft = files.rlim_cur == RLIM_INFINITY ? 1 << 20 : static_cast<long long>(files.rlim_cur);
  return static_cast<int>(std::clamp<long long>(soft - 128, 16, 1024));
}

}  // namespace

int runServe(const Args& args) {
  CommandLine line = serveCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (line.has("--checkpoint") == line.has("--run"))
    return fail(line.program(), "give either --checkpoint FILE or --run DIR", kExitUsage);
  auto port = line.integer("--port", 8080, 0, 65535);
  auto workers = line.integer("--workers", 2, 1, 64);
  auto queue = line.integer("--queue", 8, 1, 4096);
  auto connections = line.integer("--connections", 64, 4, kMaxConnections);
  auto max_n = line.integer("--max-n", 256, 1, 4096);
  auto max_frames = line.integer("--max-frames", 600, 2, 100000);
  auto max_size = line.integer("--max-size", 1024, 8, 8192);
  auto max_pixels = line.integer("--max-pixels", 40000000, 64, 1LL << 40);
  auto read_timeout = line.integer("--read-timeout-ms", 500, 10, 600000);
  auto request_timeout = line.integer("--request-timeout-ms", 5000, 100, 600000);
  for (const auto* checked :
       {&port, &workers, &queue, &connections, &max_n, &max_frames, &max_size, &max_pixels, &read_timeout,
        &request_timeout})
    if (!*checked) return fail(line.program(), checked->error(), kExitUsage);
  const std::string bind = line.value("--bind", "127.0.0.1");
  auto generator = generatorOption(line);
  if (!generator) return fail(line.program(), generator.error(), kExitUsage);

  // The handlers go in before anything slow: a SIGINT or SIGTERM while the model loads (or at any
  // moment before listening) ends the command cleanly, the scratch folder removed, instead of
  // killing it or going unseen. The flag stays set, so listen() returns at once if it came early.
  const auto& stop = installStopHandlers();
  const std::string source =
      line.has("--checkpoint") ? line.value("--checkpoint") : "the newest checkpoint of " + line.value("--run");
  std::fprintf(stderr, "streetgan serve: loading %s\n", source.c_str());
  std::fflush(stderr);

  GalleryRenderer::Options options;
  options.checkpoint = line.value("--checkpoint");
  options.run_dir = line.value("--run");
  options.generator = *generator;
  options.workers = static_cast<int>(*workers);
  options.queue = static_cast<int>(*queue);
  GalleryRenderer renderer(options);
  if (Status opened = renderer.open(); !opened) return fail(line.program(), opened.error(), kExitFailure);
  if (stop.load()) {
    std::fprintf(stderr, "streetgan serve: stopped\n");
    return kExitOk;
  }

  GalleryLimits limits;
  limits.max_n = static_cast<int>(*max_n);
  limits.max_frames = static_cast<int>(*max_frames);
  limits.max_size = static_cast<int>(*max_size);
  limits.max_pixels = *max_pixels;
  limits.connections = static_cast<int>(*connections);
  limits.read_timeout_ms = static_cast<int>(*read_timeout);
  limits.request_timeout_ms = static_cast<int>(std::max(*request_timeout, *read_timeout));
  limits.max_open = openConnectionLimit();
  GalleryServer server(renderer, limits);
  if (Status started = server.start(); !started)
    return fail(line.program(),
                started.error() + "; lower --connections, or raise the limit on processes (ulimit -u) or memory (ulimit -v)",
                kExitFailure);
  auto bound = server.bind(bind, static_cast<int>(*port));
  if (!bound) return fail(line.program(), bound.error(), kExitFailure);
  if (bind != "127.0.0.1" && bind != "localhost" && bind != "::1")
    std::fprintf(stderr, "streetgan serve: warning: listening on %s, so other machines can reach it; the limits above "
                         "bound the work one request can ask for, but put a reverse proxy in front for the public\n",
                 bind.c_str());
  const GalleryModelInfo model = renderer.model();
  std::fprintf(stderr, "streetgan serve: serving %s (step %lld, generator %s) on http://%s:%d/\n",
               model.checkpoint.c_str(), static_cast<long long>(model.step), model.generator.c_str(), bind.find(':') != std::string::npos ? ("[" + bind + "]").c_str() : bind.c_str(),
               *bound);
  std::fflush(stderr);

  const bool listened = server.listen(&stop);
  // Renders waiting in the queue are answered 503 and a walk being made stops at its next batch,
  // so the connections drain in moments rather than after every queued render.
  renderer.cancel();
  if (!listened) return fail(line.program(), "the server stopped listening", kExitFailure);
  std::fprintf(stderr, "streetgan serve: stopped\n");
  return kExitOk;
}

}  // namespace streetgan::cli
