#include "app/cli/command_lines.h"

#include "app/cli/bench_command_lines.h"
#include "app/cli/model_command_lines.h"
#include "core/interop/generator_onnx_export.h"
#include "core/interop/onnx_model_writer.h"

namespace streetgan::cli {
namespace {

// train's options: the run, the config (config_options.h), the data filters and loader, then
// the distributed launcher's.
std::vector<OptionSpec> trainOptionSpecs() {
  auto specs = configOptionSpecs();
  specs.insert(specs.begin(),
               {{"--dataroot", "DIR", "folder of training images (searched recursively)"},
                {"--epochs", "N", "total epochs of the run; a resumed run continues up to N"},
                {"--run-dir", "DIR", "run directory (default: <root>/<name> from the config)"},
                {"--resume", "", "continue the run in --run-dir from its latest checkpoint"}});
  for (const auto& spec : dataFilterOptionSpecs()) specs.push_back(spec);
  for (const auto& spec : dataLoaderOptionSpecs()) specs.push_back(spec);
  specs.push_back({"--precision", "P", "auto, fp32, fp16 (CUDA) or bf16 (default auto)"});
  specs.push_back({"--events", "-", "also print every event as a JSON line on stdout"});
  specs.push_back({"--progress-every", "S", "when stderr is not a terminal (a log file, nohup): a status line every S "
                                            "seconds (default 30); on a terminal one live line is redrawn instead"});
  specs.push_back({"--quiet", "", "print only errors and the final line"});
  specs.push_back({"--sync-batchnorm", "", "with several ranks: BatchNorm statistics of the whole job's batch (SyncBN)"});
  specs.push_back({"--cuda-graphs", "on|off", "record the training step once as a CUDA graph and replay it (one process "
                                           "on one CUDA device; default off; may change on --resume)"});
  specs.push_back({"--nproc", "N", "start N ranks on this host and supervise them (Gloo on the CPU, NCCL on "
                                   "CUDA: rank r trains on cuda:r); batch_size is per rank"});
  specs.push_back({"--nnodes", "N", "hosts in the job, each running --nproc ranks (default 1)"});
  specs.push_back({"--node-rank", "R", "this host's place among them, 0 to N-1 (default 0)"});
  specs.push_back({"--master-addr", "HOST", "the host of rank 0, where the ranks meet (default 127.0.0.1)"});
  specs.push_back({"--master-port", "PORT", "its port (default: a free port with one host, 29500 with several)"});
  specs.push_back({"--job-token", "FILE", "with several hosts: a file holding the job's secret, the same on each host "
                                       "and readable by its owner alone (or set STREETGAN_JOB_TOKEN); one host makes "
                                       "its own"});
  specs.push_back({"--dist-timeout", "S", "seconds a rank waits for the others before the job fails (default 300)"});
  specs.push_back({"--max-restarts", "K", "when a rank fails, restart every rank from the last checkpoint, at most K "
                                          "times (default 0; give every host the same K)"});
  return specs;
}

// Every command line the engine's commands parse with. Each names its command ("train", "bench
// train"): answerWithoutEngine finds one by that name.
using CommandLineMaker = CommandLine (*)();
constexpr CommandLineMaker kCommandLines[] = {
    trainCommandLine,        infoCommandLine,         demoDataCommandLine,  importCommandLine,
    exportCommandLine,       tensorBoardCommandLine,  dataStatsCommandLine, dataPreviewCommandLine,
    cacheBuildCommandLine,   cacheInfoCommandLine,    sampleCommandLine,    walkCommandLine,
    directionsCommandLine,   projectCommandLine,      serveCommandLine,     parzenCommandLine,
    metricsCommandLine,      benchTrainCommandLine,   benchDataCommandLine, benchAllReduceCommandLine,
    benchExploreCommandLine, benchMetricsCommandLine, nearestCommandLine,   publishCommandLine,
};

}  // namespace

CommandLine trainCommandLine() {
  return CommandLine("train", "--dataroot DIR [options]",
                     "Trains the DCGAN. Writes config.json, events.jsonl, checkpoints/ and samples/\n"
                     "to the run directory. SIGINT or SIGTERM finishes the current step, saves a\n"
                     "checkpoint and exits 0; --resume continues from it. Under torchrun\n"
                     "(torchrun --nproc_per_node N --no_python streetgan train ...) each process\n"
                     "is one rank; see docs/distributed.md.",
                     trainOptionSpecs());
}

CommandLine infoCommandLine() {
  auto specs = configOptionSpecs();
  specs.push_back({"--json", "", "print one JSON object"});
  return CommandLine("info", "[--preset NAME | --config FILE | -t JSON] [--json]",
                     "Prints the parameter counts of G and D for a preset or config (default: the\n"
                     "defaults, which equal naive-64), every preset, and the devices this build can use.",
                     specs);
}

CommandLine demoDataCommandLine() {
  return CommandLine("demo-data", "--out DIR [options]",
                     "Renders procedural street scenes as 640x480 JPEGs in the MSLS layout\n"
                     "(train_val/<city>/{database,query}/images, with seq_info.csv, postprocessed.csv\n"
                     "and raw.csv). The same options and seed always give the same files. The defaults\n"
                     "render the demo set of the studio and the README: 4 cities x 10 sequences x 25\n"
                     "frames, 1,000 images.",
                     {{"--out", "DIR", "folder to write (created; must not hold a train_val folder)"},
                      {"--cities", "N", "number of cities, 1 to 8 (default 4)"},
                      {"--sequences", "N", "sequences per city, 1 to 1000 (default 10; the last is a query sequence)"},
                      {"--frames", "N", "frames per sequence, 1 to 1000 (default 25)"},
                      {"--seed", "N", "random seed (default 1)"},
                      {"--progress", "", "machine-readable progress lines on stderr (docs/events.md)"}});
}

CommandLine importCommandLine() {
  return CommandLine("import", "CHECKPOINT.pt --run-dir DIR [options]",
                     "Turns a checkpoint saved by the original PyTorch tool (torch.save of epoch,\n"
                     "G_state_dict and optionally D_state_dict, G_optim, D_optim, losses, img_list,\n"
                     "noise; with or without DistributedDataParallel's module. prefix) into a run\n"
                     "directory: the studio opens it in Explore and Evaluate, and with both nets and\n"
                     "optimizers 'streetgan train --resume --run-dir DIR --dataroot IMAGES' continues\n"
                     "it. The net's size is read from the tensor shapes. No Python is needed, and\n"
                     "nothing in the file can run (docs/interop.md). It is written into a new\n"
                     "staging folder beside DIR and renamed into place: a failure, SIGINT or SIGTERM\n"
                     "leaves nothing behind.",
                     {{"--run-dir", "DIR", "the run to create (must not exist, or be empty)"},
                      {"--batch-size", "N", "the batch size the original run used (default 128, its default)"},
                      {"--dataroot", "DIR", "the images it trained on, stored in the run's config"},
                      {"--progress", "", "machine-readable progress lines on stderr (docs/events.md)"}});
}

CommandLine exportCommandLine() {
  return CommandLine("export", "--checkpoint FILE --out G.pt|G.onnx [--format pytorch|onnx] [options]",
                     "Writes a checkpoint's generator. As PyTorch (the default; G.pt): a state dict\n"
                     "that torch.load and load_state_dict take into the reference nn.Sequential layout\n"
                     "(main.0.weight, ...), and beside it G.json with nz, ngf, nc, img_size, preset,\n"
                     "run and step. As ONNX (--format onnx, or an --out ending in .onnx): one model any\n"
                     "ONNX runtime runs, input z (N, nz) float32, output image (N, nc, H, W) in [-1, 1],\n"
                     "BatchNorm with its running statistics, where it came from in its metadata\n"
                     "(docs/interop.md).",
                     {checkpointOptionSpec(ModelOptionsUse{}),
                      generatorOptionSpec(),
                      {"--out", "FILE", "file to write (PyTorch: the sidecar gets the same name, .json)"},
                      {"--format", "NAME", "pytorch or onnx (default: onnx for an --out ending in .onnx, else pytorch)"},
                      {"--batch", "dynamic|N",
                       "ONNX: the batch, chosen at run time (default) or fixed at N (1 to " +
                           std::to_string(OnnxExportOptions::kMaxBatch) + ")"},
                      {"--opset", "N",
                       "ONNX: the opset, " + std::to_string(OnnxModelWriter::kMinOpset) + " to " +
                           std::to_string(OnnxModelWriter::kMaxOpset) + " (default " +
                           std::to_string(OnnxExportOptions{}.opset) + ")"}});
}

CommandLine tensorBoardCommandLine() {
  return CommandLine("tensorboard", "RUN... [--out DIR] [--max-image-mib N]",
                     "Writes TensorBoard event files from each run's events.jsonl: the original tool's\n"
                     "scalars (G_loss, D_loss, D_X, D_G_z1, D_G_z2), throughput, Parzen and the sample\n"
                     "grids, with images seen as the step (docs/interop.md). Without --out they go to\n"
                     "RUN/tensorboard/, which must not hold event files yet. A sample grid is read only\n"
                     "from inside its run, as a regular PNG file of at most 64 MiB; any other is\n"
                     "skipped with a warning, and so are grids past --max-image-mib in all.",
                     {{"--out", "DIR", "write each run's files to DIR/<run name>/ instead"},
                      {"--max-image-mib", "N", "most MiB of sample grids written for one run (default 4096)"}});
}

CommandLine dataStatsCommandLine() {
  auto specs = dataFilterOptionSpecs();
  specs.insert(specs.begin(), {"--config", "FILE", "take the data keys (filters) from a config file"});
  specs.push_back({"--holdout", "", "count the held-out part instead of the training part"});
  specs.push_back({"--json", "", "print one JSON object"});
  return CommandLine("data stats", "DIR [filters] [--json]",
                     "Counts the images of a data folder after the filters, per city (MSLS) or\n"
                     "top-level folder, with each one's share of the sample.",
                     specs);
}

CommandLine dataPreviewCommandLine() {
  auto specs = configOptionSpecs();
  specs.insert(specs.begin(),
               {{"--n", "N", "number of variants (default 16)"},
                {"--out", "FILE", "PNG file to write the grid to (required)"},
                {"--img-size", "S", "output size: 64 or 128 (default from the config: 64)"},
                {"--shift", "F", "random horizontal shift, fraction of the width (default 0.2)"},
                {"--crop-scale", "F", "center crop of F x img-size pixels (default 4)"},
                {"--noise-std", "F", "Gaussian noise std in [0,1] units (default 0.05)"},
                {"--flip", "", "random horizontal flips"},
                {"--rotate-deg", "F", "random rotation up to F degrees"},
                {"--scale-jitter", "F", "random zoom in [1-F, 1+F]"},
                {"--full-decode", "", "decode JPEGs at full size (no DCT reduction)"}});
  return CommandLine("data preview", "IMAGE --out grid.png [--n 16] [augmentation options]",
                     "Renders augmented variants of one image with the training pipeline, as a grid.",
                     specs);
}

CommandLine cacheBuildCommandLine() {
  auto specs = configOptionSpecs();
  specs.insert(specs.begin(), {{"--dataroot", "DIR", "folder of images to cache (required)"},
                               {"--out", "FILE", "cache file to write (required)"},
                               {"--workers", "N", "decoding threads (0 = one per core; default 0)"},
                               {"--full-decode", "", "store JPEGs at full size (no DCT reduction)"},
                               {"--progress", "",
                                "machine-readable progress lines on stderr, not percentages on stdout"}});
  for (const auto& spec : dataFilterOptionSpecs()) specs.push_back(spec);
  return CommandLine("cache build", "--dataroot DIR --out FILE [config and filter options]",
                     "Decodes every image once, as training would (same channels and DCT reduction,\n"
                     "from nc, img_size and augment.crop_scale), into one memory-mapped file that\n"
                     "'streetgan train --cache FILE' reads instead of the JPEGs, giving the same batches.\n"
                     "SIGINT or SIGTERM stops the build and removes the unfinished file.",
                     specs);
}

CommandLine cacheInfoCommandLine() {
  return CommandLine("cache info", "FILE", "Checks a cache file (header, index and every record's checksum)\nand prints what it holds.", {});
}

std::optional<int> answerWithoutEngine(const std::string& command, const Args& args) {
  const std::string alone = "streetgan " + command;
  const std::string with_subcommand = args.empty() ? std::string() : alone + " " + args.front();
  for (const CommandLineMaker make : kCommandLines) {
    CommandLine line = make();
    if (line.program() == alone) return line.answerWithoutRunning(args);
    if (!with_subcommand.empty() && line.program() == with_subcommand)
      return line.answerWithoutRunning(Args(args.begin() + 1, args.end()));
  }
  return std::nullopt;
}

}  // namespace streetgan::cli
