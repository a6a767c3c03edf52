#pragma once
// ImageDataset: the images of a data folder a run uses. Finds every image file (jpg, jpeg, png,
// webp, bmp; any letter case) recursively, sorted by path so an image's index never depends on
// the order the file system lists it; detects the MSLS layout
// (`[train_val|test/]<city>/<database|query>/images/<key>.jpg`) and reads its CSVs; applies the
// DatasetFilter and the held-out split. Only lists files: decoding happens in SamplePipeline,
// so an unreadable image is found (and skipped with a warning) when it is loaded.
// A filter that needs a missing CSV, an unknown city, or an empty result is an Error naming the
// folder, file or value.
#include "core/config/data_config.h"
#include "core/util/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

enum class DatasetLayout { Folder, Msls };
/// Which side of the held-out split to return.
enum class DatasetPart { Train, Holdout, All };

struct DatasetEntry {
  std::string path;        ///< full path of the image file
  std::string group;       ///< MSLS: the city; plain folder: its first subfolder ("." at the top)
  std::string msls_split;  ///< "train_val", "test" or "" (MSLS only)
  std::string subset;      ///< "database", "query" or "" (MSLS only)
  std::string sequence;    ///< sequence_key, "" when unknown
  long long frame = -1;    ///< frame_number, -1 when unknown
  int night = -1;          ///< 1 night, 0 day, -1 unknown
  int pano = -1;           ///< 1 panorama, 0 not, -1 unknown
};

/// An image that could not be used, and why (one line naming the file and the problem).
struct SkippedFile {
  std::string path;
  std::string reason;
};

/// One line of how the filters narrowed the sample, for `data stats`.
struct FilterStep {
  std::string name;        ///< "found", "cities", "panoramas", ...
  std::int64_t remaining;  ///< images left after the step
};

struct GroupCount {
  std::string group;
  std::int64_t images = 0;
  std::int64_t sequences = 0;  ///< distinct sequences (0 when unknown)
};

class ImageDataset {
public:
  static Result<ImageDataset> open(const std::string& root, const DatasetFilter& filter = {},
                                   DatasetPart part = DatasetPart::Train);

  const std::string& root() const { return root_; }
  DatasetLayout layout() const { return layout_; }
  std::size_t size() const { return entries_.size(); }
  const std::string& path(std::size_t index) const { return entries_[index].path; }
  const DatasetEntry& entry(std::size_t index) const { return entries_[index]; }
  const std::vector<DatasetEntry>& entries() const { return entries_; }
  /// Image count per city (folder), sorted by name.
  std::vector<GroupCount> groupCounts() const;
  const std::vector<FilterStep>& filterSteps() const { return steps_; }
  /// Images on the other side of the held-out split (0 without one).
  std::int64_t otherPartSize() const { return other_part_; }

  static bool isImageFile(const std::string& path);

private:
  std::string root_;
  DatasetLayout layout_ = DatasetLayout::Folder;
  std::vector<DatasetEntry> entries_;
  std::vector<std::string> all_groups_;
  std::vector<FilterStep> steps_;
  std::int64_t other_part_ = 0;
};

const char* layoutName(DatasetLayout layout);

}  // namespace streetgan
