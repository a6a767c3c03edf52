#include "core/util/csv_table.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace streetgan {
namespace {

// Splits one record; returns false when a quoted field is not closed on this line.
bool splitRecord(const std::string& line, std::vector<std::string>& fields) {
  fields.clear();
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(std::move(field));
  return !quoted;
}

}  // namespace

Result<CsvTable> CsvTable::read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(path + ": cannot open (" + std::strerror(errno) + ")");
  CsvTable table;
  table.path_ = path;
  std::string line;
  std::vector<std::string> fields;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (!splitRecord(line, fields))
      return makeError(path + ":" + std::to_string(number) + ": a quoted field is not closed");
    if (table.header_.empty()) {
      table.header_ = fields;
      continue;
    }
    if (fields.size() != table.header_.size())
      return makeError(path + ":" + std::to_string(number) + ": " + std::to_string(fields.size()) +
                       " fields where the header has " + std::to_string(table.header_.size()));
    table.rows_.push_back(fields);
    table.lines_.push_back(number);
  }
  if (in.bad()) return makeError(path + ": read error");
  if (table.header_.empty()) return makeError(path + ": empty file (no header row)");
  return table;
}

int CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return static_cast<int>(i);
  return -1;
}

}  // namespace streetgan
