#include "core/data/image_dataset.h"

#include "core/data/msls_metadata.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <system_error>
#include <unordered_map>

namespace streetgan {
namespace {

namespace fs = std::filesystem;

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::uint64_t mixHash(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A number in [0, 1) from the seed and a name, the same on every machine.
double unitHash(std::int64_t seed, const std::string& name) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
  return static_cast<double>(mixHash(h ^ mixHash(static_cast<std::uint64_t>(seed))) >> 11) *
         (1.0 / 9007199254740992.0);
}

// Keeps `count` frames evenly spaced over a sequence of `n` frames (sorted by frame number).
std::vector<std::size_t> evenlySpaced(std::size_t n, std::size_t count) {
  std::vector<std::size_t> picked;
  if (n <= count) {
    for (std::size_t i = 0; i < n; ++i) picked.push_back(i);
  } else if (count == 1) {
    picked.push_back(n / 2);
  } else {
    for (std::size_t i = 0; i < count; ++i) picked.push_back(i * (n - 1) / (count - 1));
  }
  return picked;
}

class Builder {
public:
  explicit Builder(const std::string& root) : root_(root) {}

  Status scan(std::vector<DatasetEntry>& entries, DatasetLayout& layout) {
    std::error_code ec;
    if (!fs::is_directory(root_, ec))
      return makeError(root_ + ": the data folder does not exist or is not a folder");
    std::vector<std::string> paths;
    fs::recursive_directory_iterator it(root_, fs::directory_options::skip_permission_denied, ec);
    if (ec) return makeError(root_ + ": cannot read the data folder (" + ec.message() + ")");
    for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
      if (ec) return makeError(root_ + ": cannot read the data folder (" + ec.message() + ")");
      std::error_code type_ec;
      if (it->is_regular_file(type_ec) && ImageDataset::isImageFile(it->path().string()))
        paths.push_back(it->path().string());
    }
    if (paths.empty())
      return makeError(root_ + ": no images found (looked for .jpg, .jpeg, .png, .webp, .bmp in every subfolder)");
    std::sort(paths.begin(), paths.end());

    bool msls = true;
    std::vector<std::vector<std::string>> parts(paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i) {
      for (const auto& part : fs::path(paths[i]).lexically_relative(root_)) parts[i].push_back(part.string());
      const auto& p = parts[i];
      const std::size_t n = p.size();
      if (n < 4 || p[n - 2] != "images" || (p[n - 3] != "database" && p[n - 3] != "query")) msls = false;
    }
    layout = msls ? DatasetLayout::Msls : DatasetLayout::Folder;
    entries.resize(paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i) {
      DatasetEntry& e = entries[i];
      const auto& p = parts[i];
      const std::size_t n = p.size();
      e.path = paths[i];
      if (!msls) {
        e.group = n > 1 ? p[0] : ".";
        continue;
      }
      e.group = p[n - 4];
      e.subset = p[n - 3];
      e.msls_split = n >= 5 ? p[n - 5] : "";
      const std::string folder = fs::path(paths[i]).parent_path().parent_path().string();
      auto meta = metadata_.find(folder);
      if (meta == metadata_.end()) meta = metadata_.emplace(folder, MslsMetadata::read(folder)).first;
      const MslsImageInfo info = meta->second.info(fs::path(paths[i]).stem().string());
      e.sequence = info.sequence;
      e.frame = info.frame;
      e.night = info.night;
      e.pano = info.pano;
    }
    return {};
  }

  // The first problem of `which` CSV among the folders `entries` come from, or "".
  std::string csvProblem(const std::vector<DatasetEntry>& entries,
                         const std::string& (MslsMetadata::*which)() const) const {
    for (const auto& e : entries) {
      const std::string folder = fs::path(e.path).parent_path().parent_path().string();
      const auto meta = metadata_.find(folder);
      if (meta != metadata_.end() && !(meta->second.*which)().empty()) return (meta->second.*which)();
    }
    return {};
  }

private:
  std::string root_;
  std::map<std::string, MslsMetadata> metadata_;
};

template <class Keep>
void keepIf(std::vector<DatasetEntry>& entries, Keep keep) {
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [&](const DatasetEntry& e) { return !keep(e); }),
                entries.end());
}

// Records how many images are left after each filter.
using StepRecorder = std::function<void(const char*)>;

// Filters that only the MSLS layout has, and city names that are not among `groups` (sorted),
// refused by name.
Status checkFilterNames(const std::string& root, const DatasetFilter& filter, bool msls,
                        const std::vector<std::string>& groups) {
  const std::string where = root + ": ";
  if (!msls) {
    const char* needs_msls = filter.msls_split != "all"   ? "data.msls_split"
                             : filter.subset != "all"     ? "data.subset"
                             : filter.drop_panoramas      ? "data.drop_panoramas"
                             : filter.time_of_day != "all" ? "data.time_of_day"
                             : filter.max_per_sequence > 0 ? "data.max_per_sequence"
                                                           : nullptr;
    if (needs_msls)
      return makeError(where + std::string(needs_msls) +
                       " needs the MSLS layout (<city>/database|query/images/*.jpg with its CSV "
                       "files); this is a plain folder of images");
  }
  for (const auto* list : {&filter.cities, &filter.exclude_cities, &filter.holdout_cities})
    for (const auto& name : *list)
      if (!std::binary_search(groups.begin(), groups.end(), name))
        return makeError(where + "unknown city \"" + name + "\" in " +
                         (list == &filter.cities           ? "data.cities"
                          : list == &filter.exclude_cities ? "data.exclude_cities"
                                                           : "data.holdout_cities") +
                         "; " + (msls ? "cities" : "folders") + " here: " + joined(groups));
  return {};
}

// The split, subset, city, panorama and time-of-day filters, in that order.
Status applyEntryFilters(std::vector<DatasetEntry>& entries, const Builder& builder, const DatasetFilter& filter,
                         const StepRecorder& step) {
  if (filter.msls_split != "all") {
    keepIf(entries, [&](const DatasetEntry& e) { return e.msls_split == filter.msls_split; });
    step("msls_split");
  }
  if (filter.subset != "all") {
    keepIf(entries, [&](const DatasetEntry& e) { return e.subset == filter.subset; });
    step("subset");
  }
  if (!filter.cities.empty()) {
    const std::set<std::string> keep(filter.cities.begin(), filter.cities.end());
    keepIf(entries, [&](const DatasetEntry& e) { return keep.count(e.group) != 0; });
    step("cities");
  }
  if (!filter.exclude_cities.empty()) {
    const std::set<std::string> drop(filter.exclude_cities.begin(), filter.exclude_cities.end());
    keepIf(entries, [&](const DatasetEntry& e) { return drop.count(e.group) == 0; });
    step("exclude_cities");
  }
  if (filter.drop_panoramas) {
    if (auto problem = builder.csvProblem(entries, &MslsMetadata::rawProblem); !problem.empty())
      return makeError("data.drop_panoramas needs raw.csv: " + problem);
    keepIf(entries, [](const DatasetEntry& e) { return e.pano != 1; });
    step("panoramas");
  }
  if (filter.time_of_day != "all") {
    if (auto problem = builder.csvProblem(entries, &MslsMetadata::postprocessedProblem); !problem.empty())
      return makeError("data.time_of_day needs postprocessed.csv: " + problem);
    const int want = filter.time_of_day == "night" ? 1 : 0;
    keepIf(entries, [&](const DatasetEntry& e) { return e.night == want; });
    step("time_of_day");
  }
  return {};
}

// Keeps `part` of the held-out split (cities, and sequences by a seeded hash); returns how many
// images the other part has.
std::int64_t keepPart(std::vector<DatasetEntry>& entries, const std::string& root, const DatasetFilter& filter,
                      DatasetPart part) {
  const std::set<std::string> held(filter.holdout_cities.begin(), filter.holdout_cities.end());
  auto heldOut = [&](const DatasetEntry& e) {
    if (held.count(e.group)) return true;
    if (filter.holdout_fraction <= 0) return false;
    const std::string unit =
        e.sequence.empty() ? fs::path(e.path).lexically_relative(root).generic_string() : e.sequence;
    return unitHash(filter.holdout_seed, unit) < filter.holdout_fraction;
  };
  const std::size_t before = entries.size();
  if (part != DatasetPart::All)
    keepIf(entries, [&](const DatasetEntry& e) { return heldOut(e) == (part == DatasetPart::Holdout); });
  return static_cast<std::int64_t>(before - entries.size());
}

// At most `max_per_sequence` frames of each sequence, evenly spaced in frame order.
Status keepPerSequence(std::vector<DatasetEntry>& entries, const Builder& builder, const DatasetFilter& filter) {
  if (auto problem = builder.csvProblem(entries, &MslsMetadata::seqInfoProblem); !problem.empty())
    return makeError("data.max_per_sequence needs seq_info.csv: " + problem);
  std::unordered_map<std::string, std::vector<std::size_t>> sequences;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (!entries[i].sequence.empty()) sequences[entries[i].sequence].push_back(i);
  std::vector<bool> keep(entries.size(), true);
  for (auto& [name, members] : sequences) {
    std::stable_sort(members.begin(), members.end(),
                     [&](std::size_t a, std::size_t b) { return entries[a].frame < entries[b].frame; });
    std::vector<bool> picked(members.size(), false);
    for (std::size_t i : evenlySpaced(members.size(), static_cast<std::size_t>(filter.max_per_sequence)))
      picked[i] = true;
    for (std::size_t i = 0; i < members.size(); ++i) keep[members[i]] = picked[i];
  }
  std::vector<DatasetEntry> kept;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (keep[i]) kept.push_back(std::move(entries[i]));
  entries = std::move(kept);
  return {};
}

}  // namespace

const char* layoutName(DatasetLayout layout) { return layout == DatasetLayout::Msls ? "MSLS" : "folder"; }

bool ImageDataset::isImageFile(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".webp" || ext == ".bmp";
}

Result<ImageDataset> ImageDataset::open(const std::string& root, const DatasetFilter& filter, DatasetPart part) {
  ImageDataset d;
  d.root_ = root;
  Builder builder(root);
  if (Status scanned = builder.scan(d.entries_, d.layout_); !scanned) return makeError(scanned.error());
  auto& entries = d.entries_;
  std::set<std::string> groups;
  for (const auto& e : entries) groups.insert(e.group);
  d.all_groups_.assign(groups.begin(), groups.end());
  d.steps_.push_back({"found", static_cast<std::int64_t>(entries.size())});
  const bool msls = d.layout_ == DatasetLayout::Msls;
  if (Status named = checkFilterNames(root, filter, msls, d.all_groups_); !named) return makeError(named.error());
  const StepRecorder step = [&](const char* name) {
    d.steps_.push_back({name, static_cast<std::int64_t>(entries.size())});
  };
  if (Status filtered = applyEntryFilters(entries, builder, filter, step); !filtered)
    return makeError(filtered.error());
  if (filter.hasHoldout()) {
    d.other_part_ = keepPart(entries, root, filter, part);
    step(part == DatasetPart::Holdout ? "held-out part" : "training part");
  }
  if (filter.max_per_sequence > 0) {
    if (Status kept = keepPerSequence(entries, builder, filter); !kept) return makeError(kept.error());
    step("max_per_sequence");
  }
  if (entries.empty()) {
    std::string trail;
    for (const auto& s : d.steps_) trail += (trail.empty() ? "" : ", ") + s.name + " " + std::to_string(s.remaining);
    return makeError(root + ": no image left after the filters (" + trail + ")");
  }
  return d;
}

std::vector<GroupCount> ImageDataset::groupCounts() const {
  std::map<std::string, GroupCount> counts;
  std::map<std::string, std::set<std::string>> sequences;
  for (const auto& e : entries_) {
    GroupCount& c = counts[e.group];
    c.group = e.group;
    ++c.images;
    if (!e.sequence.empty()) sequences[e.group].insert(e.sequence);
  }
  std::vector<GroupCount> out;
  for (auto& [name, count] : counts) {
    count.sequences = static_cast<std::int64_t>(sequences[name].size());
    out.push_back(count);
  }
  return out;
}

}  // namespace streetgan
