// A run's remote.json (it may come from anyone's run folder) and the host profile inside it:
// read, validated, and turned into the arguments ssh would get.
#include "app/studio/control/remote_run_record.h"
#include "fuzz/fuzz_scratch_folder.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const FuzzScratchFolder scratch("fuzz-remote");
  static const QString dir = QString::fromStdString(scratch.path());
  if (!scratch.ok()) return 0;
  const QByteArray bytes(reinterpret_cast<const char*>(data), static_cast<int>(size));
  QFile file(QDir(dir).filePath(streetgan::studio::RemoteRunRecord::fileName()));
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return 0;
  file.write(bytes);
  file.close();
  if (auto record = streetgan::studio::RemoteRunRecord::read(dir)) (void)record->validate();
  const auto profile = streetgan::studio::HostProfile::fromJson(QJsonDocument::fromJson(bytes).object());
  if (profile.validate().isEmpty()) (void)profile.deviceArguments("auto", 0);
  return 0;
}
