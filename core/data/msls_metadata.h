#pragma once
// MslsMetadata: the per-image facts of one MSLS image folder (`<city>/<database|query>/`), read
// from its seq_info.csv (sequence, frame), postprocessed.csv (night) and raw.csv (panorama). A
// file may be missing or malformed; that is recorded, not fatal, and reported only when a filter
// needs the file (see ImageDataset).
#include <string>
#include <unordered_map>

namespace streetgan {

struct MslsImageInfo {
  std::string sequence;   ///< sequence_key; empty when seq_info.csv has no row for the image
  long long frame = -1;   ///< frame_number within the sequence
  int night = -1;         ///< 1 night, 0 day, -1 unknown
  int pano = -1;          ///< 1 panorama, 0 not, -1 unknown
};

class MslsMetadata {
public:
  /// Reads the three CSVs of `folder` (the folder holding `images/`).
  static MslsMetadata read(const std::string& folder);

  /// Info for the image named `key` (its file name without extension); defaults when unknown.
  MslsImageInfo info(const std::string& key) const;

  /// Why a CSV cannot be used ("" when it was read): for seq_info.csv, postprocessed.csv, raw.csv.
  const std::string& seqInfoProblem() const { return seq_problem_; }
  const std::string& postprocessedProblem() const { return post_problem_; }
  const std::string& rawProblem() const { return raw_problem_; }

private:
  std::unordered_map<std::string, MslsImageInfo> images_;
  std::string seq_problem_, post_problem_, raw_problem_;
};

}  // namespace streetgan
