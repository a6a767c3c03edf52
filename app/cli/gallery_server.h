#pragma once
// GalleryServer: the HTTP side of `streetgan serve`, on cpp-httplib: the original tool's routes
// (`/health`, `/gan_imgs`, `/gan_gifs`) with its defaults, and the gallery page at `/`
// (docs/serve.md). Every number in a query is checked against the limits before any work; a
// full render queue is answered 503 with Retry-After; connections run on a bounded thread pool
// with short read timeouts, so a client that trickles its request is cut off. No route reads a
// file, so no request can name one.
#include "app/cli/gallery_renderer.h"

#include <memory>
#include <string>

namespace httplib {
class Server;
}

namespace streetgan::cli {

struct GalleryLimits {
  int max_n = 256;            ///< images in one grid
  int max_frames = 600;       ///< frames in one walk
  int max_size = 1024;        ///< side of one image, pixels
  int connections = 64;       ///< connection threads
  int read_timeout_ms = 500;  ///< the longest pause inside a request
};

class GalleryServer {
public:
  GalleryServer(GalleryRenderer& renderer, GalleryLimits limits);
  ~GalleryServer();

  /// Binds `host:port` (port 0: any free port). Returns the port, or an Error.
  Result<int> bind(const std::string& host, int port);
  /// Serves until stop(); returns false when listening failed.
  bool listen();
  void stop();

private:
  void routes();
  GalleryRenderer& renderer_;
  GalleryLimits limits_;
  std::unique_ptr<httplib::Server> server_;
};

}  // namespace streetgan::cli
