#include "app/studio/control/host_connection_check.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace streetgan::studio {

HostConnectionCheck::HostConnectionCheck(QObject* parent) : QObject(parent) {}
HostConnectionCheck::~HostConnectionCheck() = default;

void HostConnectionCheck::start(const HostProfile& profile, const QString& control_dir) {
  result_ = {};
  started_ms_ = QDateTime::currentMSecsSinceEpoch();
  if (const QString invalid = profile.validate(); !invalid.isEmpty()) {
    result_.failure = SshFailure::CommandFailed;
    result_.message = invalid;
    QMetaObject::invokeMethod(this, [this] { finish(); }, Qt::QueuedConnection);
    return;
  }
  connection_ = std::make_unique<SshConnection>(profile, control_dir);
  command_ = std::make_unique<SshCommand>();
  connect(command_.get(), &SshCommand::finished, this, [this](const SshResult& version) {
    command_.release()->deleteLater();
    if (!version.ok()) {
      result_.failure = version.failure;
      result_.message = version.message;
      finish();
      return;
    }
    result_.version = QString::fromUtf8(version.output).trimmed();
    command_ = std::make_unique<SshCommand>();
    connect(command_.get(), &SshCommand::finished, this, [this](const SshResult& info) {
      command_.release()->deleteLater();
      const QJsonObject object = QJsonDocument::fromJson(info.output).object();
      if (!info.ok() || object.isEmpty()) {
        result_.failure = info.ok() ? SshFailure::CommandFailed : info.failure;
        result_.message = info.ok() ? "`streetgan info --json` on " + connection_->where() + " printed no JSON" : info.message;
        finish();
        return;
      }
      for (const auto& device : object.value("devices").toArray()) result_.devices << device.toString();
      result_.threads = object.value("threads").toInt();
      finish();
    });
    if (Status started = command_->start(*connection_, {"info", "--json"}, false); !started) {
      command_.reset();
      result_.failure = SshFailure::Unreachable;
      result_.message = errorText(started);
      finish();
    }
  });
  if (Status started = command_->start(*connection_, {"--version"}, false); !started) {
    command_.reset();
    result_.failure = SshFailure::Unreachable;
    result_.message = errorText(started);
    QMetaObject::invokeMethod(this, [this] { finish(); }, Qt::QueuedConnection);
  }
}

void HostConnectionCheck::finish() {
  result_.milliseconds = QDateTime::currentMSecsSinceEpoch() - started_ms_;
  if (result_.ok())
    result_.message = QString("Connected to %1 in %2 s: %3; devices: %4; %5 CPU %6.")
                          .arg(connection_->where())
                          .arg(result_.milliseconds / 1000.0, 0, 'f', 1)
                          .arg(result_.version, result_.devices.join(", "))
                          .arg(result_.threads)
                          .arg(result_.threads == 1 ? "thread" : "threads");
  emit finished(result_);
}

}  // namespace streetgan::studio
