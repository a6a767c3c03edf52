#include "app/studio/control/parzen_job.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace streetgan::studio {

QStringList ParzenRequest::arguments() const {
  QStringList arguments{"parzen",    "--json",  "--progress",           "--save",  "--n-samples", QString::number(samples),
                        "--n-valid", QString::number(valid), "--n-test", QString::number(test)};
  arguments << (every ? QStringList{"--run", run_dir} : QStringList{"--checkpoint", checkpoint});
  if (!valid_dir.isEmpty()) arguments << "--valid" << valid_dir << "--test" << test_dir;
  return arguments;
}

ParzenJob::ParzenJob(QString program, QObject* parent)
    : ChildProcessJob(std::move(program), parent), result_(std::make_unique<nlohmann::json>()) {
  setCancelKillDelay(2000);  // sampling does not look at SIGINT
}

ParzenJob::~ParzenJob() = default;

Status ParzenJob::start(const ParzenRequest& request) {
  if (isRunning()) return failure("A Parzen estimate is already running.");
  if (request.valid_dir.isEmpty() != request.test_dir.isEmpty())
    return failure("Give both a validation and a test folder, or neither (the run's held-out split).",
                   ErrorKind::Input);
  if (Status started = startProcess(request.arguments()); !started)
    return failure("Cannot start " + program() + ": " + errorText(started));
  return {};
}

void ParzenJob::onProgress(const ProgressLine& line) {
  if (line.task != kProgressTaskParzen && line.task != kProgressTaskParzenRun) return;
  // In floating point: 100 × done cannot overflow, whatever counts the line holds (done ≤ total).
  emit progressChanged(static_cast<int>(100.0 * static_cast<double>(line.done) / static_cast<double>(line.total)));
  if (line.task == kProgressTaskParzenRun) {
    // done: the checkpoints scored before the one named in the detail, which is number done + 1.
    const qint64 number = std::min<qint64>(line.done, line.total - 1) + 1;
    emit scoringCheckpoint(QString("%1/%2: %3").arg(number).arg(qint64(line.total)).arg(QString::fromStdString(line.detail)));
  }
}

ChildProcessJob::Outcome ParzenJob::outcome(int exit_code, int signal_number) {
  if (exit_code != 0 || signal_number != 0) {
    const QString why = signal_number != 0 ? QString("cancelled") : failureReason(exit_code);
    return {false, "Parzen estimate failed: " + why};
  }
  nlohmann::json result = nlohmann::json::parse(standardOutput().toStdString(), nullptr, false);
  if (!result.is_object()) return {false, "Parzen estimate: the output was not JSON"};
  *result_ = std::move(result);
  return {true, {}};
}

}  // namespace streetgan::studio
