#include "core/interop/generator_onnx_export.h"

#include "core/config/train_config.h"
#include "core/interop/onnx_model_writer.h"
#include "core/model/generator.h"
#include "core/model/layer_plan.h"
#include "core/runs/run_directory.h"
#include "core/train/checkpoint.h"
#include "core/util/atomic_file.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <filesystem>

namespace streetgan {

namespace fs = std::filesystem;

namespace {

std::vector<float> floatValues(const torch::Tensor& tensor) {
  const torch::Tensor t = tensor.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  return std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
}

std::vector<std::int64_t> shapeOf(const torch::Tensor& tensor) { return tensor.sizes().vec(); }

// The graph's nodes, one layer of G at a time, each output named after the layer ("main.3").
class GraphBuilder {
public:
  GraphBuilder(OnnxModelWriter& writer, std::string input) : writer_(writer), last_(std::move(input)) {}

  // The first block: z (N, nz) · W (nz, C·16), reshaped to (N, C, 4, 4), as G's forward() does it.
  void firstConvolution(const std::string& name, const torch::Tensor& weight) {
    const std::int64_t channels = weight.size(1);
    writer_.addFloatInitializer(name + ".weight", {weight.size(0), weight[0].numel()}, floatValues(weight));
    writer_.addInt64Initializer(name + ".shape", {-1, channels, weight.size(2), weight.size(3)});
    writer_.addNode("MatMul", {last_, name + ".weight"}, {name + ".matmul"});
    step("Reshape", {name + ".matmul", name + ".shape"}, name);
  }

  // A transposed convolution of G's layer plan (kernel kConvKernel, the layer's stride and padding).
  void convolution(const std::string& name, const torch::nn::ConvTranspose2dImpl& conv, const ConvLayer& layer) {
    writer_.addFloatInitializer(name + ".weight", shapeOf(conv.weight), floatValues(conv.weight));
    OnnxAttributes attributes;
    attributes.ints["kernel_shape"] = {kConvKernel, kConvKernel};
    attributes.ints["strides"] = {layer.stride, layer.stride};
    attributes.ints["pads"] = {layer.padding, layer.padding, layer.padding, layer.padding};
    std::vector<std::string> inputs = {last_, name + ".weight"};
    if (conv.bias.defined()) {
      writer_.addFloatInitializer(name + ".bias", shapeOf(conv.bias), floatValues(conv.bias));
      inputs.push_back(name + ".bias");
    }
    step("ConvTranspose", inputs, name, attributes);
  }

  void batchNorm(const std::string& name, const torch::nn::BatchNorm2dImpl& norm) {
    const std::int64_t channels = norm.options.num_features();
    const torch::Tensor scale = norm.weight.defined() ? norm.weight : torch::ones({channels});
    const torch::Tensor shift = norm.bias.defined() ? norm.bias : torch::zeros({channels});
    writer_.addFloatInitializer(name + ".weight", {channels}, floatValues(scale));
    writer_.addFloatInitializer(name + ".bias", {channels}, floatValues(shift));
    writer_.addFloatInitializer(name + ".running_mean", {channels}, floatValues(norm.running_mean));
    writer_.addFloatInitializer(name + ".running_var", {channels}, floatValues(norm.running_var));
    OnnxAttributes attributes;
    attributes.floats["epsilon"] = static_cast<float>(norm.options.eps());
    step("BatchNormalization",
         {last_, name + ".weight", name + ".bias", name + ".running_mean", name + ".running_var"}, name, attributes);
  }

  void activation(const std::string& op, const std::string& name) { step(op, {last_}, name); }

  // The last node's output renamed to `output`: an Identity keeps the layer names intact.
  void finish(const std::string& output) { writer_.addNode("Identity", {last_}, {output}); }

private:
  void step(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
            const OnnxAttributes& attributes = {}) {
    writer_.addNode(op, inputs, {output}, attributes);
    last_ = output;
  }

  OnnxModelWriter& writer_;
  std::string last_;
};

Status addGeneratorNodes(OnnxModelWriter& writer, Generator& generator) {
  GraphBuilder graph(writer, "z");
  const std::vector<ConvLayer> plan = generatorLayers(generator->options());
  std::size_t convolutions = 0;
  for (const auto& layer : generator->named_modules("", false)) {
    const std::string& name = layer.key();
    if (const auto* conv = layer.value()->as<torch::nn::ConvTranspose2d>()) {
      if (convolutions >= plan.size()) return makeError("the generator has more convolutions than its layer plan");
      if (convolutions == 0) graph.firstConvolution(name, conv->weight); else graph.convolution(name, *conv, plan[convolutions]);
      ++convolutions;
    } else if (const auto* norm = layer.value()->as<torch::nn::BatchNorm2d>()) {
      graph.batchNorm(name, *norm);
    } else if (layer.value()->as<torch::nn::ReLU>()) {
      graph.activation("Relu", name);
    } else if (layer.value()->as<torch::nn::Tanh>()) {
      graph.activation("Tanh", name);
    } else if (!layer.value()->as<torch::nn::Sequential>()) {
      return makeError("the generator has a layer ONNX export does not know: " + name + " (" + layer.value()->name() + ")");
    }
  }
  graph.finish("image");
  return {};
}

std::string runName(const CheckpointGenerator& loaded, const std::string& checkpoint) {
  const auto run_folder = RunDirectory::ofCheckpoint(checkpoint);
  return run_folder ? run_folder->name() : loaded.config.name;
}

void addMetadata(OnnxModelWriter& writer, const CheckpointGenerator& loaded, const std::string& checkpoint, bool config_metadata) {
  const TrainConfig& config = loaded.config;
  writer.addMetadata(kOnnxFormatKey, kOnnxFormatName);
  writer.addMetadata("streetgan.format_version", "1");
  writer.addMetadata("streetgan.run", runName(loaded, checkpoint));
  writer.addMetadata("streetgan.checkpoint", fs::path(checkpoint).filename().string());
  writer.addMetadata("streetgan.step", std::to_string(loaded.progress.step));
  writer.addMetadata("streetgan.epoch", std::to_string(loaded.progress.epoch));
  writer.addMetadata("streetgan.images_seen", std::to_string(loaded.progress.images_seen));
  writer.addMetadata("streetgan.generator", loaded.generatorName());
  writer.addMetadata("streetgan.nz", std::to_string(config.nz));
  writer.addMetadata("streetgan.img_size", std::to_string(config.img_size));
  writer.addMetadata("streetgan.batch_norm", "BatchNormalization with the running statistics (eval mode), not folded");
  writer.addMetadata("streetgan.output_range", "[-1, 1]");
  if (config_metadata) writer.addMetadata("streetgan.config", configToJson(config).dump());
}

}  // namespace

Status checkOnnxExportOptions(const OnnxExportOptions& options) {
  if (options.opset < OnnxModelWriter::kMinOpset || options.opset > OnnxModelWriter::kMaxOpset)
    return makeError("opset " + std::to_string(options.opset) + " is not one this export writes (" +
                     std::to_string(OnnxModelWriter::kMinOpset) + " to " + std::to_string(OnnxModelWriter::kMaxOpset) + ")");
  if (options.batch < 0 || options.batch > OnnxExportOptions::kMaxBatch)
    return makeError("batch " + std::to_string(options.batch) + " is out of range (1 to " +
                     std::to_string(OnnxExportOptions::kMaxBatch) + ", or dynamic)");
  return {};
}

Result<OnnxExportReport> exportGeneratorOnnx(const std::string& checkpoint, const std::string& out,
                                             const OnnxExportOptions& options) {
  if (Status valid = checkOnnxExportOptions(options); !valid) return makeError(valid.error());
  if (!OnnxModelWriter::available()) return makeError(OnnxModelWriter::kUnavailable, ErrorKind::Machine);
  std::error_code error;
  if (fs::equivalent(out, checkpoint, error)) return makeError(out + ": this is the checkpoint being exported; choose another --out");
  // Said before the checkpoint is read (writeFileAtomically refuses the same, later and as the machine's fault).
  if (Status writable = checkReplaceableFile(out); !writable) return makeError(writable.error());
  auto loaded = loadCheckpointGenerator(checkpoint, torch::kCPU, options.generator);
  if (!loaded) return makeError(loaded.error(), loaded.errorKind());
  const TrainConfig& config = loaded->config;
  OnnxModelWriter writer(options.opset, "streetgan_generator");
  const OnnxDim batch = options.batch ? OnnxDim{options.batch, ""} : OnnxDim{0, "N"};
  writer.addFloatInput("z", {batch, {config.nz, ""}});
  writer.addFloatOutput("image", {batch, {config.nc, ""}, {config.img_size, ""}, {config.img_size, ""}});
  torch::NoGradGuard no_grad;
  if (Status added = addGeneratorNodes(writer, loaded->generator); !added) return makeError(checkpoint + ": " + added.error());
  addMetadata(writer, *loaded, checkpoint, options.config_metadata);
  writer.setDocString("A DCGAN generator trained by StreetGAN Studio: z (N, " + std::to_string(config.nz) +
                      ") standard normal in, images (N, " + std::to_string(config.nc) + ", " + std::to_string(config.img_size) +
                      ", " + std::to_string(config.img_size) + ") in [-1, 1] out.");
  auto bytes = writer.serialize();
  if (!bytes) return makeError(out + ": " + bytes.error());
  if (Status written = writeFileAtomically(out, *bytes); !written) return makeError(written.error(), ErrorKind::Machine);
  OnnxExportReport report;
  report.path = out;
  report.run = runName(*loaded, checkpoint);
  report.step = loaded->progress.step;
  report.images_seen = loaded->progress.images_seen;
  report.generator = loaded->generatorName();
  report.nz = config.nz;
  report.img_size = config.img_size;
  report.nc = config.nc;
  report.nodes = writer.nodeCount();
  report.bytes = static_cast<std::int64_t>(bytes->size());
  return report;
}

}  // namespace streetgan
