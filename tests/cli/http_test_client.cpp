#include "tests/cli/http_test_client.h"

#include <QElapsedTimer>
#include <QList>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace streetgan::test {

int connectTo(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads until the server closes the connection (or `timeout_ms` passes).
QByteArray readAll(int fd, int timeout_ms) {
  QByteArray data;
  QElapsedTimer clock;
  clock.start();
  char buffer[65536];
  while (clock.elapsed() < timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    data.append(buffer, static_cast<int>(n));
  }
  return data;
}

HttpReply parse(const QByteArray& data) {
  HttpReply reply;
  const int end = data.indexOf("\r\n\r\n");
  if (end < 0) return reply;
  const QList<QByteArray> lines = data.left(end).split('\n');
  reply.status = lines.value(0).split(' ').value(1).toInt();
  for (int i = 1; i < lines.size(); ++i) {
    const int colon = lines[i].indexOf(':');
    if (colon > 0) reply.headers[QString(lines[i].left(colon)).trimmed().toLower()] = QString(lines[i].mid(colon + 1)).trimmed();
  }
  reply.body = data.mid(end + 4);
  return reply;
}

HttpReply request(int port, const QByteArray& raw, int timeout_ms) {
  const int fd = connectTo(port);
  if (fd < 0) return {};
  ::send(fd, raw.constData(), static_cast<size_t>(raw.size()), MSG_NOSIGNAL);
  HttpReply reply = parse(readAll(fd, timeout_ms));
  ::close(fd);
  return reply;
}

HttpReply get(int port, const QByteArray& target) {
  return request(port, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

}  // namespace streetgan::test
