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
#include <map>
#include <string>
#include <vector>

namespace streetgan::cli {

class SiteServer {
public:
  explicit SiteServer(HttpServiceLimits limits = {});

  /// Reads `files` (relative paths) of `folder`; an Error names one that cannot be read.
  Status load(const std::string& folder, const std::vector<std::string>& files);
  /// Reads every regular file of `folder`, at most two folders deep and kMaxFiles in all
  /// (symbolic links are not followed, nor served): an earlier publish, as it is now.
  Status loadFolder(const std::string& folder);
  static constexpr std::size_t kMaxFiles = 256;
  Status start() { return service_.start(); }
  Result<int> bind(const std::string& host, int port) { return service_.bind(host, port); }
  bool listen(const std::atomic<bool>* stop_requested = nullptr) { return service_.listen(stop_requested); }
  void stop() { service_.stop(); }

  /// The content type a file is served with, by its extension.
  static std::string contentType(const std::string& path);

private:
  struct File {
    std::string bytes;
    std::string type;
  };
  void routes();

  std::map<std::string, File> files_;  // by URL path: "/index.html"; "/" is index.html
  HttpService service_;
};

}  // namespace streetgan::cli
