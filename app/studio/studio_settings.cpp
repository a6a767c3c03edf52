#include "app/studio/studio_settings.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

#include <algorithm>

namespace streetgan::studio {

StudioSettings StudioSettings::load() {
  QSettings settings;
  StudioSettings s;
  s.runs_root = settings.value("runs_root", QDir::home().filePath("StreetGAN/runs")).toString();
  s.device = settings.value("device", "auto").toString();
  s.threads = settings.value("threads", 0).toInt();
  s.processes = std::clamp(settings.value("processes", 1).toInt(), 1, 1024);
  s.cost_per_hour = std::max(0.0, settings.value("cost_per_hour", 0.0).toDouble());
  return s;
}

void StudioSettings::save() const {
  QSettings settings;
  settings.setValue("runs_root", runs_root);
  settings.setValue("device", device);
  settings.setValue("threads", threads);
  settings.setValue("processes", processes);
  settings.setValue("cost_per_hour", cost_per_hour);
}

QString findStreetganProgram() {
  const QString from_environment = qEnvironmentVariable("STREETGAN_CLI");
  if (!from_environment.isEmpty()) return from_environment;
  const QDir here(QCoreApplication::applicationDirPath());
  for (const QString& candidate : {here.filePath("streetgan"), here.filePath("../cli/streetgan")}) {
    const QFileInfo info(candidate);
    if (info.isFile() && info.isExecutable()) return info.canonicalFilePath();
  }
  return "streetgan";
}

}  // namespace streetgan::studio
