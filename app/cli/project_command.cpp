// streetgan project: places photographs in a generator's latent space (LatentProjector through
// LatentExplorer) and writes their latents as a walk file, so `streetgan walk --walk FILE` walks
// from one photograph to the next.
#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "app/cli/model_command_lines.h"
#include "app/cli/model_options.h"
#include "app/cli/stop_signal.h"
#include "core/data/image_grid.h"
#include "core/latent/latent_explorer.h"
#include "core/latent/latent_walk.h"
#include "core/train/compute_device.h"
#include "core/util/atomic_file.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstdio>
#include <limits>

namespace streetgan::cli {
namespace {

constexpr std::size_t kMaxPhotos = 1000;

torch::Tensor imageTensor(const RgbImage& image) {
  std::vector<std::uint8_t> bytes = image.pixels;
  return torch::from_blob(bytes.data(), {image.height, image.width, image.channels}, torch::kUInt8)
      .permute({2, 0, 1})
      .to(torch::kFloat32)
      .div(127.5)
      .sub(1.0);
}

// An output the run may write: refused before any work when it is empty, one of the inputs,
// something that is not a regular file (a device, a FIFO, a link, a folder: never replaced), or
// in a folder that is missing or not writable.
Status checkOutput(const std::string& option, const std::string& path, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  if (path.empty()) return makeError("option '" + option + "': give a file name");
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (fs::exists(status) && !fs::is_regular_file(status))
    return makeError("option '" + option + "': " + path + " exists and is not a regular file; it is not replaced");
  for (const std::string& input : inputs)
    if (fs::exists(status) && fs::equivalent(path, input, error))
      return makeError("option '" + option + "': " + path + " is one of the inputs; it would be overwritten");
  const fs::path folder = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (!fs::is_directory(folder, error)) return makeError("option '" + option + "': no folder " + folder.string());
  if (::access(folder.c_str(), W_OK) != 0) return makeError("option '" + option + "': cannot write into " + folder.string());
  return {};
}

// --out, and --preview when given: each a file the run may write, and not the same file.
Status checkOutputs(const CommandLine& line, const std::vector<std::string>& inputs) {
  if (Status s = checkOutput("--out", line.value("--out"), inputs); !s) return s;
  if (!line.has("--preview")) return {};
  if (Status s = checkOutput("--preview", line.value("--preview"), inputs); !s) return s;
  std::error_code error;
  if (std::filesystem::weakly_canonical(line.value("--preview"), error) ==
      std::filesystem::weakly_canonical(line.value("--out"), error))
    return makeError("--out and --preview name the same file");
  return {};
}

// The search's settings from --steps, --restarts, --seed, --lr, --ms-ssim-weight and --prior.
Result<ProjectionSettings> projectionSettings(const CommandLine& line) {
  auto steps = line.integer("--steps", 500, 1, 100000);
  if (!steps) return makeError(steps.error());
  auto restarts = line.integer("--restarts", 8, 1, 256);
  if (!restarts) return makeError(restarts.error());
  auto seed = line.integer("--seed", 0, 0, std::numeric_limits<long long>::max());
  if (!seed) return makeError(seed.error());
  auto lr = line.number("--lr", 0.05, 1e-6, 10.0);
  if (!lr) return makeError(lr.error());
  auto ms_ssim_weight = line.number("--ms-ssim-weight", 1.0, 0.0, 1000.0, true);
  if (!ms_ssim_weight) return makeError(ms_ssim_weight.error());
  auto prior = line.number("--prior", 0.01, 0.0, 1000.0, true);
  if (!prior) return makeError(prior.error());
  ProjectionSettings settings;
  settings.steps = static_cast<int>(*steps);
  settings.restarts = static_cast<int>(*restarts);
  settings.seed = static_cast<std::uint64_t>(*seed);
  settings.learning_rate = *lr;
  settings.ms_ssim_weight = *ms_ssim_weight;
  settings.prior_weight = *prior;
  return settings;
}

}  // namespace

int runProject(const Args& args) {
  const ModelOptionsUse use = projectModelUse();
  CommandLine line = projectCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  const std::string program = line.program();
  if (Status given = checkpointGiven(line); !given) return fail(program, given.error(), kExitUsage);
  if (!line.has("--out")) return fail(program, "missing --out FILE.json", kExitUsage);
  const std::vector<std::string>& photos = line.positionals();
  if (photos.empty()) return fail(program, "no photograph given (PHOTO...)", kExitUsage);
  if (photos.size() > kMaxPhotos)
    return fail(program, "at most " + std::to_string(kMaxPhotos) + " photographs at a time, got " + std::to_string(photos.size()),
                kExitUsage);
  auto settings = projectionSettings(line);
  if (!settings) return fail(program, settings.error(), kExitUsage);
  auto model = modelOptionsFrom(line, use);
  if (!model) return fail(program, model.error(), kExitUsage);
  std::vector<std::string> inputs = photos;
  inputs.push_back(model->checkpoint);
  if (Status s = checkOutputs(line, inputs); !s) return fail(program, s.error(), kExitUsage);

  setComputeThreads(model->threads);
  auto explorer = LatentExplorer::open(model->checkpoint, model->device.str(), model->generator);
  if (!explorer) return fail(program, explorer.error(), kExitFailure);
  (*explorer)->setBatchStatistics(line.has("--train-mode"));
  // Every photograph is read before the first is projected: a bad file costs no minutes.
  for (const std::string& photo : photos)
    if (auto read = (*explorer)->photoAtModelSize(photo); !read) return fail(program, read.error(), kExitFailure);

  const std::atomic<bool>& stop = installStopHandlers();
  const bool terminal = isatty(STDERR_FILENO) != 0;
  const auto started = std::chrono::steady_clock::now();
  LatentWalk walk;
  nlohmann::json records = nlohmann::json::array();
  std::vector<torch::Tensor> preview;
  for (std::size_t i = 0; i < photos.size(); ++i) {
    const auto progress = [&](const ProjectionUpdate& u) {
      if (terminal || u.step % 100 == 0 || u.step == u.steps)
        std::fprintf(stderr, terminal ? "\rphotograph %zu/%zu: step %d/%d, loss %.4f " : "photograph %zu/%zu: step %d/%d, loss %.4f\n",
                     i + 1, photos.size(), u.step, u.steps, u.loss);
      return !stop.load();
    };
    auto projected = (*explorer)->projectPhoto(photos[i], *settings, progress, [&] { return stop.load(); });
    if (terminal) std::fputc('\n', stderr);
    if (stop.load()) return fail(program, "stopped; nothing was written", kExitFailure);
    if (!projected) return fail(program, projected.error(), kExitFailure);
    std::fprintf(stderr, "%s: loss %.4f, pixel RMSE %.2f (of 255), MS-SSIM %.4f (start %d)\n", photos[i].c_str(), projected->loss,
                 projected->pixel_rmse, projected->ms_ssim, projected->restart);
    torch::Tensor latent = torch::from_blob(projected->latent.data(), {static_cast<std::int64_t>(projected->latent.size())},
                                            torch::kFloat32).clone();
    walk.keyframes.push_back({latent, std::nullopt});
    records.push_back({{"photo", photos[i]}, {"loss", projected->loss}, {"pixel_rmse", projected->pixel_rmse},
                       {"ms_ssim", projected->ms_ssim}, {"restart", projected->restart}});
    if (line.has("--preview")) {
      preview.push_back(imageTensor(projected->photo));
      preview.push_back(imageTensor(projected->reconstruction));
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  nlohmann::json out = walk.toJson();
  for (std::size_t i = 0; i < records.size(); ++i) out["keyframes"][i].update(records[i]);
  out["projection"] = {{"checkpoint", model->checkpoint},
                       {"step", (*explorer)->step()},
                       {"generator", (*explorer)->generatorName()},
                       {"steps", settings->steps},
                       {"restarts", settings->restarts},
                       {"seed", settings->seed},
                       {"learning_rate", settings->learning_rate},
                       {"ms_ssim_weight", settings->ms_ssim_weight},
                       {"prior_weight", settings->prior_weight},
                       {"batch_statistics", line.has("--train-mode")},
                       {"seconds", seconds}};
  // Both files or neither, and a file that was there before stays as it was when neither is.
  // Paths that are not UTF-8 are kept in the JSON with the bad bytes replaced (U+FFFD).
  std::vector<std::pair<std::string, std::string>> files{
      {line.value("--out"), out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"}};
  if (line.has("--preview")) {
    auto png = encodePng(makeImageGrid(torch::stack(preview), 2));
    if (!png) return fail(program, line.value("--preview") + ": " + png.error() + "; nothing was written", kExitFailure);
    files.emplace_back(line.value("--preview"), std::move(*png));
  }
  if (Status written = writeFilesAtomically(files); !written)
    return fail(program, written.error() + "; nothing was written", kExitFailure);
  if (photos.size() == 1)
    std::fprintf(stderr, "note: a walk needs at least two keyframes; project two or more photographs to walk between them\n");
  std::fprintf(stderr, "wrote %zu latent%s (BatchNorm: %s statistics) to %s in %.1f s\n", photos.size(),
               photos.size() == 1 ? "" : "s", line.has("--train-mode") ? "batch" : "running", line.value("--out").c_str(), seconds);
  return kExitOk;
}

}  // namespace streetgan::cli
