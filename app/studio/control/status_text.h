#pragma once
// The studio's side of core's Status (core/util/result.h): a failure written as Qt text, and a
// failure's message as Qt text for a label, dialog or log.
#include "core/util/result.h"

#include <QString>

namespace streetgan::studio {

/// A failure with a message the studio wrote; by default the machine's (a process, pipe, file or
/// host that refused), ErrorKind::Input where the user must change what was given.
inline Error failure(const QString& message, ErrorKind kind = ErrorKind::Machine) {
  return makeError(message.toStdString(), kind);
}

/// A failure's message ("" when it did not fail).
template <class T>
QString errorText(const Result<T>& result) {
  return QString::fromStdString(result.error());
}

}  // namespace streetgan::studio
