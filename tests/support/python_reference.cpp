#include "tests/support/python_reference.h"

#include <QFile>
#include <QJsonDocument>
#include <QProcess>

#include <cmath>
#include <cstring>
#include <string>

namespace streetgan::test {

bool writeNpy(const QString& path, const torch::Tensor& tensor) {
  const torch::Tensor data = tensor.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  std::string shape = "(";
  for (std::int64_t size : data.sizes()) shape += std::to_string(size) + ", ";
  if (data.dim() > 1) shape.resize(shape.size() - 2);
  else if (data.dim() == 0) shape = "(";
  shape += ")";
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
  // NPY 1.0: magic, version, header length; the header padded with spaces to a multiple of 64
  // bytes (counting the 10 bytes before it) and ended by a newline.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  QByteArray bytes("\x93NUMPY\x01\x00", 8);
  const auto length = static_cast<quint16>(header.size());
  bytes.append(static_cast<char>(length & 0xff));
  bytes.append(static_cast<char>(length >> 8));
  bytes.append(header.data(), static_cast<int>(header.size()));
  bytes.append(static_cast<const char*>(data.data_ptr()), static_cast<int>(data.numel() * sizeof(double)));
  return file.write(bytes) == bytes.size() && file.flush();
}

double largestDifferenceFrom(const torch::Tensor& tensor, const QJsonArray& expected) {
  const torch::Tensor values = tensor.detach().to(torch::kCPU, torch::kFloat64).contiguous().view(-1);
  if (values.numel() != expected.size()) return INFINITY;
  const torch::Tensor want = torch::empty({values.numel()}, torch::kFloat64);
  double* out = want.data_ptr<double>();
  for (int i = 0; i < expected.size(); ++i) out[i] = expected[i].toDouble();
  return values.numel() == 0 ? 0.0 : (values - want).abs().max().item<double>();
}

PythonReferenceResult runPythonReference(const QString& script, const QStringList& args, int timeout_ms) {
  PythonReferenceResult result;
  QProcess python;
  python.start("/usr/bin/python3", QStringList{STREETGAN_SOURCE_DIR "/tests/core/reference/" + script} + args);
  if (!python.waitForFinished(timeout_ms)) {
    python.kill();
    python.waitForFinished();
    result.error = script + " did not finish";
    return result;
  }
  const QByteArray out = python.readAllStandardOutput().trimmed();
  if (python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0) {
    result.error = script + " failed: " + QString::fromLocal8Bit(python.readAllStandardError());
    return result;
  }
  const QByteArray last = out.mid(out.lastIndexOf('\n') + 1);
  QJsonParseError parse_error;
  const QJsonDocument document = QJsonDocument::fromJson(last, &parse_error);
  if (!document.isObject()) {
    result.error = script + " printed no JSON object: " + QString::fromUtf8(out.right(400));
    return result;
  }
  result.json = document.object();
  result.ok = true;
  return result;
}

}  // namespace streetgan::test
