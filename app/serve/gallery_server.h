#pragma once
// GalleryServer: the HTTP side of `streetgan serve`, on cpp-httplib: the original tool's routes
// (`/health`, `/gan_imgs`, `/gan_gifs`) with its defaults, and the gallery page at `/`
// (docs/serve.md). Every query is read by parseGalleryQuery() (gallery_query.h) and checked
// against the limits before any work; a full render queue is answered 503 with Retry-After.
// Connections are taken by HttpService (bounded, never holding a thread for a slow client). No
// route reads a file, so no request can name one.
#include "app/serve/gallery_renderer.h"
#include "app/serve/http_service.h"
#include "core/util/result.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace streetgan::cli {

struct GalleryLimits {
  int max_n = 256;                ///< images in one grid
  int max_frames = 600;           ///< frames in one walk
  int max_size = 1024;            ///< side of one image, pixels
  std::int64_t max_pixels = 40000000;  ///< images × side × side in one request
  int connections = 64;           ///< connection threads
  int read_timeout_ms = 500;      ///< the longest pause inside a request
  int request_timeout_ms = 5000;  ///< the longest a whole request may take to arrive
  int max_open = 1024;            ///< connections open at once
};

class GalleryServer {
public:
  GalleryServer(GalleryRenderer& renderer, GalleryLimits limits);
  ~GalleryServer();
  GalleryServer(const GalleryServer&) = delete;
  GalleryServer& operator=(const GalleryServer&) = delete;

  /// Starts the connection threads; an Error when the system refuses one (a limit on processes,
  /// threads or memory).
  Status start();
  /// Binds `host:port` (port 0: any free port). Returns the port, or an Error.
  Result<int> bind(const std::string& host, int port);
  /// Serves until stop() (also one that came first) or until `*stop_requested` (a signal
  /// handler's flag, looked at ten times a second) is set; false when accepting failed.
  bool listen(const std::atomic<bool>* stop_requested = nullptr);
  /// Ends listen() now, or at once when it starts later. Any thread; not from a signal handler.
  void stop();

private:
  void routes();

  GalleryRenderer& renderer_;
  GalleryLimits limits_;
  HttpService service_;
};

}  // namespace streetgan::cli
