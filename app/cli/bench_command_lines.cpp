#include "app/cli/bench_command_lines.h"

#include "core/config/preset_names.h"

#include <string>
#include <vector>

namespace streetgan::cli {

namespace {

// bench train's options: the preset and the timing, the model options (the fastest device by
// default; --threads first, as the bench commands list it), then the data for the real rate.
std::vector<OptionSpec> benchTrainOptionSpecs(const ModelOptionsUse& use) {
  std::vector<OptionSpec> specs = {{"--preset", "NAME", presetNameList(" or ") + " (default naive-64)"},
                                   {"-t", "JSON", "training and recipe keys on top of the preset, as train's -t "
                                                  "(the step of a recipe: '{\"loss\":\"hinge\"}')"},
                                   {"--batch", "B", "batch size (default 64)"},
                                   {"--steps", "N", "timed steps (default 20)"},
                                   {"--warmup", "N", "untimed steps first (default 3)"}};
  for (const auto& spec : deviceOptionSpecs(use)) specs.push_back(spec);
  specs.insert(specs.end(),
               {{"--precision", "P", "fp32, fp16 or bf16 (default fp32)"},
                {"--cuda-graphs", "on|off", "time the step recorded as a CUDA graph and replayed (the cuda_graphs key; "
                                            "at least 4 untimed steps then; default off)"},
                {"--data", "CACHE", "also time real batches from this image cache (streetgan cache build)"},
                {"--dataroot", "DIR", "the data folder the cache was built from (needed with --data)"},
                {"--workers", "N", "data loader threads with --data (0 = automatic; default 0)"},
                {"--json", "", "print one JSON object"}});
  return specs;
}

}  // namespace

ModelOptionsUse benchTrainModelUse() {
  ModelOptionsUse use;
  use.device_default = "auto";
  use.threads_first = true;
  return use;
}

CommandLine benchTrainCommandLine() {
  const ModelOptionsUse use = benchTrainModelUse();
  return CommandLine("bench train", "--preset NAME [--batch B --steps N --data CACHE --dataroot DIR ...]",
                     "Times the training step (D on real and fake, then G) on synthetic tensors\n"
                     "already on the device, and prints images per second. With --data it also\n"
                     "trains on real batches from an image cache through the whole loader (worker\n"
                     "threads, uint8 batches, the copy and the noise on the device) and prints that\n"
                     "rate as a share of the synthetic one. bench/bench_train.py runs the same step\n"
                     "in PyTorch beside it and prints the ratios.",
                     benchTrainOptionSpecs(use));
}

CommandLine benchDataCommandLine() {
  auto specs = configOptionSpecs();
  specs.insert(specs.begin(),
               {{"--dataroot", "DIR", "folder of images (required)"},
                {"--img-size", "S", "output size (default 64)"},
                {"--batch", "B", "batch size (default 64)"},
                {"--seconds", "S", "measuring time (default 10)"},
                {"--decode-only", "R", "time decoding alone at DCT reduction R (1, 2, 4 or 8)"},
                {"--json", "", "print one JSON object"}});
  for (const auto& spec : dataLoaderOptionSpecs()) specs.push_back(spec);
  return CommandLine("bench data", "--dataroot DIR [--img-size 64 --workers N --cache FILE --seconds S]",
                     "Measures the data loader alone: batches from the files (or the cache) through\n"
                     "the training pipeline on worker threads, for a fixed time. The last line is\n"
                     "the rate in images per second. bench/bench_data.py runs the reference beside it.",
                     specs);
}

CommandLine benchMetricsCommandLine() {
  std::vector<OptionSpec> specs = {
      {"--inputs", "DIR", "the folder bench/bench_metrics.py wrote (meta.json and *.f32)"},
      {"--threads", "N", "CPU threads (0 = all cores; default 0)"},
      {"--json", "", "print one JSON object"}};
  return CommandLine("bench metrics", "--inputs DIR [--threads N] [--json]",
                     "Times the quality metric suite (samples against training images) and the\n"
                     "exact nearest-neighbour search on the inputs bench/bench_metrics.py wrote,\n"
                     "which runs the numpy/scipy reference on the same numbers and prints the ratios.",
                     specs);
}

ModelOptionsUse benchAllReduceModelUse() {
  // A rank's device comes from --device and its place in the job (rankDeviceSpec).
  ModelOptionsUse use;
  use.device_help = "cpu, cuda or cuda:N; a rank uses cuda:LOCAL_RANK for cuda (default cpu)";
  use.threads_first = true;
  return use;
}

CommandLine benchAllReduceCommandLine() {
  const ModelOptionsUse use = benchAllReduceModelUse();
  std::vector<OptionSpec> specs = {{"--preset", "NAME", presetNameList(" or ") + " (default naive-64)"},
                                   {"--batch", "B", "batch size of each rank (default 64)"},
                                   {"--repeats", "N", "timed repeats of each (default 10)"}};
  for (const auto& spec : deviceOptionSpecs(use)) specs.push_back(spec);
  specs.push_back({"--bucket-mb", "MB", "bucket size in MB (default 25)"});
  return CommandLine("bench allreduce", "[options]  (as one rank: RANK, WORLD_SIZE, MASTER_PORT set)",
                     "Times the gradient all-reduce of distributed training on the gradients of\n"
                     "both nets: bucketed (as training does it) beside one flat all-reduce of all\n"
                     "gradients, and both beside the step's compute time alone and the whole step\n"
                     "in the group. Runs as one rank: bench/bench_distributed.py starts the ranks\n"
                     "and prints the medians of several runs.",
                     specs);
}

// The studio's own devices and threads: LatentExplorer opens any device the CLI knows (the CPU by
// default, as the studio), and the thread count stays LibTorch's unless --threads is given.
ModelOptionsUse studioModelUse() {
  ModelOptionsUse use;
  use.device_help = "auto, cpu, cuda, cuda:N or hpu (default cpu, the studio's)";
  use.threads_help = "CPU threads (0 = all cores; default: LibTorch's own, as in the studio)";
  return use;
}

CommandLine benchExploreCommandLine() {
  const ModelOptionsUse use = studioModelUse();
  std::vector<OptionSpec> specs = {checkpointOptionSpec(use),
                                   {"--keys", "N", "keyframes (default 3, 90 frames with the defaults)"},
                                   {"--frames-per-key", "N", "frames from one keyframe to the next (default 30)"},
                                   {"--job", "N", "frames per render call (default 8, the preview's)"},
                                   {"--repeats", "N", "timed renders of the whole walk (default 3)"},
                                   {"--warmup", "N", "untimed jobs first (default 1)"},
                                   {"--target", "FPS", "frames per second to compare with (default 30)"},
                                   {"--page", "N", "time the Directions sliders instead: each frame renders a page of N samples "
                                                   "(the Samples page has 16) moved along a direction"}};
  for (const auto& spec : deviceOptionSpecs(use)) specs.push_back(spec);
  specs.push_back({"--json", "", "print one JSON object"});
  return CommandLine("bench explore", "--checkpoint FILE [--keys N --frames-per-key N --job N --repeats N ...]",
                     "Times the studio's Explore preview: a looped walk through --keys seed keyframes\n"
                     "(seeds 1, 2, ...), rendered by LatentExplorer::renderFrames in jobs of --job\n"
                     "frames, one job at a time, as the preview's worker renders it. Prints the\n"
                     "frames per second of each repeat and their median beside the target (the\n"
                     "preview's playback rate, 30 frames/s by default): at or above it, playback\n"
                     "never waits for a frame.",
                     specs);
}

}  // namespace streetgan::cli
