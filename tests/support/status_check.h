#pragma once
// succeeded(): a core Result or Status (core/util/result.h) as a test checks it, with its message
// kept for QVERIFY2 and the checks that follow.
#include <QString>

namespace streetgan::test {

/// Whether `status` succeeded; when it did not, its message is put in `*error`.
template <class R>
bool succeeded(const R& status, QString* error) {
  if (!status.ok()) *error = QString::fromStdString(status.error());
  return status.ok();
}

}  // namespace streetgan::test
