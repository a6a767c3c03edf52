#pragma once
// OnnxModelWriter: an ONNX model (one graph, float32 tensors) built node by node with Debian's ONNX
// library (libonnx-dev: the real schema's protobuf classes), checked by its own checker and
// serialised. The ONNX headers stay in the .cpp: callers see only names, shapes and numbers.
#include "core/util/result.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace streetgan {

/// One dimension of an input's or output's shape: a number, or a name when it is chosen at run
/// time (a dynamic batch, "N").
struct OnnxDim {
  std::int64_t value = 0;
  std::string symbol;  ///< non-empty: the dimension is this named variable, not `value`
};

/// A node's attributes: lists of integers (kernel_shape, strides, pads) and single floats (epsilon).
struct OnnxAttributes {
  std::map<std::string, std::vector<std::int64_t>> ints;
  std::map<std::string, float> floats;
};

class OnnxModelWriter {
public:
  /// The ONNX opsets written: 13 (ONNX 1.8) to 17 (ONNX 1.12, the library's newest).
  static constexpr int kMinOpset = 13, kMaxOpset = 17;

  /// False in a build without the ONNX library (-DSTREETGAN_ONNX=OFF): nothing can be written.
  static bool available();
  /// What a build without it says.
  static constexpr const char* kUnavailable =
      "this build of streetgan has no ONNX library (configured with -DSTREETGAN_ONNX=OFF); "
      "build it with libonnx-dev installed (packaging/install-deps.sh)";
  /// A model of the default domain's `opset` (kMinOpset..kMaxOpset; checked by the caller).
  OnnxModelWriter(int opset, const std::string& graph_name);
  ~OnnxModelWriter();
  OnnxModelWriter(const OnnxModelWriter&) = delete;
  OnnxModelWriter& operator=(const OnnxModelWriter&) = delete;

  void addFloatInput(const std::string& name, const std::vector<OnnxDim>& shape);
  void addFloatOutput(const std::string& name, const std::vector<OnnxDim>& shape);
  /// A constant tensor: `values` (C order) of `shape`, stored as raw little-endian bytes.
  void addFloatInitializer(const std::string& name, const std::vector<std::int64_t>& shape, const std::vector<float>& values);
  void addInt64Initializer(const std::string& name, const std::vector<std::int64_t>& values);
  void addNode(const std::string& op, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
               const OnnxAttributes& attributes = {});
  /// A key and value of the model's metadata_props (what any runtime shows of the model).
  void addMetadata(const std::string& key, const std::string& value);
  void setDocString(const std::string& text);
  std::int64_t nodeCount() const;

  /// The model's bytes once ONNX's checker passed it; an Error with the checker's message otherwise,
  /// or when the model would pass protobuf's 2 GiB limit.
  Result<std::string> serialize() const;

private:
  struct Model;
  std::unique_ptr<Model> model_;
};

}  // namespace streetgan
