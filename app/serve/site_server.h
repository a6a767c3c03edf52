#pragma once
// SiteServer: `streetgan publish --preview`, a published page served on loopback over the HTTP
// code `streetgan serve` uses (HttpService). It serves exactly the files the publish wrote, read
// into memory before it listens, each with its content type (application/wasm for .wasm, text/
// javascript for .mjs, which browsers require); any other path is 404, so no request can name a
// file. Like a static host, it sends no cross-origin isolation headers: the page runs with what
// GitHub Pages would give it.
#include "app/serve/http_service.h"
#include "core/util/result.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace streetgan::cli {

class SiteServer {
public:
  explicit SiteServer(HttpServiceLimits limits = {});

  /// Reads `files` (relative paths) of `folder`; an Error names one that cannot be read.
  Status load(const std::string& folder, const std::vector<std::string>& files);
  /// Reads every regular file of `folder`, at most two folders deep, kMaxFiles and kMaxBytes in
  /// all (symbolic links are not followed, nor served, and no hidden name such as .git): an
  /// earlier publish, as it is now.
  Status loadFolder(const std::string& folder);
  static constexpr std::size_t kMaxFiles = 256;
  static constexpr std::int64_t kMaxBytes = std::int64_t(1) << 30;
  Status start() { return service_.start(); }
  /// Binds 127.0.0.1:`port` (0: any free port); requests are answered only when their Host is
  /// that address or localhost with that port (a DNS-rebinding page's request is refused).
  Result<int> bind(int port);
  int port() const { return port_.load(); }
  bool listen(const std::atomic<bool>* stop_requested = nullptr) { return service_.listen(stop_requested); }
  void stop() { service_.stop(); }

  /// The content type a file is served with, by its extension.
  static std::string contentType(const std::string& path);

private:
  struct File {
    std::shared_ptr<const std::string> bytes;  // shared by the answers being written, never copied
    std::string type;
  };
  void routes();

  std::map<std::string, File> files_;  // by URL path: "/index.html"; "/" is index.html
  std::int64_t loaded_bytes_ = 0;
  std::atomic<int> port_{0};
  HttpService service_;
};

}  // namespace streetgan::cli
