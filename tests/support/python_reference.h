#pragma once
// Runs the independent Python references (Debian's python3 with numpy/scipy, never a runtime
// dependency) on the same inputs as the engine: tensors are handed over as .npy files, the
// reference prints one JSON object on stdout.
// LibTorch before Qt: Qt's keyword macros (slots, emit) break LibTorch's headers.
#include <torch/types.h>

#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace streetgan::test {

/// Writes `tensor` (any shape, any floating or integer type) as a little-endian float64 .npy
/// file, C order; false when the file cannot be written.
bool writeNpy(const QString& path, const torch::Tensor& tensor);

struct PythonReferenceResult {
  bool ok = false;
  QJsonObject json;  ///< the object the script printed last on stdout
  QString error;     ///< why it failed: exit status, stderr, output that is not JSON
};

/// The largest absolute difference between `tensor` (flattened, any type) and the numbers of
/// `expected` (a reference's output list); infinity when their counts differ.
double largestDifferenceFrom(const torch::Tensor& tensor, const QJsonArray& expected);

/// Runs `/usr/bin/python3 tests/core/reference/SCRIPT args...` (a hang guard of `timeout_ms`,
/// not a time limit).
PythonReferenceResult runPythonReference(const QString& script, const QStringList& args,
                                         int timeout_ms = 600000);

}  // namespace streetgan::test
