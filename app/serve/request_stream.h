#pragma once
// RequestStream: cpp-httplib's Stream for one request that ConnectionGate has already received
// whole. Reading gives the request's bytes and then the end, so the library never waits on the
// client for them; writing goes to the connection's (non-blocking) socket, waiting for room at
// most the write timeout at each pause. Used by the cpp-httplib 0.11 of bookworm and the 0.18 of
// trixie alike (the Stream interface is the same in both).
#include <httplib.h>

#include <string>
#include <string_view>

namespace streetgan::cli {

class RequestStream : public httplib::Stream {
public:
  RequestStream(int fd, std::string_view request, int write_timeout_ms);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  using httplib::Stream::write;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

private:
  bool waitWritable() const;

  int fd_;
  std::string_view request_;
  std::size_t offset_ = 0;
  int write_timeout_ms_;
};

}  // namespace streetgan::cli
