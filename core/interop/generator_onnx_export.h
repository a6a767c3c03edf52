#pragma once
// Exports a run's generator as an ONNX model that any ONNX runtime runs: input `z` (N, nz)
// float32, output `image` (N, nc, H, W) in [-1, 1]. The graph is the one G's forward() computes in
// eval mode: the first block's transposed convolution of a 1×1 input as the matrix product it is
// (MatMul, then Reshape to (N, C, 4, 4)), then for each block BatchNormalization with the running
// statistics (not folded into the weights, so the numbers are the checkpoint's), Relu and
// ConvTranspose (kernel 4), and Tanh at the end. The model carries where it came from in its
// metadata_props (docs/interop.md lists the keys). Written with Debian's ONNX library, checked by
// its checker, and written atomically; failures come back as one line naming the file or value.
#include "core/train/generator_choice.h"
#include "core/util/result.h"

#include <cstdint>
#include <string>

namespace streetgan {

struct OnnxExportOptions {
  GeneratorChoice generator = GeneratorChoice::Default;  ///< the moving average when there is one
  std::int64_t batch = 0;  ///< 0: the batch is chosen at run time (dimension "N"); else fixed, 1..kMaxBatch
  int opset = 17;          ///< the ONNX opset, OnnxModelWriter::kMinOpset..kMaxOpset
  /// The run's whole config in the metadata ("streetgan.config"), its data set path too; a page
  /// for the public (`streetgan publish`) leaves it out.
  bool config_metadata = true;
  static constexpr std::int64_t kMaxBatch = 4096;
};

struct OnnxExportReport {
  std::string path;
  std::string run;           ///< the run's name (its folder's, else its config's)
  std::int64_t step = 0;
  std::int64_t images_seen = 0;
  std::string generator;     ///< "ema" or "raw"
  std::int64_t nz = 0, img_size = 0, nc = 0;
  std::int64_t nodes = 0;    ///< nodes in the graph
  std::int64_t bytes = 0;    ///< size of the file written
};

/// The options' values checked: an Error naming the value and the allowed range.
Status checkOnnxExportOptions(const OnnxExportOptions& options);
/// The metadata key that says how the model was made ("streetgan.format"), and its value.
inline constexpr const char* kOnnxFormatKey = "streetgan.format";
inline constexpr const char* kOnnxFormatName = "streetgan-generator-onnx";

/// Writes the generator of the StreetGAN checkpoint `checkpoint` to `out` as ONNX.
Result<OnnxExportReport> exportGeneratorOnnx(const std::string& checkpoint, const std::string& out,
                                             const OnnxExportOptions& options);

}  // namespace streetgan
