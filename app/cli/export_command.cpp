// `streetgan export --checkpoint C --out G.pt|G.onnx`: a generator as a PyTorch state dict or as
// an ONNX model.
#include "app/cli/command_line.h"
#include "app/cli/command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/model_options.h"

#include "core/interop/generator_export.h"
#include "core/interop/generator_onnx_export.h"
#include "core/interop/onnx_model_writer.h"

#include <cstdio>
#include <filesystem>

namespace streetgan::cli {

namespace {

// The format named by --format, else by --out's extension.
Result<std::string> exportFormat(const CommandLine& line) {
  if (!line.has("--format"))
    return std::filesystem::path(line.value("--out")).extension() == ".onnx" ? std::string("onnx") : std::string("pytorch");
  const std::string format = line.value("--format");
  if (format != "pytorch" && format != "onnx")
    return makeError("option '--format': unknown format \"" + format + "\"; allowed: pytorch, onnx");
  return format;
}

Result<OnnxExportOptions> onnxOptions(const CommandLine& line, GeneratorChoice generator) {
  OnnxExportOptions options;
  options.generator = generator;
  if (line.has("--batch") && line.value("--batch") != "dynamic") {
    auto batch = line.integer("--batch", 0, 1, OnnxExportOptions::kMaxBatch);
    if (!batch) return makeError(batch.error() + " (or dynamic)");
    options.batch = *batch;
  }
  auto opset = line.integer("--opset", options.opset, OnnxModelWriter::kMinOpset, OnnxModelWriter::kMaxOpset);
  if (!opset) return makeError(opset.error());
  options.opset = static_cast<int>(*opset);
  return options;
}

int exportOnnx(const CommandLine& line, GeneratorChoice generator) {
  auto options = onnxOptions(line, generator);
  if (!options) return fail(line.program(), options.error(), kExitUsage);
  auto report = exportGeneratorOnnx(line.value("--checkpoint"), line.value("--out"), *options);
  if (!report) return fail(line.program(), report.error(), report.errorKind() == ErrorKind::Input ? kExitUsage : kExitFailure);
  std::printf("wrote the generator (step %lld, generator %s, %lld nodes, opset %d, batch %s) as ONNX to %s (%lld bytes)\n",
              static_cast<long long>(report->step), report->generator.c_str(), static_cast<long long>(report->nodes),
              options->opset, options->batch ? std::to_string(options->batch).c_str() : "dynamic", report->path.c_str(),
              static_cast<long long>(report->bytes));
  return kExitOk;
}

}  // namespace

int runExport(const Args& args) {
  CommandLine line = exportCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (Status given = checkpointGiven(line); !given) return fail(line.program(), given.error(), kExitUsage);
  if (!line.has("--out")) return fail(line.program(), "missing --out G.pt or G.onnx", kExitUsage);
  if (Status out = outputFileOption(line, {line.value("--checkpoint")}); !out) return fail(line.program(), out.error(), kExitUsage);
  auto choice = generatorOption(line);
  if (!choice) return fail(line.program(), choice.error(), kExitUsage);
  auto format = exportFormat(line);
  if (!format) return fail(line.program(), format.error(), kExitUsage);
  if (*format == "onnx") return exportOnnx(line, *choice);
  for (const char* option : {"--batch", "--opset"})
    if (line.has(option)) return fail(line.program(), std::string(option) + " goes with --format onnx", kExitUsage);
  auto report = exportGenerator(line.value("--checkpoint"), line.value("--out"), *choice);
  if (!report) return fail(line.program(), report.error(), kExitFailure);
  std::printf("wrote the generator (step %lld, generator %s, %lld tensors) to %s and %s\n",
              static_cast<long long>(report->step), report->generator.c_str(), static_cast<long long>(report->tensors),
              report->state_path.c_str(), report->sidecar_path.c_str());
  return kExitOk;
}

}  // namespace streetgan::cli
