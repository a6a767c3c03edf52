#include "core/formats/npy_array.h"

#include <cstring>
#include <limits>
#include <map>

namespace streetgan {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;

// One value of the header's dict: a string, a bool or a tuple of non-negative integers.
struct HeaderValue {
  enum class Kind { String, Bool, Tuple } kind = Kind::String;
  std::string text;
  bool flag = false;
  std::vector<std::int64_t> numbers;
};

// A reader of the header's Python literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
public:
  explicit HeaderParser(const std::string& text) : text_(text) {}

  Result<std::map<std::string, HeaderValue>> dict() {
    std::map<std::string, HeaderValue> out;
    if (!take('{')) return makeError("the header is not a Python dict");
    while (!take('}')) {
      auto key = string();
      if (!key) return makeError(key.error());
      if (!take(':')) return makeError("the header's key '" + *key + "' has no ':'");
      auto value = this->value();
      if (!value) return makeError(value.error());
      if (!out.emplace(*key, *value).second) return makeError("the header names '" + *key + "' twice");
      if (!take(',') && !peek('}')) return makeError("the header's dict is not closed");
    }
    skipSpaces();
    if (at_ != text_.size()) return makeError("the header has text after its dict");
    return out;
  }

private:
  void skipSpaces() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n')) ++at_;
  }
  bool peek(char c) {
    skipSpaces();
    return at_ < text_.size() && text_[at_] == c;
  }
  bool take(char c) {
    if (!peek(c)) return false;
    ++at_;
    return true;
  }
  bool word(const char* w) {
    skipSpaces();
    const std::size_t n = std::strlen(w);
    if (text_.compare(at_, n, w) != 0) return false;
    at_ += n;
    return true;
  }
  Result<std::string> string() {
    skipSpaces();
    if (at_ >= text_.size() || (text_[at_] != '\'' && text_[at_] != '"')) return makeError("the header's dict has a key that is not a string");
    const char quote = text_[at_++];
    const std::size_t end = text_.find(quote, at_);
    if (end == std::string::npos) return makeError("the header has a string that is not closed");
    std::string s = text_.substr(at_, end - at_);
    at_ = end + 1;
    return s;
  }
  Result<std::int64_t> number() {
    skipSpaces();
    std::int64_t n = 0;
    const std::size_t start = at_;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
      if (n > (std::numeric_limits<std::int64_t>::max() - 9) / 10) return makeError("the header's shape has a dimension too large");
      n = n * 10 + (text_[at_++] - '0');
    }
    if (at_ == start) return makeError("the header's shape is not a tuple of integers");
    if (at_ < text_.size() && text_[at_] == 'L') ++at_;  // Python 2's long
    return n;
  }
  Result<HeaderValue> value() {
    HeaderValue v;
    if (word("True") || word("False")) {
      v.kind = HeaderValue::Kind::Bool;
      v.flag = text_[at_ - 1] == 'e' && text_[at_ - 2] == 'u';  // "True", not "False"
      return v;
    }
    if (take('(')) {
      v.kind = HeaderValue::Kind::Tuple;
      while (!take(')')) {
        if (v.numbers.size() == NpyArray::kMaxDims)
          return makeError("the array has more than " + std::to_string(NpyArray::kMaxDims) + " dimensions");
        auto n = number();
        if (!n) return makeError(n.error());
        v.numbers.push_back(*n);
        if (!take(',') && !peek(')')) return makeError("the header's shape is not a tuple of integers");
      }
      return v;
    }
    auto s = string();
    if (!s) return makeError("the header has a value that is not a string, bool or tuple");
    v.text = *s;
    return v;
  }

  const std::string& text_;
  std::size_t at_ = 0;
};

// The header's text and where the data begins, from the magic, version and length fields.
Result<std::pair<std::string, std::size_t>> headerText(const std::string& bytes) {
  if (bytes.size() < 10 || bytes.compare(0, kMagicBytes, kMagic, kMagicBytes) != 0)
    return makeError("not a NumPy .npy file (no \\x93NUMPY at its start)");
  const auto byte = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])); };
  const std::uint32_t major = byte(6);
  if (major < 1 || major > 3) return makeError("NumPy format version " + std::to_string(major) + " is not one this reader knows (1, 2 or 3)");
  const std::size_t fields = major == 1 ? 10 : 12;
  if (bytes.size() < fields) return makeError("the file ends inside its header");
  std::uint32_t length = byte(8) | byte(9) << 8;
  if (major > 1) length |= byte(10) << 16 | byte(11) << 24;
  if (length > NpyArray::kMaxHeaderBytes) return makeError("the header declares " + std::to_string(length) + " bytes (at most " + std::to_string(NpyArray::kMaxHeaderBytes) + ")");
  if (bytes.size() - fields < length) return makeError("the file ends inside its header");
  return std::make_pair(bytes.substr(fields, length), fields + length);
}

Status checkHeader(const std::map<std::string, HeaderValue>& dict) {
  for (const char* key : {"descr", "fortran_order", "shape"})
    if (!dict.count(key)) return makeError(std::string("the header has no '") + key + "'");
  if (dict.size() != 3) return makeError("the header has keys other than descr, fortran_order and shape");
  const HeaderValue& descr = dict.at("descr");
  if (descr.kind != HeaderValue::Kind::String || descr.text != "<f4")
    return makeError("the array's type is '" + descr.text + "'; only little-endian float32 ('<f4') is read");
  const HeaderValue& order = dict.at("fortran_order");
  if (order.kind != HeaderValue::Kind::Bool || order.flag) return makeError("the array is in Fortran order; only C order is read");
  if (dict.at("shape").kind != HeaderValue::Kind::Tuple) return makeError("the header's shape is not a tuple");
  return {};
}

}  // namespace

std::string NpyArray::toBytes(const std::vector<std::int64_t>& shape, const float* values, std::size_t count) {
  std::string dims = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  dims += shape.size() == 1 ? ",)" : ")";  // Python's repr of a tuple
  // Format 1.0: magic, version, a little-endian header length, a dict padded so that the data
  // begins on a multiple of 64 bytes.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + dims + ", }";
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string bytes(kMagic, kMagicBytes);
  bytes += std::string("\x01\x00", 2);
  bytes.push_back(static_cast<char>(header.size() & 0xff));
  bytes.push_back(static_cast<char>((header.size() >> 8) & 0xff));
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(values), count * sizeof(float));  // little-endian, as every machine we build for
  return bytes;
}

Result<NpyArray> NpyArray::fromBytes(const std::string& bytes) {
  auto header = headerText(bytes);
  if (!header) return makeError(header.error());
  auto dict = HeaderParser(header->first).dict();
  if (!dict) return makeError(dict.error());
  if (Status ok = checkHeader(*dict); !ok) return makeError(ok.error());
  NpyArray array;
  array.shape = dict->at("shape").numbers;
  const std::size_t available = (bytes.size() - header->second) / sizeof(float);
  std::uint64_t count = 1;
  bool empty = false;
  for (std::int64_t d : array.shape) empty = empty || d == 0;
  for (std::int64_t d : array.shape) {
    if (empty) count = 0;
    // Checked before the product can overflow: no dimension or product past what the file holds.
    else if (count > available / static_cast<std::uint64_t>(d))
      return makeError("the header's shape needs more values than the file's " + std::to_string(available));
    else count *= static_cast<std::uint64_t>(d);
  }
  if ((bytes.size() - header->second) != count * sizeof(float))
    return makeError("the file holds " + std::to_string(bytes.size() - header->second) + " bytes of data; its shape needs " +
                     std::to_string(count * sizeof(float)));
  array.values.resize(count);
  if (count) std::memcpy(array.values.data(), bytes.data() + header->second, count * sizeof(float));
  return array;
}

}  // namespace streetgan
