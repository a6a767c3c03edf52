// OnnxModelWriter in a build without Debian's ONNX library (-DSTREETGAN_ONNX=OFF: a GPU host's
// bundle carries none, packaging/gpu-check.sh): available() is false and exportGeneratorOnnx()
// says so before any work; nothing here writes a model.
#include "core/interop/onnx_model_writer.h"

namespace streetgan {

struct OnnxModelWriter::Model {
  std::int64_t nodes = 0;
};

bool OnnxModelWriter::available() { return false; }

OnnxModelWriter::OnnxModelWriter(int, const std::string&) : model_(std::make_unique<Model>()) {}
OnnxModelWriter::~OnnxModelWriter() = default;
void OnnxModelWriter::addFloatInput(const std::string&, const std::vector<OnnxDim>&) {}
void OnnxModelWriter::addFloatOutput(const std::string&, const std::vector<OnnxDim>&) {}
void OnnxModelWriter::addFloatInitializer(const std::string&, const std::vector<std::int64_t>&, const std::vector<float>&) {}
void OnnxModelWriter::addInt64Initializer(const std::string&, const std::vector<std::int64_t>&) {}
void OnnxModelWriter::addNode(const std::string&, const std::vector<std::string>&, const std::vector<std::string>&,
                              const OnnxAttributes&) {
  ++model_->nodes;
}
void OnnxModelWriter::addMetadata(const std::string&, const std::string&) {}
void OnnxModelWriter::setDocString(const std::string&) {}
std::int64_t OnnxModelWriter::nodeCount() const { return model_->nodes; }

Result<std::string> OnnxModelWriter::serialize() const { return makeError(kUnavailable); }

}  // namespace streetgan
