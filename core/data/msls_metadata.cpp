#include "core/data/msls_metadata.h"

#include "core/util/csv_table.h"

#include <filesystem>
#include <optional>
#include <system_error>

namespace streetgan {
namespace {

namespace fs = std::filesystem;

// Reads `name` in `folder` and finds `columns`; returns the table or sets `problem`.
std::optional<CsvTable> readTable(const std::string& folder, const char* name,
                                  std::initializer_list<const char*> columns, std::string& problem) {
  const std::string path = (fs::path(folder) / name).string();
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    problem = path + " is missing";
    return std::nullopt;
  }
  auto table = CsvTable::read(path);
  if (!table) {
    problem = table.error();
    return std::nullopt;
  }
  for (const char* column : columns)
    if (table->column(column) < 0) {
      problem = path + ": no column \"" + column + "\"";
      return std::nullopt;
    }
  return std::move(*table);
}

bool parseBool(const std::string& text, int& out) {
  if (text == "True" || text == "true" || text == "1") return out = 1, true;
  if (text == "False" || text == "false" || text == "0") return out = 0, true;
  return false;
}

}  // namespace

MslsMetadata MslsMetadata::read(const std::string& folder) {
  MslsMetadata meta;
  if (auto seq = readTable(folder, "seq_info.csv", {"key", "sequence_key", "frame_number"},
                           meta.seq_problem_)) {
    const int key = seq->column("key"), sequence = seq->column("sequence_key"),
              frame = seq->column("frame_number");
    for (std::size_t r = 0; r < seq->rowCount(); ++r) {
      MslsImageInfo& info = meta.images_[seq->cell(r, key)];
      info.sequence = seq->cell(r, sequence);
      try {
        info.frame = std::stoll(seq->cell(r, frame));
      } catch (const std::exception&) {
        meta.seq_problem_ = seq->path() + ":" + std::to_string(seq->lineOf(r)) +
                            ": frame_number \"" + seq->cell(r, frame) + "\" is not an integer";
        break;
      }
    }
  }
  if (auto post = readTable(folder, "postprocessed.csv", {"key", "night"}, meta.post_problem_)) {
    const int key = post->column("key"), night = post->column("night");
    for (std::size_t r = 0; r < post->rowCount(); ++r)
      if (!parseBool(post->cell(r, night), meta.images_[post->cell(r, key)].night)) {
        meta.post_problem_ = post->path() + ":" + std::to_string(post->lineOf(r)) +
                             ": night \"" + post->cell(r, night) + "\" is not True or False";
        break;
      }
  }
  if (auto raw = readTable(folder, "raw.csv", {"key", "pano"}, meta.raw_problem_)) {
    const int key = raw->column("key"), pano = raw->column("pano");
    for (std::size_t r = 0; r < raw->rowCount(); ++r)
      if (!parseBool(raw->cell(r, pano), meta.images_[raw->cell(r, key)].pano)) {
        meta.raw_problem_ = raw->path() + ":" + std::to_string(raw->lineOf(r)) + ": pano \"" +
                            raw->cell(r, pano) + "\" is not True or False";
        break;
      }
  }
  return meta;
}

MslsImageInfo MslsMetadata::info(const std::string& key) const {
  const auto it = images_.find(key);
  return it == images_.end() ? MslsImageInfo{} : it->second;
}

}  // namespace streetgan
