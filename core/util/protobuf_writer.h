#pragma once
// ProtobufWriter: encodes a protocol-buffers message field by field into bytes (the wire format:
// varints, 64-bit and 32-bit little-endian numbers, length-delimited bytes and sub-messages).
// Enough to write TensorBoard's Event and Summary messages without the protobuf library or
// generated code; the field numbers are the caller's. Never fails.
#include <cstdint>
#include <string>
#include <string_view>

namespace streetgan {

class ProtobufWriter {
public:
  void varintField(int field, std::uint64_t value);            ///< int32, int64, uint64, bool, enum
  void doubleField(int field, double value);                   ///< double (wire type 1)
  void floatField(int field, float value);                     ///< float (wire type 5)
  void bytesField(int field, std::string_view bytes);          ///< string or bytes
  void messageField(int field, const ProtobufWriter& message); ///< an embedded message
  const std::string& bytes() const { return out_; }

private:
  void varint(std::uint64_t value);
  void key(int field, int wire_type);
  std::string out_;
};

}  // namespace streetgan
