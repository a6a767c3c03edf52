#include "app/studio/control/parzen_job.h"

#include "app/studio/control/child_process.h"

#include <QTimer>

#include <nlohmann/json.hpp>

#include <signal.h>

namespace streetgan::studio {

QStringList ParzenRequest::arguments() const {
  QStringList arguments{"parzen",    "--json",  "--progress",           "--save",  "--n-samples", QString::number(samples),
                        "--n-valid", QString::number(valid), "--n-test", QString::number(test)};
  arguments << (every ? QStringList{"--run", run_dir} : QStringList{"--checkpoint", checkpoint});
  if (!valid_dir.isEmpty()) arguments << "--valid" << valid_dir << "--test" << test_dir;
  return arguments;
}

ParzenJob::ParzenJob(QString program, QObject* parent)
    : QObject(parent), program_(std::move(program)), result_(std::make_unique<nlohmann::json>()) {}

ParzenJob::~ParzenJob() = default;

bool ParzenJob::start(const ParzenRequest& request, QString* error) {
  if (isRunning()) {
    *error = "A Parzen estimate is already running.";
    return false;
  }
  if (request.valid_dir.isEmpty() != request.test_dir.isEmpty()) {
    *error = "Give both a validation and a test folder, or neither (the run's held-out split).";
    return false;
  }
  process_ = std::make_unique<ChildProcess>();
  stdout_.clear();
  stderr_.clear();
  connect(process_.get(), &ChildProcess::standardOutput, this, [this](const QByteArray& bytes) { stdout_ += bytes; });
  connect(process_.get(), &ChildProcess::standardError, this, &ParzenJob::onStandardError);
  connect(process_.get(), &ChildProcess::finished, this, &ParzenJob::onFinished);
  QString why;
  if (!process_->start(program_, request.arguments(), &why)) {
    process_.reset();
    *error = "Cannot start " + program_ + ": " + why;
    return false;
  }
  return true;
}

void ParzenJob::onStandardError(const QByteArray& bytes) {
  stderr_ += bytes;
  // "Parzen estimate: 42%" and, over a run, "checkpoint 3/10: …": the latest of each.
  const QList<QByteArray> lines = stderr_.split('\n');
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    if (line->startsWith("Parzen estimate: ")) {
      emit progressChanged(line->mid(17).replace('%', "").trimmed().toInt());
      return;
    }
    if (line->startsWith("checkpoint ")) {
      const QList<QByteArray> counts = line->mid(11).split(':').value(0).split('/');
      if (counts.size() == 2 && counts[1].toInt() > 0) emit progressChanged(100 * (counts[0].toInt() - 1) / counts[1].toInt());
      emit scoringCheckpoint(QString::fromUtf8(line->mid(11)));
      return;
    }
  }
}

void ParzenJob::onFinished(int exit_code, int signal_number) {
  process_.release()->deleteLater();
  if (exit_code != 0 || signal_number != 0) {
    const QString why = signal_number != 0 ? QString("cancelled") : ChildProcess::failureReason(stderr_, exit_code);
    emit finished(false, "Parzen estimate failed: " + why);
    return;
  }
  nlohmann::json result = nlohmann::json::parse(stdout_.toStdString(), nullptr, false);
  if (!result.is_object()) {
    emit finished(false, "Parzen estimate: the output was not JSON");
    return;
  }
  *result_ = std::move(result);
  emit finished(true, {});
}

void ParzenJob::cancel() {
  if (!process_) return;
  process_->sendSignal(SIGINT);
  // Sampling does not look at SIGINT; if the process is still there in 2 s, it is ended.
  QTimer::singleShot(2000, this, [this] {
    if (process_) process_->sendSignal(SIGKILL);
  });
}

}  // namespace streetgan::studio
