#pragma once
// RunEvent: one event of the protocol (docs/events.md) as a typed struct, parsed once from its
// JSON object by parseRunEvent(). Each type the readers use has a struct with its fields; a field
// that is absent or of the wrong type is empty (std::nullopt, NaN for figures, "" for text) — a
// reader decides what that means, nothing here throws. Types this version does not know parse to
// std::monostate; the StreamEvent that carries a RunEvent keeps the whole object, so unknown fields
// and types survive for forward compatibility.
//
// The figures derived from events live here too, in one place: the fractional epoch of a step and
// of an imported loss pair, and the window of recent data-wait shares behind "data-starved".
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace streetgan::events {

/// An integer counter as written: nullopt when absent, not a number, or outside int64.
using Count = std::optional<std::int64_t>;

struct RunStarted {
  std::string device, backend;  ///< rank 0's device; "" alone
  Count world_size, nodes, epoch, step, images_seen, pid;  ///< nodes: hosts of the job (absent: one)
  std::uint64_t pid_start_time = 0;  ///< 0: not logged
  bool has_config = false;           ///< "config" is an object
  std::string preset;                ///< config.preset
  Count config_epochs, config_batch_size;
};

struct Step {
  Count epoch, iteration, iterations, step, images_seen;  ///< epoch: 1-based, in progress
  double loss_d = 0, loss_g = 0, d_x = 0, d_g_z1 = 0, d_g_z2 = 0;  ///< NaN when absent
  double rt = 0;  ///< ADA's r_t (NaN when absent: runs before it was recorded)
  double images_per_s = 0, data_wait_fraction = 0;                 ///< NaN when absent
};

struct ImportedLosses {
  double first_step = 0, images_per_step = 0, epochs = 0, total_steps = 0;  ///< NaN when absent
  bool has_loss_d = false, has_loss_g = false;  ///< the arrays are there
  std::vector<double> loss_d, loss_g;           ///< NaN where the value is null or not a number
};

struct EpochEnd {
  Count epoch, epochs, step, images_seen;
  double mean_loss_d = 0, mean_loss_g = 0, seconds = 0;  ///< NaN when absent
};

struct Samples {
  std::string path;  ///< relative to the run directory; "" when absent
  Count step, epoch, images_seen;
};

struct Parzen {
  Count epoch, step, images_seen;
  double sigma = 0, mean_ll = 0, standard_error = 0;  ///< NaN when absent
};

/// A quality evaluation during training: its figures by name (docs/evaluation.md), at most
/// kMaxFigures of them, finite numbers only.
struct Metrics {
  static constexpr std::size_t kMaxFigures = 64;
  Count epoch, step, images_seen;
  std::vector<std::pair<std::string, double>> figures;
  std::string feature_space;
};

struct System {
  Count epoch, step, images_seen;
  double seconds = 0, cpu_percent = 0, cores = 0, rss_bytes = 0;  ///< NaN when absent
  double host_memory_available_bytes = 0, host_memory_total_bytes = 0, loader_bytes_per_s = 0;
  bool has_gpu = false;  ///< "gpu" is an object; the GPU figures are NaN otherwise
  double gpu_utilization_percent = 0, gpu_memory_used_bytes = 0, gpu_memory_total_bytes = 0, gpu_power_w = 0;
};

struct Checkpoint {
  std::string path;
  Count step, epoch, images_seen;
};

struct Warning {
  std::string message;
  std::optional<std::string> path;   ///< the file concerned, when there is one
  std::optional<std::string> alarm;  ///< a quality alarm: "collapse", "memorisation" or "overfitting"
};

struct Error {
  std::string message;
};

struct RunFinished {
  std::string status;   ///< events::status::k…; "" when absent
  std::string message;  ///< "" when absent
  Count epoch, step, images_seen;
};

/// A distributed run's failed attempt was restarted (--max-restarts, torchrun's).
struct Restart {
  Count attempt, max_restarts, step, images_seen;
  std::string cause;  ///< the failed attempt's error; "" when absent
};

using RunEvent = std::variant<std::monostate, RunStarted, Step, ImportedLosses, EpochEnd, Samples, Parzen, Metrics,
                              System, Checkpoint, Warning, Error, RunFinished, Restart>;

/// The typed event of `type` read from `body` (the whole object); std::monostate for a type this
/// version does not know.
RunEvent parseRunEvent(const std::string& type, const nlohmann::json& body);

/// The epoch a step stands at, fractional: epoch 3, iteration 25 of 100 is 2.25. `iterations` is
/// the step's own count when it has one, else the last one seen (`iterations_fallback`); without
/// either, the epoch's start. `epoch_fallback` stands in for an absent epoch.
double fractionalEpoch(const Step& step, double iterations_fallback = 0, double epoch_fallback = 1);

/// Pair k of an imported_losses event: its step (first_step + k), its images seen and its
/// completed epochs, as docs/events.md places them.
struct ImportedPoint {
  double step = 0, images_seen = 0, epoch = 0;
};
ImportedPoint importedPoint(const ImportedLosses& losses, std::size_t k);

/// The share of time recent steps waited on data: the mean of the last `window` steps' shares,
/// once `enough` have come (one slow batch is not a starved run).
class DataWaitWindow {
public:
  explicit DataWaitWindow(std::size_t window = 50, std::size_t enough = 20) : window_(window), enough_(enough) {}
  /// Adds a step's share (NaN is ignored).
  void add(double wait_fraction);
  /// The mean share, or nullopt before `enough` steps.
  std::optional<double> share() const;
  void clear();

private:
  std::size_t window_, enough_;
  std::vector<double> recent_;
  std::size_t next_ = 0;
};

}  // namespace streetgan::events
