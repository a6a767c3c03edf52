#pragma once
// RunHistory: every point of one run, read from its events.jsonl, for comparing runs side by
// side: the steps (losses, D outputs, ADA's r_t, throughput), the Parzen estimates, the quality
// metrics (`metrics` events: their figures and feature space), the sample grids and the `system`
// events, each placed at its images seen, epoch and seconds since the run first started; the
// quality alarms (`warning` events with an alarm) counted by kind; and the run's config as its
// first run_started gave it (preset, batch, device, world size).
//
// RunHistoryReader is fed the log's bytes as they come (a running run is followed without
// reading it again); only complete lines count, malformed ones are skipped and counted. A resumed
// run's run_started drops the points its predecessor logged past that run_started's images_seen,
// as the event protocol says (alarms carry no place and are kept). runFigures() turns a history
// into the compare table's figures.
// Nothing here throws on bad input.
#include "core/runs/event_stream_reader.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace streetgan {

struct RunHistory {
  std::string preset, device, backend;  ///< config preset; rank 0's device; "" alone
  std::int64_t world_size = 1, batch_size = 0, epochs = 0;
  std::int64_t process_starts = 0;      ///< run_started events: above 1 after a resume
  /// The latest run_started's config, flattened to keys ("augment.shift") and their JSON text
  /// ("0.2"), at most kMaxConfigEntries of them (a resume may have changed some).
  std::map<std::string, std::string> config;
  static constexpr std::size_t kMaxConfigEntries = 512;

  struct Step {
    double images_seen = 0, epoch = 0, seconds = 0;  ///< epoch: fractional (e.g. 2.5: half of the third)
    double loss_d = 0, loss_g = 0, d_x = 0, d_g_z1 = 0, d_g_z2 = 0, images_per_s = 0, data_wait_fraction = 0;
    double rt = 0;  ///< ADA's r_t; NaN when the step has none (runs before it was logged, imported losses)
    double ada_p = 0;  ///< ADA's p; NaN when the run has no ADA
  };
  struct Parzen {
    double images_seen = 0, epoch = 0, seconds = 0, mean_ll = 0, standard_error = 0;
  };
  /// A quality evaluation during training (a `metrics` event); epoch: completed epochs, as logged.
  struct Metrics {
    double images_seen = 0, epoch = 0, seconds = 0;
    std::vector<std::pair<std::string, double>> figures;  ///< name (quality_figure::k…) → value, finite only
    std::string feature_space;                            ///< where FID, KID and precision/recall were computed
    /// The figure called `name`, or nullopt when this evaluation has none.
    std::optional<double> figure(std::string_view name) const;
  };
  struct Samples {
    double images_seen = 0, seconds = 0;
    std::string path;  ///< relative to the run directory
  };
  struct System {
    double images_seen = 0, seconds = 0;
    double cpu_percent = -1, cores = 0, rss_bytes = -1, host_memory_total_bytes = -1;
    double gpu_utilization_percent = -1, gpu_memory_used_bytes = -1;  ///< -1: no GPU figures
  };
  std::vector<Step> steps;
  std::vector<Parzen> parzen;
  std::vector<Metrics> metrics;
  std::vector<Samples> samples;
  std::vector<System> system;
  std::vector<double> epoch_seconds;  ///< each epoch_end's seconds
  std::map<std::string, std::int64_t> alarms;  ///< quality alarms by kind ("collapse", "memorisation", "overfitting")
  std::int64_t malformed_lines = 0;
};

class RunHistoryReader {
public:
  /// The next bytes of events.jsonl.
  void feed(std::string_view bytes);
  /// Bytes consumed up to the last complete line: where to read on from.
  std::uint64_t bytesRead() const { return reader_.completeBytes(); }
  const RunHistory& history() const { return history_; }

private:
  void add(const StreamEvent& event);
  RunHistory history_;
  EventStreamReader reader_;
  std::int64_t unusable_ = 0;  ///< events of a known type that held nothing to place (counted as malformed)
  double first_started_ = -1;  ///< time of the first run_started: the seconds axis's zero
  double iterations_ = 0;      ///< batches per epoch, from the latest step
};

/// The figures of one run for the compare table; nullopt where the log has nothing to say.
struct RunFigures {
  std::optional<double> images_per_s;        ///< median of the steps' images/s
  std::optional<double> images_per_hour;
  std::optional<double> seconds_per_epoch;   ///< mean over the finished epochs
  std::optional<double> best_parzen;         ///< highest mean log-likelihood
  std::optional<double> peak_rss_bytes;
  std::optional<double> mean_cpu_percent;    ///< of the run's cores (100 = all of them busy)
  std::optional<double> mean_gpu_percent;
  std::optional<double> peak_gpu_memory_bytes;
  std::optional<double> latest_swd;          ///< SWD ×10³ of the newest evaluation that has one
  std::optional<double> latest_fid;          ///< FID of the newest evaluation that has one …
  std::string latest_fid_space;              ///< … and the feature space it was computed in
  std::optional<double> latest_copy_rate;    ///< copy rate of the newest evaluation that has one
  std::int64_t alarms = 0;                   ///< quality alarms of every kind
};

RunFigures runFigures(const RunHistory& history);

/// Dollars per million images at `dollars_per_hour` (nullopt when either is unknown or zero).
std::optional<double> dollarsPerMillionImages(std::optional<double> dollars_per_hour, std::optional<double> images_per_hour);

}  // namespace streetgan
