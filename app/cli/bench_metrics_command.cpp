// `streetgan bench metrics`: the quality metric suite and the exact nearest-neighbour search
// timed on inputs bench/bench_metrics.py wrote (raw float32 files), so that the numpy/scipy
// reference runs on the very same numbers beside it.
#include "app/cli/command_line.h"
#include "app/cli/bench_command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/model_options.h"
#include "core/eval/nearest_neighbour_search.h"
#include "core/eval/quality_suite.h"
#include "core/train/compute_device.h"
#include "core/util/regular_file.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstring>

namespace streetgan::cli {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

// <dir>/<name>.f32, float32 little-endian in C order, of `shape`; its size must match.
Result<torch::Tensor> readRaw(const std::string& dir, const std::string& name, const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (std::int64_t size : shape) {
    if (size <= 0 || size > (std::int64_t{1} << 31) || count > (std::int64_t{1} << 40) / size)
      return makeError(dir + "/" + name + ".f32: shape out of range");
    count *= size;
  }
  auto bytes = RegularFile::readAll(dir + "/" + name + ".f32", count * 4 + 1);
  if (!bytes) return makeError(bytes.error());
  if (static_cast<std::int64_t>(bytes->size()) != count * 4)
    return makeError(dir + "/" + name + ".f32: " + std::to_string(bytes->size()) + " bytes, expected " +
                     std::to_string(count * 4));
  torch::Tensor tensor = torch::empty(shape, torch::kFloat32);
  std::memcpy(tensor.data_ptr<float>(), bytes->data(), bytes->size());
  return tensor;
}

Result<std::vector<std::int64_t>> shapeOf(const json& meta, const char* key) {
  if (!meta.contains(key) || !meta[key].is_array()) return makeError(std::string("meta.json: no shape \"") + key + "\"");
  std::vector<std::int64_t> shape;
  for (const json& size : meta[key]) {
    if (!size.is_number_integer()) return makeError(std::string("meta.json: \"") + key + "\" must list integers");
    shape.push_back(size.get<std::int64_t>());
  }
  return shape;
}

}  // namespace

int runBenchMetrics(const Args& args) {
  CommandLine line = benchMetricsCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (!line.has("--inputs")) return fail(line.program(), "give --inputs DIR", kExitUsage);
  auto threads = threadsOption(line);
  if (!threads) return fail(line.program(), threads.error(), kExitUsage);
  setComputeThreads(static_cast<int>(*threads));
  const std::string dir = line.value("--inputs");
  auto meta_text = RegularFile::readAll(dir + "/meta.json", 1 << 16);
  if (!meta_text) return fail(line.program(), meta_text.error(), kExitFailure);
  json meta;
  try {
    meta = json::parse(*meta_text);
  } catch (const json::exception& e) {
    return fail(line.program(), dir + "/meta.json: not valid JSON (" + e.what() + ")", kExitFailure);
  }
  if (!meta.is_object()) return fail(line.program(), dir + "/meta.json: not a JSON object", kExitFailure);
  json out = json::object();
  if (meta.contains("samples")) {
    auto samples_shape = shapeOf(meta, "samples"), train_shape = shapeOf(meta, "train");
    if (!samples_shape || !train_shape)
      return fail(line.program(), samples_shape ? train_shape.error() : samples_shape.error(), kExitFailure);
    auto samples = readRaw(dir, "samples", *samples_shape), train = readRaw(dir, "train", *train_shape);
    if (!samples || !train) return fail(line.program(), samples ? train.error() : samples.error(), kExitFailure);
    QualitySuiteOptions options;
    const auto start = Clock::now();
    auto evaluation = QualitySuite::evaluate(*samples, *train, options);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!evaluation) return fail(line.program(), evaluation.error(), kExitFailure);
    out["suite_seconds"] = seconds;
    out["seconds"] = evaluation->seconds;
    out["metrics"] = evaluation->metrics;
  }
  if (meta.contains("nn_queries")) {
    auto queries_shape = shapeOf(meta, "nn_queries"), reference_shape = shapeOf(meta, "nn_reference");
    if (!queries_shape || !reference_shape)
      return fail(line.program(), queries_shape ? reference_shape.error() : queries_shape.error(), kExitFailure);
    auto queries = readRaw(dir, "nn_queries", *queries_shape), reference = readRaw(dir, "nn_reference", *reference_shape);
    if (!queries || !reference) return fail(line.program(), queries ? reference.error() : queries.error(), kExitFailure);
    const auto start = Clock::now();
    auto found = NearestNeighbourSearch::search(*queries, *reference, 1);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!found) return fail(line.program(), found.error(), kExitFailure);
    out["nn_seconds"] = seconds;
    out["nn_first_indices"] = std::vector<std::int64_t>(found->indices.data_ptr<std::int64_t>(),
                                                        found->indices.data_ptr<std::int64_t>() +
                                                            std::min<std::int64_t>(found->indices.size(0), 20));
  }
  if (out.empty())
    return fail(line.program(), dir + "/meta.json: nothing to time (it names neither \"samples\" nor \"nn_queries\")",
                kExitFailure);
  if (line.has("--json")) std::printf("%s\n", out.dump().c_str());
  else std::printf("%s\n", out.dump(2).c_str());
  return kExitOk;
}

}  // namespace streetgan::cli
