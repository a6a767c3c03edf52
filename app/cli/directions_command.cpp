// `streetgan directions`: semantic directions of a checkpoint's generator (SeFa's closed form or
// GANSpace's principal components), printed as a table and saved into the run; and the saved
// ones listed, renamed, deleted or exported for Python.
#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "app/cli/model_command_lines.h"
#include "app/cli/model_options.h"
#include "app/cli/stop_signal.h"
#include "core/latent/direction_file.h"
#include "core/latent/semantic_directions.h"
#include "core/runs/run_directory.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>

namespace streetgan::cli {
namespace {

// The run a checkpoint belongs to, or --run.
std::string runOf(const CommandLine& line, const std::string& checkpoint) {
  if (line.has("--run")) return line.value("--run");
  const auto run = RunDirectory::ofCheckpoint(checkpoint);
  return run ? run->path() : "";
}

// An option given that the chosen action does not take: its name, or "".
std::string strayOption(const CommandLine& line, const std::vector<OptionSpec>& specs,
                        const std::vector<std::string>& allowed) {
  for (const OptionSpec& spec : specs)
    if (line.has(spec.name) && std::find(allowed.begin(), allowed.end(), spec.name) == allowed.end()) return spec.name;
  return "";
}

// A run folder the management actions read: it must be there.
Status checkRunFolder(const std::string& run) {
  if (run.empty()) return makeError("option '--run': give a run folder");
  std::error_code error;
  if (!std::filesystem::is_directory(run, error)) return makeError(run + ": no such run folder");
  return {};
}

std::vector<float> floats(const torch::Tensor& v) {
  const torch::Tensor f = v.to(torch::kFloat32).contiguous();
  return std::vector<float>(f.data_ptr<float>(), f.data_ptr<float>() + f.numel());
}

// --list, --rename, --delete and --export on a run's saved directions.
int manage(const CommandLine& line, const std::vector<OptionSpec>& specs) {
  const std::string program = line.program(), run = line.value("--run");
  const char* action = line.has("--list") ? "--list" : line.has("--rename") ? "--rename" : line.has("--delete") ? "--delete" : "--export";
  std::vector<std::string> allowed = {"--run", action};
  if (line.has("--rename")) allowed.push_back("--to");
  if (line.has("--export")) allowed.push_back("--out");
  if (const std::string stray = strayOption(line, specs, allowed); !stray.empty())
    return fail(program, stray + " cannot go with " + action, kExitUsage);
  if (!line.positionals().empty())
    return fail(program, "unexpected argument '" + line.positionals().front() + "'", kExitUsage);
  for (const char* named : {"--rename", "--to", "--delete", "--export"})
    if (line.has(named))
      if (Status s = DirectionFile::checkName(line.value(named)); !s)
        return fail(program, std::string("option '") + named + "': " + s.error(), kExitUsage);
  if (Status s = checkRunFolder(run); !s) return fail(program, s.error(), line.value("--run").empty() ? kExitUsage : kExitFailure);
  if (line.has("--list")) {
    const std::vector<std::string> names = DirectionFile::list(run);
    if (names.empty()) std::fprintf(stderr, "%s has no saved directions (%s/directions/*.json)\n", run.c_str(), run.c_str());
    int unreadable = 0;
    for (const std::string& name : names) {
      auto d = DirectionFile::read(DirectionFile::pathIn(run, name));
      if (!d) {
        std::fprintf(stderr, "not read: %s\n", d.error().c_str());
        ++unreadable;
        continue;
      }
      std::printf("%-24s %-20s %s %.6g  nz %zu  step %lld\n", name.c_str(), DirectionFile::kindName(d->kind),
                  DirectionFile::strengthName(d->kind), d->strength, d->vector.size(), static_cast<long long>(d->step));
    }
    return unreadable ? kExitFailure : kExitOk;
  }
  if (line.has("--rename")) {
    if (!line.has("--to")) return fail(program, "--rename OLD needs --to NEW", kExitUsage);
    if (Status s = DirectionFile::rename(run, line.value("--rename"), line.value("--to")); !s)
      return fail(program, s.error(), kExitFailure);
    std::fprintf(stderr, "renamed %s to %s\n", line.value("--rename").c_str(),
                 DirectionFile::pathIn(run, line.value("--to")).c_str());
    return kExitOk;
  }
  if (line.has("--delete")) {
    if (Status s = DirectionFile::remove(run, line.value("--delete")); !s) return fail(program, s.error(), kExitFailure);
    std::fprintf(stderr, "deleted %s\n", DirectionFile::pathIn(run, line.value("--delete")).c_str());
    return kExitOk;
  }
  // --export NAME --out FILE.npy
  if (!line.has("--out") || line.value("--out").empty()) return fail(program, "--export NAME needs --out FILE.npy", kExitUsage);
  auto d = DirectionFile::read(DirectionFile::pathIn(run, line.value("--export")));
  if (!d) return fail(program, d.error(), kExitFailure);
  if (Status s = DirectionFile::writeNpy(line.value("--out"), d->vector); !s) return fail(program, s.error(), kExitFailure);
  std::fprintf(stderr, "wrote %s (%zu float32 values)\n", line.value("--out").c_str(), d->vector.size());
  return kExitOk;
}

// What the command line gets wrong: the message and the exit code.
struct Refusal {
  std::string message;
  int code = kExitUsage;
};

// A search's options, read and checked before the checkpoint is loaded.
struct SearchRequest {
  LatentDirection::Kind kind() const {
    return method == "sefa" ? LatentDirection::Kind::ClosedForm : LatentDirection::Kind::PrincipalComponent;
  }

  std::string method;
  std::string format;
  std::string run;      ///< where --save writes; empty without --save
  long long top = 10;   ///< --top as given (10 or nz, the smaller, when not given)
  long long n = 10000;  ///< pca's latents
  long long seed = 0;   ///< pca's seed
};

std::optional<Refusal> readSearchRequest(const CommandLine& line, SearchRequest& request) {
  if (!line.positionals().empty()) return Refusal{"unexpected argument '" + line.positionals().front() + "'"};
  if (line.has("--to")) return Refusal{"--to goes with --rename"};
  if (Status given = checkpointGiven(line); !given) return Refusal{given.error()};
  request.method = line.value("--method", "sefa");
  if (request.method != "sefa" && request.method != "pca")
    return Refusal{"option '--method': '" + request.method + "' is not allowed; allowed: sefa, pca"};
  if (request.method == "sefa" && (line.has("--n") || line.has("--seed")))
    return Refusal{"--n and --seed go with --method pca (sefa samples nothing)"};
  auto top = line.integer("--top", 10, 1, DirectionFile::kMaxNz);
  if (!top) return Refusal{top.error()};
  auto n = line.integer("--n", 10000, 2, 10000000);
  if (!n) return Refusal{n.error()};
  auto seed = line.integer("--seed", 0, 0, std::numeric_limits<long long>::max());
  if (!seed) return Refusal{seed.error()};
  request.top = *top;
  request.n = *n;
  request.seed = *seed;
  request.format = line.value("--format", "json");
  if (request.format != "json" && request.format != "npy")
    return Refusal{"option '--format': '" + request.format + "' is not allowed; allowed: json, npy"};
  if (line.has("--format") && !line.has("--save")) return Refusal{"--format goes with --save"};
  if (line.has("--out")) return Refusal{"--out goes with --export"};
  if (!line.has("--save")) return std::nullopt;
  if (line.has("--run"))
    if (Status s = checkRunFolder(line.value("--run")); !s)
      return Refusal{s.error(), line.value("--run").empty() ? kExitUsage : kExitFailure};
  if (Status s = DirectionFile::checkName(line.value("--save")); !s) return Refusal{"option '--save': " + s.error()};
  request.run = runOf(line, line.value("--checkpoint"));
  if (request.run.empty())
    return Refusal{line.value("--checkpoint") + " is not in a run's checkpoints/ folder: give --run DIR to save into"};
  return std::nullopt;
}

// The names --save gives `count` directions, each checked and not taken yet: everything is
// checked before anything is computed or written.
std::optional<Refusal> saveNames(const CommandLine& line, const std::string& run, long long count,
                                 std::vector<std::string>& names) {
  for (long long i = 1; line.has("--save") && i <= count; ++i) {
    names.push_back(count == 1 ? line.value("--save") : line.value("--save") + "-" + std::to_string(i));
    if (Status s = DirectionFile::checkName(names.back()); !s)
      return Refusal{"option '--save': with --top " + std::to_string(count) + " the last name is " + names.back() +
                     ": " + s.error()};
    std::error_code error;
    if (std::filesystem::exists(std::filesystem::symlink_status(DirectionFile::pathIn(run, names.back()), error)))
      return Refusal{DirectionFile::pathIn(run, names.back()) +
                     " already exists: choose another name, or delete it first (--run DIR --delete NAME)"};
  }
  return std::nullopt;
}

Result<std::vector<FoundDirection>> findDirections(const SearchRequest& request, GeneratorImpl& generator,
                                                   long long count, const std::atomic<bool>& stop) {
  if (request.method == "sefa")
    return SemanticDirections::closedForm(SemanticDirections::firstWeight(generator), static_cast<int>(count));
  PrincipalDirectionsOptions options;
  options.samples = request.n;
  options.seed = static_cast<std::uint64_t>(request.seed);
  options.progress = [&](double) { return !stop.load(); };
  return SemanticDirections::principal(generator, static_cast<int>(count), options);
}

// The found directions as a table, or as JSON with their vectors (--json).
void printDirections(const CommandLine& line, const SearchRequest& request, const std::string& checkpoint,
                     CheckpointGenerator& loaded, const std::vector<FoundDirection>& found, double seconds) {
  const auto kind = request.kind();
  double total = 0;  // sefa: shares of the eigenvalues' sum over all nz
  if (request.method == "sefa") {
    const torch::Tensor a = SemanticDirections::firstWeight(*loaded.generator).flatten(1);
    total = a.square().sum().item<double>();  // the trace of AᵀA
  }
  nlohmann::json out = {{"checkpoint", checkpoint}, {"step", loaded.progress.step},
                        {"generator", loaded.generatorName()}, {"method", request.method}, {"nz", loaded.config.nz},
                        {"seconds", seconds},       {"directions", nlohmann::json::array()}};
  if (!line.has("--json"))
    std::printf("# %s directions of %s (step %lld, generator %s, nz %lld) in %.3f s\n%-5s %-14s %s\n",
                DirectionFile::kindName(kind), checkpoint.c_str(), static_cast<long long>(loaded.progress.step),
                loaded.generatorName(),
                static_cast<long long>(loaded.config.nz), seconds, "rank", DirectionFile::strengthName(kind),
                request.method == "sefa" ? "share of the sum" : "");
  for (std::size_t i = 0; i < found.size(); ++i) {
    const FoundDirection& d = found[i];
    if (line.has("--json")) {
      out["directions"].push_back({{"rank", i + 1}, {DirectionFile::strengthName(kind), d.strength}, {"vector", floats(d.vector)}});
    } else if (request.method == "sefa") {
      std::printf("%-5zu %-14.6g %.4f\n", i + 1, d.strength, total > 0 ? d.strength / total : 0.0);
    } else {
      std::printf("%-5zu %-14.6g\n", i + 1, d.strength);
    }
  }
  if (line.has("--json")) std::printf("%s\n", out.dump().c_str());
}

// Writes the directions into the run: the set whole, or none of it.
int saveDirections(const std::string& program, const SearchRequest& request, const std::vector<std::string>& names,
                   const std::string& checkpoint, const CheckpointGenerator& loaded,
                   const std::vector<FoundDirection>& found) {
  std::vector<std::string> written;  // removed again when one fails
  const auto undo = [&] {
    std::error_code error;
    for (const std::string& file : written) std::filesystem::remove(file, error);
  };
  for (std::size_t i = 0; i < found.size(); ++i) {
    LatentDirection d;
    d.name = names[i];
    d.kind = request.kind();
    d.checkpoint = checkpoint;
    d.step = loaded.progress.step;
    d.vector = floats(found[i].vector);
    d.rank = static_cast<int>(i + 1);
    d.strength = found[i].strength;
    const std::string path = DirectionFile::pathIn(request.run, d.name);
    if (Status s = DirectionFile::write(path, d); !s) {
      undo();
      return fail(program, s.error() + "; nothing was saved", kExitFailure);
    }
    written.push_back(path);
    if (request.format == "npy") {
      const std::string npy = RunDirectory(request.run).directionsDir() + "/" + d.name + ".npy";
      if (Status s = DirectionFile::writeNpy(npy, d.vector); !s) {
        undo();
        return fail(program, s.error() + "; nothing was saved", kExitFailure);
      }
      written.push_back(npy);
    }
  }
  for (const std::string& file : written) std::fprintf(stderr, "saved %s\n", file.c_str());
  return kExitOk;
}

}  // namespace

int runDirections(const Args& args) {
  const ModelOptionsUse use = directionsModelUse();
  CommandLine line = directionsCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  const std::string program = line.program();
  const int actions = line.has("--list") + line.has("--rename") + line.has("--delete") + line.has("--export");
  if (actions > 1) return fail(program, "give one of --list, --rename, --delete and --export", kExitUsage);
  if (actions == 1) {
    if (!line.has("--run")) return fail(program, "--list, --rename, --delete and --export need --run DIR", kExitUsage);
    if (line.has("--checkpoint"))
      return fail(program,
                  "--checkpoint finds new directions; it cannot go with --list, --rename, --delete or --export",
                  kExitUsage);
    return manage(line, line.options());
  }
  SearchRequest request;
  if (auto refused = readSearchRequest(line, request)) return fail(program, refused->message, refused->code);
  auto model = modelOptionsFrom(line, use);
  if (!model) return fail(program, model.error(), kExitUsage);

  setComputeThreads(model->threads);
  auto loaded = loadCheckpointGenerator(model->checkpoint, torch::Device(torch::kCPU), model->generator);
  if (!loaded) return fail(program, loaded.error(), kExitFailure);
  const auto nz = static_cast<long long>(loaded->config.nz);
  const long long count = line.has("--top") ? request.top : std::min(10LL, nz);
  if (count > nz)
    return fail(program,
                "option '--top': the model's latent has " + std::to_string(nz) + " values, so at most " +
                    std::to_string(nz) + " directions; got " + std::to_string(count),
                kExitUsage);
  if (request.method == "pca" && request.n <= nz)
    return fail(program,
                "option '--n': principal components need more latents than the latent size (" + std::to_string(nz) +
                    "), got " + std::to_string(request.n),
                kExitUsage);
  std::vector<std::string> names;
  if (auto refused = saveNames(line, request.run, count, names)) return fail(program, refused->message, refused->code);
  const std::atomic<bool>& stop = installStopHandlers();  // a stop ends the search, never a save halfway
  const auto started = std::chrono::steady_clock::now();
  auto found = findDirections(request, *loaded->generator, count, stop);
  if (stop.load()) return fail(program, "stopped; nothing was saved", kExitFailure);
  if (!found) {
    std::string message = found.error();  // "directions: …": the program's name says that already
    if (message.rfind("directions: ", 0) == 0) message = message.substr(12);
    return fail(program, model->checkpoint + ": " + message, kExitFailure);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  printDirections(line, request, model->checkpoint, *loaded, *found, seconds);
  if (!line.has("--save")) return kExitOk;
  return saveDirections(program, request, names, model->checkpoint, *loaded, *found);
}

}  // namespace streetgan::cli
