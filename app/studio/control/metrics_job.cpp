#include "app/studio/control/metrics_job.h"

#include "core/runs/run_directory.h"

#include <QFileInfo>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace streetgan::studio {

QStringList MetricsRequest::arguments() const {
  QStringList arguments{"metrics", "--json", "--progress", "--save", "--n", QString::number(samples),
                        "--n-train", QString::number(train)};
  arguments << (every ? QStringList{"--run", run_dir, "--every-checkpoint"} : QStringList{"--checkpoint", checkpoint});
  if (!only.isEmpty()) arguments << "--only" << only.join(',');
  return arguments;
}

MetricsJob::MetricsJob(QString program, QObject* parent)
    : ChildProcessJob(std::move(program), parent), result_(std::make_unique<nlohmann::json>()) {
  setCancelKillDelay(2000);  // sampling does not look at SIGINT
}

MetricsJob::~MetricsJob() = default;

Status MetricsJob::start(const MetricsRequest& request) {
  if (isRunning()) return failure("Quality metrics are already running.");
  if (request.every ? request.run_dir.isEmpty() : request.checkpoint.isEmpty())
    return failure("Choose a run with a checkpoint first.", ErrorKind::Input);
  every_ = request.every;
  scored_ = 0;
  checkpoints_.clear();
  if (every_) {
    // The checkpoints the program will score, in its order, for the progress over the run.
    for (const std::string& path : RunDirectory(request.run_dir.toStdString()).checkpoints())
      checkpoints_ << QFileInfo(QString::fromStdString(path)).fileName();
  } else {
    checkpoints_ << QFileInfo(request.checkpoint).fileName();
  }
  if (Status started = startProcess(request.arguments()); !started)
    return failure("Cannot start " + program() + ": " + errorText(started));
  return {};
}

void MetricsJob::onProgress(const ProgressLine& line) {
  if (line.task != kProgressTaskMetrics) return;
  const int count = std::max(1, static_cast<int>(checkpoints_.size()));
  // In floating point: the counts of a line cannot overflow anything here (done ≤ total).
  const double of_this = static_cast<double>(line.done) / static_cast<double>(line.total);
  const double fraction = std::min(1.0, (scored_ + of_this) / count);
  emit progressChanged(static_cast<int>(100.0 * fraction));
  if (line.done >= line.total) {  // the last line of one checkpoint: all its stages are done
    scored_ = std::min(scored_ + 1, count);
    return;
  }
  const QString stage = QString::fromStdString(line.detail);
  if (!every_) {
    emit stageChanged(stage);
    return;
  }
  const int index = std::min(scored_, count - 1);
  const QString name = index < checkpoints_.size() ? checkpoints_[index] : QString();
  emit stageChanged(QString("%1/%2: %3: %4").arg(index + 1).arg(count).arg(name, stage));
}

ChildProcessJob::Outcome MetricsJob::outcome(int exit_code, int signal_number) {
  if (exit_code != 0 || signal_number != 0) {
    const QString why = signal_number != 0 ? QString("cancelled") : failureReason(exit_code);
    return {false, "Quality metrics failed: " + why};
  }
  nlohmann::json result = nlohmann::json::parse(standardOutput().toStdString(), nullptr, false);
  if (every_ ? !result.is_array() || result.empty() : !result.is_object()) return {false, "Quality metrics: the output was not the expected JSON"};
  *result_ = std::move(result);
  return {true, {}};
}

}  // namespace streetgan::studio
