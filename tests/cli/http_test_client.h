#pragma once
// A raw HTTP/1.1 client for tst_serve: requests written byte for byte (hostile ones included) on
// a loopback socket, and the answer read until the server closes the connection, so a test sees
// exactly what `streetgan serve` sent, a second answer or none included.
#include <QByteArray>
#include <QString>

#include <map>

namespace streetgan::test {

/// One answer; status 0 when the server closed the connection without one.
struct HttpReply {
  int status = 0;  ///< 0: the server closed the connection without an answer
  std::map<QString, QString> headers;  ///< names in lower case
  QByteArray body;
  QString header(const QString& name) const {
    auto found = headers.find(name.toLower());
    return found == headers.end() ? QString() : found->second;
  }
};

/// A connected socket to 127.0.0.1:`port`, or -1.
int connectTo(int port);
/// Reads until the server closes the connection (or `timeout_ms` passes).
QByteArray readAll(int fd, int timeout_ms);
/// The status line, headers and body of the first answer in `data`.
HttpReply parse(const QByteArray& data);
/// Sends `raw` on a new connection and reads the answer.
HttpReply request(int port, const QByteArray& raw, int timeout_ms = 120000);
/// GET `target` with Connection: close.
HttpReply get(int port, const QByteArray& target);

}  // namespace streetgan::test
