#include "core/util/protobuf_writer.h"

#include <cstring>

namespace streetgan {

void ProtobufWriter::varint(std::uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void ProtobufWriter::key(int field, int wire_type) {
  varint((static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(wire_type));
}

void ProtobufWriter::varintField(int field, std::uint64_t value) {
  key(field, 0);
  varint(value);
}

void ProtobufWriter::doubleField(int field, double value) {
  key(field, 1);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

void ProtobufWriter::floatField(int field, float value) {
  key(field, 5);
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

void ProtobufWriter::bytesField(int field, std::string_view bytes) {
  key(field, 2);
  varint(bytes.size());
  out_.append(bytes);
}

void ProtobufWriter::messageField(int field, const ProtobufWriter& message) { bytesField(field, message.out_); }

}  // namespace streetgan
