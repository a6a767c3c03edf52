#include "app/serve/gallery_server.h"

#include "app/serve/gallery_page.h"
#include "app/serve/gallery_query.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <random>

namespace streetgan::cli {
namespace {

void plain(httplib::Response& response, int status, const std::string& text) {
  HttpService::plain(response, status, text);
}

std::uint64_t serverRandomSeed() {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine() % 1000000000ULL;
}

nlohmann::json modelJson(const GalleryModelInfo& model) {
  return {{"checkpoint", model.checkpoint}, {"run", model.run},          {"step", model.step},
          {"epoch", model.epoch},           {"img_size", model.img_size}, {"nz", model.nz},
          {"preset", model.preset},         {"generator", model.generator}};
}

HttpServiceLimits serviceLimits(const GalleryLimits& limits) {
  HttpServiceLimits service;
  service.connections = limits.connections;
  service.read_timeout_ms = limits.read_timeout_ms;
  service.request_timeout_ms = limits.request_timeout_ms;
  service.max_open = limits.max_open;
  return service;
}

}  // namespace

GalleryServer::GalleryServer(GalleryRenderer& renderer, GalleryLimits limits)
    : renderer_(renderer), limits_(limits), service_(serviceLimits(limits)) {
  routes();
}

GalleryServer::~GalleryServer() = default;

Status GalleryServer::start() { return service_.start(); }

Result<int> GalleryServer::bind(const std::string& host, int port) { return service_.bind(host, port); }

bool GalleryServer::listen(const std::atomic<bool>* stop_requested) { return service_.listen(stop_requested); }

void GalleryServer::stop() { service_.stop(); }

void GalleryServer::routes() {
  service_.server().Get("/health", [this](const httplib::Request&, httplib::Response& response) {
    const nlohmann::json body = {{"status", "ok"}, {"model", modelJson(renderer_.model())}, {"queued", renderer_.pendingJobs()},
                                  {"rendering", renderer_.activeJobs()}};
    response.set_header("Cache-Control", "no-store");
    response.set_content(body.dump() + "\n", "application/json");
  });

  service_.server().Get("/", [this](const httplib::Request&, httplib::Response& response) {
    const GalleryModelInfo model = renderer_.model();
    response.set_header("Cache-Control", "no-store");
    response.set_content(galleryPage(model.run + ", step " + std::to_string(model.step) + " (" +
                                     std::to_string(model.img_size) + " px)"),
                         "text/html; charset=utf-8");
  });

  auto render = [this](const httplib::Request& request, httplib::Response& response, GalleryJob::Kind kind) {
    GalleryQueryLimits limits;
    limits.max_n = limits_.max_n;
    limits.max_frames = limits_.max_frames;
    limits.max_size = limits_.max_size;
    limits.max_pixels = limits_.max_pixels;
    limits.grid_size = renderer_.model().img_size;
    auto query = parseGalleryQuery(kind, queryOfTarget(request.target), limits);
    if (!query) return plain(response, 400, query.error());
    GalleryJob job;
    job.kind = query->kind;
    job.count = query->count;
    job.seed = query->seed ? *query->seed : serverRandomSeed();
    job.size = query->size;
    job.format = query->format;
    auto future = renderer_.submit(job);
    // After SIGTERM the queue refuses everything: say so, not "busy" (a retry would find no server).
    if (!future && renderer_.stopping()) return plain(response, 503, "the server is stopping");
    if (!future) {
      response.set_header("Retry-After", "1");
      return plain(response, 503, "busy: every render slot is taken; try again in a second");
    }
    Result<GalleryResult> result = future->get();
    if (!result && renderer_.stopping()) return plain(response, 503, "the server is stopping");
    if (!result) return plain(response, 500, "could not render: " + result.error());
    // A seed names the picture, but a followed run changes its model: a short shared cache.
    response.set_header("Cache-Control", query->seed ? "public, max-age=60" : "no-store");
    response.set_header("X-Seed", std::to_string(job.seed));
    response.set_header("X-Model-Step", std::to_string(result->model.step));
    response.set_content(std::move(result->bytes), result->content_type.c_str());
  };

  service_.server().Get("/gan_imgs", [render](const httplib::Request& request, httplib::Response& response) {
    render(request, response, GalleryJob::Kind::Grid);
  });
  service_.server().Get("/gan_gifs", [render](const httplib::Request& request, httplib::Response& response) {
    render(request, response, GalleryJob::Kind::Walk);
  });

  service_.server().set_error_handler([](const httplib::Request&, httplib::Response& response) {
    if (response.status == 404) plain(response, 404, "not found: the routes are /, /health, /gan_imgs and /gan_gifs");
  });
}

}  // namespace streetgan::cli
