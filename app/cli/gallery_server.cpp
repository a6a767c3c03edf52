#include "app/cli/gallery_server.h"

#include "app/cli/gallery_page.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <random>

namespace streetgan::cli {
namespace {

// A query number: digits only, within [lo, hi], else the plain reason.
Result<long long> queryNumber(const httplib::Request& request, const std::string& name, long long fallback, long long lo,
                              long long hi) {
  if (!request.has_param(name)) return fallback;
  const std::string text = request.get_param_value(name);
  const std::string shown = text.size() > 40 ? text.substr(0, 40) + "…" : text;
  const std::string range = name + " must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    return makeError(range + " (got \"" + shown + "\")");
  const long long value = std::stoll(text);
  if (value < lo || value > hi) return makeError(range + " (got " + text + ")");
  return value;
}

void plain(httplib::Response& response, int status, const std::string& text) {
  response.status = status;
  response.set_header("Cache-Control", "no-store");
  response.set_content(text + "\n", "text/plain; charset=utf-8");
}

std::uint64_t randomSeed() {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine() % 1000000000ULL;
}

nlohmann::json modelJson(const GalleryModelInfo& model) {
  return {{"checkpoint", model.checkpoint}, {"run", model.run},          {"step", model.step},
          {"epoch", model.epoch},           {"img_size", model.img_size}, {"nz", model.nz},
          {"preset", model.preset}};
}

}  // namespace

GalleryServer::GalleryServer(GalleryRenderer& renderer, GalleryLimits limits)
    : renderer_(renderer), limits_(limits), server_(std::make_unique<httplib::Server>()) {
  const int connections = limits_.connections;
  server_->new_task_queue = [connections] { return new httplib::ThreadPool(static_cast<size_t>(connections)); };
  server_->set_read_timeout(limits_.read_timeout_ms / 1000, (limits_.read_timeout_ms % 1000) * 1000);
  server_->set_write_timeout(10, 0);
  server_->set_keep_alive_timeout(5);
  server_->set_keep_alive_max_count(100);
  server_->set_payload_max_length(64 * 1024);
  // On the listening socket, inherited by every accepted one: no Nagle delay (headers and body
  // are separate writes, and a keep-alive client would wait for the delayed ACK, ~40 ms a
  // request), and SO_REUSEADDR but not the library's SO_REUSEPORT, so a second server on a port
  // in use fails instead of sharing it.
  server_->set_socket_options([](socket_t socket) {
    int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  });
  server_->set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr) {
    plain(response, 500, "internal error");
  });
  routes();
}

GalleryServer::~GalleryServer() = default;

Result<int> GalleryServer::bind(const std::string& host, int port) {
  const int bound = port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (bound < 0) return makeError("cannot listen on " + host + ":" + std::to_string(port) + " (in use, or not an address of this machine)");
  return bound;
}

bool GalleryServer::listen() { return server_->listen_after_bind(); }

void GalleryServer::stop() { server_->stop(); }

void GalleryServer::routes() {
  server_->Get("/health", [this](const httplib::Request&, httplib::Response& response) {
    const nlohmann::json body = {{"status", "ok"}, {"model", modelJson(renderer_.model())}, {"queued", renderer_.pendingJobs()}};
    response.set_header("Cache-Control", "no-store");
    response.set_content(body.dump() + "\n", "application/json");
  });

  server_->Get("/", [this](const httplib::Request&, httplib::Response& response) {
    const GalleryModelInfo model = renderer_.model();
    response.set_header("Cache-Control", "no-store");
    response.set_content(galleryPage(model.run + ", step " + std::to_string(model.step) + " (" +
                                     std::to_string(model.img_size) + " px)"),
                         "text/html; charset=utf-8");
  });

  auto render = [this](const httplib::Request& request, httplib::Response& response, GalleryJob job) {
    const bool seeded = request.has_param("seed");
    auto future = renderer_.submit(job);
    if (!future) {
      response.set_header("Retry-After", "1");
      plain(response, 503, "busy: every render slot is taken; try again in a second");
      return;
    }
    Result<GalleryResult> result = future->get();
    if (!result) {
      plain(response, 500, "could not render: " + result.error());
      return;
    }
    // A seed names the picture, but a followed run changes its model: a short shared cache.
    response.set_header("Cache-Control", seeded ? "public, max-age=60" : "no-store");
    response.set_header("X-Seed", std::to_string(job.seed));
    response.set_header("X-Model-Step", std::to_string(result->model.step));
    response.set_content(std::move(result->bytes), result->content_type.c_str());
  };

  server_->Get("/gan_imgs", [this, render](const httplib::Request& request, httplib::Response& response) {
    const GalleryModelInfo model = renderer_.model();
    auto n = queryNumber(request, "n", 16, 1, limits_.max_n);
    auto seed = queryNumber(request, "seed", static_cast<long long>(randomSeed()), 0, 999999999999999999LL);
    auto size = queryNumber(request, "size", model.img_size, 8, limits_.max_size);
    for (const auto* checked : {&n, &seed, &size})
      if (!*checked) return plain(response, 400, checked->error());
    GalleryJob job;
    job.kind = GalleryJob::Kind::Grid;
    job.count = static_cast<int>(*n);
    job.seed = static_cast<std::uint64_t>(*seed);
    job.size = static_cast<int>(*size);
    render(request, response, job);
  });

  server_->Get("/gan_gifs", [this, render](const httplib::Request& request, httplib::Response& response) {
    auto frames = queryNumber(request, "frames", 16, 2, limits_.max_frames);
    auto seed = queryNumber(request, "seed", static_cast<long long>(randomSeed()), 0, 999999999999999999LL);
    auto size = queryNumber(request, "size", std::min(256, limits_.max_size), 8, limits_.max_size);
    for (const auto* checked : {&frames, &seed, &size})
      if (!*checked) return plain(response, 400, checked->error());
    const std::string format = request.has_param("format") ? request.get_param_value("format") : "gif";
    if (format != "gif" && format != "mp4" && format != "webm")
      return plain(response, 400, "format must be gif, mp4 or webm");
    GalleryJob job;
    job.kind = GalleryJob::Kind::Walk;
    job.count = static_cast<int>(*frames);
    job.seed = static_cast<std::uint64_t>(*seed);
    job.size = static_cast<int>(*size) & ~1;  // H.264 and VP9 want even sides
    job.format = format;
    render(request, response, job);
  });

  server_->set_error_handler([](const httplib::Request&, httplib::Response& response) {
    if (response.status == 404) plain(response, 404, "not found: the routes are /, /health, /gan_imgs and /gan_gifs");
  });
}

}  // namespace streetgan::cli
