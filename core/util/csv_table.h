#pragma once
// CsvTable: a small CSV file read whole (the MSLS metadata files: a header row, then one row per
// image). Handles quoted fields and CRLF line ends. Failures (missing file, unreadable file, a row
// with the wrong number of fields) come back as an Error naming the file and line.
#include "core/util/result.h"

#include <string>
#include <vector>

namespace streetgan {

class CsvTable {
public:
  static Result<CsvTable> read(const std::string& path);

  const std::string& path() const { return path_; }
  std::size_t rowCount() const { return rows_.size(); }
  /// Index of the column named `name`, or -1.
  int column(const std::string& name) const;
  const std::string& cell(std::size_t row, int column) const { return rows_[row][static_cast<std::size_t>(column)]; }
  /// The file line a row came from (1-based, for messages).
  std::size_t lineOf(std::size_t row) const { return lines_[row]; }

private:
  std::string path_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> lines_;
};

}  // namespace streetgan
