#pragma once
// GalleryRenderer: the rendering side of `streetgan serve`. A fixed number of worker threads
// each hold their own copy of the generator (eval mode), so requests never share a module; a
// bounded queue in front of them refuses work beyond its size at once (the server answers 503)
// instead of letting requests pile up. Grids are the images of `streetgan sample`, walks go
// through WalkExporter, the same code as `streetgan walk` and the studio's export.
//
// The model comes from one checkpoint, or from a run directory whose newest checkpoint is
// followed: a newer one is read into memory, then every worker copies it before its next job.
// Workers never read the file again, so a checkpoint pruned after the switch (training keeps only
// the newest few) changes nothing; a worker that cannot make its copy goes on with its model.
// Failures of a job (an encoder error) come back as an Error; a checkpoint that cannot be read
// is reported by open() and, when following, on stderr, leaving the previous model in use. No
// exception leaves a thread: each one is reported as one line.
//
// Walks are encoded to files in a scratch folder of the server's own, made by open() with
// mkdtemp (a fresh name, mode 0700, never one that already exists) in $TMPDIR or /tmp, and
// removed with everything in it when the renderer goes.
#include "core/train/generator_choice.h"
#include "core/util/result.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace streetgan::cli {

struct GalleryModelInfo {
  std::string checkpoint;   ///< the file in use
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  int img_size = 64;
  int nz = 100;
  std::string preset;
  std::string run;
  std::string generator;    ///< "ema" or "raw" (generator_choice.h)
};

/// One picture or video to make. Sizes are the side of each generated image, in pixels.
struct GalleryJob {
  enum class Kind { Grid, Walk } kind = Kind::Grid;
  int count = 16;                ///< images in the grid, or frames of the walk
  std::uint64_t seed = 0;
  int size = 64;
  std::string format = "gif";    ///< walks: gif, mp4 or webm
};

struct GalleryResult {
  std::string bytes;
  std::string content_type;
  GalleryModelInfo model;
};

class GalleryRenderer {
public:
  struct Options {
    std::string checkpoint;       ///< one checkpoint …
    std::string run_dir;          ///< … or a run whose newest checkpoint is followed
    int workers = 2;              ///< render threads, each with its own generator
    int queue = 8;                ///< jobs that may wait for a worker; more are refused
    int follow_seconds = 5;       ///< how often a followed run is looked at
    GeneratorChoice generator = GeneratorChoice::Default;  ///< which of its generators renders
  };

  explicit GalleryRenderer(Options options);
  ~GalleryRenderer();
  GalleryRenderer(const GalleryRenderer&) = delete;
  GalleryRenderer& operator=(const GalleryRenderer&) = delete;

  /// Makes the scratch folder, loads the model and starts the workers (and the follower); an
  /// Error says which failed (a missing $TMPDIR, an unreadable checkpoint, a thread the system
  /// refused).
  Status open();
  /// Queues `job`; nothing when the queue is full (the caller answers 503).
  std::optional<std::future<Result<GalleryResult>>> submit(const GalleryJob& job);
  GalleryModelInfo model() const;
  int pendingJobs() const;
  /// Jobs a worker is rendering now.
  int activeJobs() const;
  /// Stops taking jobs: queued ones fail at once ("the server is stopping"), a walk being
  /// rendered stops at its next batch. Any thread; the workers end with the renderer.
  void cancel();
  bool stopping() const { return cancelled_.load(); }

private:
  struct Task {
    GalleryJob job;
    std::promise<Result<GalleryResult>> promise;
  };
  struct Worker;
  struct Loaded;
  void work(int index);
  void serve(Worker& worker, Task& task);
  void follow();
  void followOnce(std::string& reported);
  void stopThreads();
  Result<std::string> newestCheckpoint() const;

  Options options_;
  std::string scratch_;           // the scratch folder; empty until open() made it
  mutable std::mutex mutex_;
  std::condition_variable wake_, follow_wake_;
  std::deque<Task> tasks_;
  GalleryModelInfo model_;                // guarded by mutex_
  std::shared_ptr<const Loaded> loaded_;  // guarded by mutex_: the model the workers copy
  std::uint64_t generation_ = 0;          // bumped when model_ changes
  int active_ = 0;                        // guarded by mutex_: jobs taken by a worker, not yet answered
  bool stopping_ = false;
  std::atomic<bool> cancelled_{false};    // cancel() was called: walks stop, new jobs are refused
  std::vector<std::thread> threads_;
  std::thread follower_;
};

}  // namespace streetgan::cli
