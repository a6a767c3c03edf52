#include "core/interop/onnx_model_writer.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <exception>
#include <limits>

namespace streetgan {

struct OnnxModelWriter::Model {
  onnx::ModelProto proto;
  onnx::GraphProto* graph = nullptr;
};

namespace {

void setShape(onnx::ValueInfoProto* value, const std::string& name, const std::vector<OnnxDim>& shape) {
  value->set_name(name);
  onnx::TypeProto_Tensor* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  onnx::TensorShapeProto* dims = tensor->mutable_shape();
  for (const OnnxDim& dim : shape) {
    onnx::TensorShapeProto_Dimension* d = dims->add_dim();
    if (dim.symbol.empty()) d->set_dim_value(dim.value); else d->set_dim_param(dim.symbol);
  }
}

// The IR version that goes with an opset: ONNX 1.10 (opset 15) brought IR 8.
std::int64_t irVersionOf(int opset) { return opset >= 15 ? 8 : 7; }

}  // namespace

bool OnnxModelWriter::available() { return true; }

OnnxModelWriter::OnnxModelWriter(int opset, const std::string& graph_name) : model_(std::make_unique<Model>()) {
  onnx::ModelProto& proto = model_->proto;
  proto.set_ir_version(irVersionOf(opset));
  proto.set_producer_name("StreetGAN Studio");
  proto.set_producer_version(STREETGAN_VERSION);
  onnx::OperatorSetIdProto* set = proto.add_opset_import();
  set->set_domain("");
  set->set_version(opset);
  model_->graph = proto.mutable_graph();
  model_->graph->set_name(graph_name);
}

OnnxModelWriter::~OnnxModelWriter() = default;

void OnnxModelWriter::addFloatInput(const std::string& name, const std::vector<OnnxDim>& shape) {
  setShape(model_->graph->add_input(), name, shape);
}

void OnnxModelWriter::addFloatOutput(const std::string& name, const std::vector<OnnxDim>& shape) {
  setShape(model_->graph->add_output(), name, shape);
}

void OnnxModelWriter::addFloatInitializer(const std::string& name, const std::vector<std::int64_t>& shape,
                                          const std::vector<float>& values) {
  onnx::TensorProto* tensor = model_->graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto_DataType_FLOAT);
  for (std::int64_t d : shape) tensor->add_dims(d);
  // raw_data is little-endian, as every machine we build for.
  tensor->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
}

void OnnxModelWriter::addInt64Initializer(const std::string& name, const std::vector<std::int64_t>& values) {
  onnx::TensorProto* tensor = model_->graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto_DataType_INT64);
  tensor->add_dims(static_cast<std::int64_t>(values.size()));
  for (std::int64_t v : values) tensor->add_int64_data(v);
}

void OnnxModelWriter::addNode(const std::string& op, const std::vector<std::string>& inputs,
                              const std::vector<std::string>& outputs, const OnnxAttributes& attributes) {
  onnx::NodeProto* node = model_->graph->add_node();
  node->set_op_type(op);
  node->set_name(outputs.empty() ? op : outputs.front());
  for (const auto& input : inputs) node->add_input(input);
  for (const auto& output : outputs) node->add_output(output);
  for (const auto& [name, values] : attributes.ints) {
    onnx::AttributeProto* attribute = node->add_attribute();
    attribute->set_name(name);
    attribute->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (std::int64_t v : values) attribute->add_ints(v);
  }
  for (const auto& [name, value] : attributes.floats) {
    onnx::AttributeProto* attribute = node->add_attribute();
    attribute->set_name(name);
    attribute->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    attribute->set_f(value);
  }
}

void OnnxModelWriter::addMetadata(const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto* entry = model_->proto.add_metadata_props();
  entry->set_key(key);
  entry->set_value(value);
}

void OnnxModelWriter::setDocString(const std::string& text) { model_->proto.set_doc_string(text); }

std::int64_t OnnxModelWriter::nodeCount() const { return model_->graph->node_size(); }

Result<std::string> OnnxModelWriter::serialize() const {
  const std::size_t bytes = model_->proto.ByteSizeLong();
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return makeError("the model would be " + std::to_string(bytes >> 20) + " MiB; ONNX files hold at most 2 GiB");
  try {
    onnx::checker::check_model(model_->proto);
  } catch (const std::exception& error) {
    return makeError(std::string("ONNX's checker refused the model: ") + error.what());
  }
  std::string out;
  if (!model_->proto.SerializeToString(&out)) return makeError("protobuf could not serialise the model");
  return out;
}

}  // namespace streetgan
