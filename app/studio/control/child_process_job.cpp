#include "app/studio/control/child_process_job.h"

#include "app/studio/control/child_process.h"

#include <QTimer>

#include <signal.h>

#include <string_view>
#include <utility>

namespace streetgan::studio {

namespace {
constexpr qsizetype kDiagnosticsKeep = 64 * 1024;
}

ChildProcessJob::ChildProcessJob(QString program, QObject* parent) : QObject(parent), program_(std::move(program)) {}

ChildProcessJob::~ChildProcessJob() = default;

void ChildProcessJob::onProgress(const ProgressLine&) {}

Status ChildProcessJob::startProcess(const QStringList& arguments) {
  process_ = std::make_unique<ChildProcess>();
  stdout_.clear();
  stderr_.clear();
  partial_.clear();
  in_long_line_ = false;
  connect(process_.get(), &ChildProcess::standardOutput, this, [this](const QByteArray& bytes) { stdout_ += bytes; });
  connect(process_.get(), &ChildProcess::standardError, this, &ChildProcessJob::onStandardError);
  connect(process_.get(), &ChildProcess::finished, this, &ChildProcessJob::onProcessFinished);
  Status started = process_->start(program_, arguments);
  if (!started) process_.reset();
  return started;
}

bool ChildProcessJob::signalProcess(int signal_number) { return process_ && process_->sendSignal(signal_number); }

void ChildProcessJob::cancel() {
  if (!process_) return;
  process_->sendSignal(SIGINT);
  if (cancel_kill_ms_ < 0) return;
  QTimer::singleShot(cancel_kill_ms_, this, [this] {
    if (process_) process_->sendSignal(SIGKILL);
  });
}

QString ChildProcessJob::failureReason(int exit_code) const { return ChildProcess::failureReason(stderr_, exit_code); }

void ChildProcessJob::onStandardError(const QByteArray& bytes) {
  partial_ += bytes;
  qsizetype start = 0;
  for (qsizetype end = partial_.indexOf('\n'); end >= 0; end = partial_.indexOf('\n', start)) {
    const QByteArray line = partial_.mid(start, end - start);
    // The end of a line already kept as a diagnostic is never a progress line of its own.
    if (std::exchange(in_long_line_, false)) keepDiagnostic(line + '\n');
    else takeLine(line);
    start = end + 1;
  }
  partial_.remove(0, start);
  // A line already longer than any progress line is a diagnostic: kept now, so the buffer stays
  // bounded however long the command writes without a newline.
  if (partial_.size() > static_cast<qsizetype>(kMaxProgressLineBytes) + 2) {
    keepDiagnostic(std::exchange(partial_, {}));
    in_long_line_ = true;
  }
}

void ChildProcessJob::takeLine(const QByteArray& line) {
  if (const auto progress = parseProgressLine(std::string_view(line.constData(), static_cast<std::size_t>(line.size())))) {
    emit progressReported(QString::fromStdString(progress->task), progress->done, progress->total,
                          QString::fromStdString(progress->detail));
    onProgress(*progress);
    return;
  }
  keepDiagnostic(line + '\n');
}

void ChildProcessJob::keepDiagnostic(const QByteArray& bytes) {
  stderr_ += bytes;
  if (stderr_.size() > kDiagnosticsKeep) stderr_.remove(0, stderr_.size() - kDiagnosticsKeep);
}

void ChildProcessJob::onProcessFinished(int exit_code, int signal_number) {
  if (!partial_.isEmpty()) {  // a last line without its newline
    if (std::exchange(in_long_line_, false)) keepDiagnostic(std::exchange(partial_, {}));
    else takeLine(std::exchange(partial_, {}));
  }
  // Not deleted here: this runs inside the process's own signal.
  process_.release()->deleteLater();
  const Outcome result = outcome(exit_code, signal_number);
  emit finished(result.ok, result.message);
}

}  // namespace streetgan::studio
