#include "core/data/demo_data_generator.h"

#include "core/data/street_scene_renderer.h"
#include "core/util/atomic_file.h"

#include <filesystem>
#include <iomanip>
#include <random>
#include <sstream>

namespace streetgan {

namespace fs = std::filesystem;

namespace {

std::string makeKey(std::mt19937_64& rng) {
  static const char alphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_";
  std::string key;
  for (int i = 0; i < 22; ++i) key += alphabet[rng() % 63];
  return key;
}

struct CsvFiles {
  std::ostringstream seq_info, postprocessed, raw;
  int row = 0;
  CsvFiles() {
    for (auto* stream : {&seq_info, &postprocessed, &raw}) *stream << std::fixed;
    seq_info << ",key,sequence_key,frame_number\n";
    postprocessed << ",key,easting,northing,unique_cluster,control_panel,night,view_direction\n";
    raw << ",key,lon,lat,ca,captured_at,pano\n";
  }
};

}  // namespace

DemoDataGenerator::DemoDataGenerator(DemoDataOptions options) : options_(std::move(options)) {}

std::vector<std::string> DemoDataGenerator::cityNames() {
  return {"alderbrook", "bayfield", "cedarton", "dunmore",
          "elmsworth",  "fairhaven", "glenrock", "hollowell"};
}

Result<DemoDataSummary> DemoDataGenerator::generate(
    const std::function<bool(int, int)>& progress) const {
  const auto& o = options_;
  if (o.cities < 1 || o.cities > 8)
    return makeError("--cities " + std::to_string(o.cities) + " is not allowed; allowed: 1 to 8");
  if (o.sequences_per_city < 1 || o.sequences_per_city > 1000)
    return makeError("--sequences " + std::to_string(o.sequences_per_city) +
                     " is not allowed; allowed: 1 to 1000");
  if (o.frames_per_sequence < 1 || o.frames_per_sequence > 1000)
    return makeError("--frames " + std::to_string(o.frames_per_sequence) +
                     " is not allowed; allowed: 1 to 1000");
  std::error_code ec;
  if (fs::exists(fs::path(o.out_dir) / "train_val", ec))
    return makeError(o.out_dir + ": already holds a train_val folder; choose an empty folder");

  const int total = o.cities * o.sequences_per_city * o.frames_per_sequence;
  std::mt19937_64 rng(o.seed);
  DemoDataSummary summary;
  const auto names = cityNames();
  int done = 0;
  for (int c = 0; c < o.cities; ++c) {
    const std::string city = names[static_cast<std::size_t>(c)];
    summary.cities.push_back(city);
    CsvFiles csv[2];  // database, query
    const double city_east = 500000.0 + 20000.0 * c, city_north = 5700000.0 + 15000.0 * c;
    for (int q = 0; q < o.sequences_per_city; ++q) {
      const bool query = o.sequences_per_city > 1 && q == o.sequences_per_city - 1;
      const fs::path folder = fs::path(o.out_dir) / "train_val" / city / (query ? "query" : "database");
      fs::create_directories(folder / "images", ec);
      if (ec) return makeError((folder / "images").string() + ": cannot create the folder (" + ec.message() + ")");
      const std::string sequence_key = makeKey(rng);
      const StreetSceneRenderer scene(rng(), o.width, o.height);
      const bool night = scene.isNight();
      const double heading = static_cast<double>(rng() % 360);
      CsvFiles& files = csv[query ? 1 : 0];
      for (int f = 0; f < o.frames_per_sequence; ++f) {
        const std::string key = makeKey(rng);
        auto jpeg = scene.renderJpeg(f);
        if (!jpeg) return makeError(jpeg.error());
        const std::string path = (folder / "images" / (key + ".jpg")).string();
        if (Status written = writeFileAtomically(path, *jpeg); !written) return makeError(written.error());
        const double easting = city_east + 300.0 * q + f * StreetSceneRenderer::kMetresPerFrame;
        const double northing = city_north + 120.0 * q;
        const long long captured = 1500000000000LL + (static_cast<long long>(c) * 1000 + q) * 86400000LL + f * 1000LL;
        files.seq_info << files.row << ',' << key << ',' << sequence_key << ',' << f << '\n';
        files.postprocessed << std::setprecision(2) << files.row << ',' << key << ',' << easting << ',' << northing << ','
                            << q << ",0," << (night ? "True" : "False") << ",Forward\n";
        files.raw << std::setprecision(6) << files.row << ',' << key << ',' << (4.0 + c + easting * 1e-5) << ','
                  << (52.0 + c + northing * 1e-6) << ',' << heading << ',' << captured
                  << ",False\n";
        ++files.row;
        ++summary.images;
        ++done;
        if (progress && !progress(done, total))
          return makeError("stopped after " + std::to_string(done) + " of " + std::to_string(total) + " images");
      }
    }
    for (int part = 0; part < 2; ++part) {
      if (csv[part].row == 0) continue;
      const fs::path folder = fs::path(o.out_dir) / "train_val" / city / (part ? "query" : "database");
      for (const auto& [name, text] :
           {std::pair<const char*, std::string>{"seq_info.csv", csv[part].seq_info.str()},
            {"postprocessed.csv", csv[part].postprocessed.str()},
            {"raw.csv", csv[part].raw.str()}})
        if (Status written = writeFileAtomically((folder / name).string(), text); !written)
          return makeError(written.error());
    }
  }
  return summary;
}

}  // namespace streetgan
