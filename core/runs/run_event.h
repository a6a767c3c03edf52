#pragma once
// RunEvent: one event of the protocol (docs/events.md) as a typed struct. The trainer, `streetgan
// import` and the rank launcher make these values; runEventJson() (core/runs/run_event_writer.h)
// is the one serializer that turns them into the lines of events.jsonl, and parseRunEvent() reads
// a line's object back into the same value. In-process listeners (the CLI's status line, the
// TensorBoard copy) take the typed value as it is made; nothing parses back what it just wrote.
//
// Reading: a field that is absent or of the wrong type is empty (std::nullopt, NaN for figures, ""
// for text) — a reader decides what that means, nothing here throws. Types this version does not
// know parse to std::monostate; the StreamEvent that carries a RunEvent keeps the whole object, so
// unknown fields and types survive for forward compatibility. Writing: each struct says which of
// its fields are written when empty (as null) and which are left out.
//
// The figures derived from events live here too, in one place: the fractional epoch of a step and
// of an imported loss pair, and the window of recent data-wait shares behind "data-starved".
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace streetgan::events {

/// An integer counter as written: nullopt when absent, not a number, or outside int64.
using Count = std::optional<std::int64_t>;

/// run_started's "dataset": the data the run trains on.
struct DatasetSummary {
  std::string root, layout;
  Count images, held_out, decode_reduction, workers;
  std::optional<std::string> cache;  ///< the image cache; written as null without one
};

/// Written as null when empty, as `resumed_from`, `job` and `backend` are.
using NullableText = std::optional<std::string>;

struct RunStarted {
  nlohmann::json config;          ///< the run's whole config object (null when absent)
  std::string device, precision;  ///< rank 0's device
  Count params_g, params_d;
  NullableText resumed_from;                 ///< the checkpoint it continues from, relative to the run
  std::optional<std::string> imported_from;  ///< `streetgan import`: the original checkpoint
  Count epoch, step, images_seen, world_size;
  // The launch: written by the trainer; absent from an imported run's event, which has no pid.
  Count pid;                         ///< the training process; the fields below are written with it
  std::uint64_t pid_start_time = 0;  ///< 0: not logged
  std::optional<DatasetSummary> dataset;
  Count batches_per_epoch, nodes, threads;  ///< nodes: hosts of the job (absent: one)
  NullableText job;                         ///< the launch this process belongs to (several ranks)
  std::string backend;                      ///< the collectives' backend; "" alone (written as null)
  std::vector<std::string> devices;         ///< each rank's device, in rank order
  std::string version;                      ///< the program that trained
  // Read from `config` by setConfig() (parseRunEvent and every writer call it).
  bool has_config = false;           ///< "config" is an object
  std::string preset;                ///< config.preset
  Count config_epochs, config_batch_size;

  /// Sets `config` and what is read from it (has_config, preset, config_epochs, config_batch_size).
  void setConfig(nlohmann::json object);
};

struct Step {
  Count epoch, iteration, iterations, step, images_seen;  ///< epoch: 1-based, in progress
  double loss_d = 0, loss_g = 0, d_x = 0, d_g_z1 = 0, d_g_z2 = 0;  ///< NaN when absent
  double rt = 0;  ///< ADA's r_t (NaN when absent: runs before it was recorded)
  double images_per_s = 0, data_wait_fraction = 0;                 ///< NaN when absent
  std::optional<double> loss_scale;                                ///< fp16's loss scaler, when on
  std::optional<double> ada_p;       ///< ADA's probability p this step ran with (augment.ada_target > 0)
  std::optional<bool> skipped_step;  ///< the loss scaler skipped this step (with loss_scale)
  /// `streetgan import`'s last loss pair: written with its counters and two losses only.
  bool imported = false;
};

struct ImportedLosses {
  double first_step = 0, images_per_step = 0, epochs = 0, total_steps = 0;  ///< NaN when absent
  Count steps;                                                              ///< pairs in this event
  bool has_loss_d = false, has_loss_g = false;  ///< the arrays are there
  std::vector<double> loss_d, loss_g;           ///< NaN where the value is null or not a number
};

struct EpochEnd {
  Count epoch, epochs, step, images_seen;
  double mean_loss_d = 0, mean_loss_g = 0, seconds = 0;  ///< NaN when absent
  Count steps, images, skipped_files;                    ///< this epoch's
};

struct Samples {
  std::string path;  ///< relative to the run directory; "" when absent
  Count step, epoch, images_seen;
  bool imported = false;  ///< a grid `streetgan import` took from the original checkpoint
};

struct Parzen {
  Count epoch, step, images_seen;
  double sigma = 0, mean_ll = 0, standard_error = 0;  ///< NaN when absent
  Count n_test, n_valid, n_samples;
  std::vector<std::pair<double, double>> curve;  ///< (σ, mean log-likelihood on the validation split)
  double seconds = 0;                            ///< NaN when absent
};

/// A quality evaluation during training: its figures by name (docs/evaluation.md), at most
/// kMaxFigures of them, finite numbers only.
struct Metrics {
  static constexpr std::size_t kMaxFigures = 64;
  Count epoch, step, images_seen;
  std::vector<std::pair<std::string, double>> figures;
  std::string feature_space;
  Count n_samples, n_train, skipped_due_points;
  double seconds = 0;  ///< NaN when absent
};

/// Byte counts and cores are whole numbers and written as integers.
struct System {
  Count epoch, step, images_seen;
  double seconds = 0, cpu_percent = 0, cores = 0, rss_bytes = 0;  ///< NaN when absent
  double host_memory_available_bytes = 0, host_memory_total_bytes = 0, loader_bytes_per_s = 0;
  bool has_gpu = false;  ///< "gpu" is an object; the GPU figures are NaN otherwise
  Count gpu_index;
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
  Count step;                        ///< an alarm's step
  Count skipped_total;               ///< a skipped file: files skipped so far
};

struct Error {
  std::string message;
};

struct RunFinished {
  std::string status;   ///< events::status::k…; "" when absent
  std::string message;  ///< "" when absent (written only when there is one)
  Count epoch, step, images_seen;
  std::vector<std::int64_t> rank_checksums;  ///< several ranks: a CRC-32 of each one's parameters
};

/// A distributed run's failed attempt was restarted (--max-restarts, torchrun's).
struct Restart {
  Count attempt, max_restarts, step, images_seen;
  std::string cause;  ///< the failed attempt's error; "" when absent
  NullableText resumed_from;
};

using RunEvent = std::variant<std::monostate, RunStarted, Step, ImportedLosses, EpochEnd, Samples, Parzen, Metrics,
                              System, Checkpoint, Warning, Error, RunFinished, Restart>;

/// The typed event of `type` read from `body` (the whole object); std::monostate for a type this
/// version does not know.
RunEvent parseRunEvent(const std::string& type, const nlohmann::json& body);

/// The images seen where the event stands; nullopt for a type without them (or when absent).
Count imagesSeen(const RunEvent& event);

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
