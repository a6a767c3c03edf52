#include "app/serve/site_server.h"

#include "app/serve/site_folder.h"

#include "core/util/regular_file.h"

#include <httplib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>

namespace streetgan::cli {
namespace {

constexpr std::int64_t kMaxFileBytes = std::int64_t(256) << 20;  // the model of a 128-px G is ~50 MB
constexpr std::size_t kChunkBytes = std::size_t(1) << 20;         // written at a time

}  // namespace

SiteServer::SiteServer(HttpServiceLimits limits) : service_(limits) { routes(); }

std::string SiteServer::contentType(const std::string& path) {
  static const std::map<std::string, std::string> types = {
      {".html", "text/html; charset=utf-8"},  {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},          {".wasm", "application/wasm"},
      {".png", "image/png"},                  {".txt", "text/plain; charset=utf-8"},
      {".onnx", "application/octet-stream"}};
  const std::string extension = std::filesystem::path(path).extension().string();
  if (const auto found = types.find(extension); found != types.end()) return found->second;
  return std::filesystem::path(path).filename() == "LICENSE" ? "text/plain; charset=utf-8" : "application/octet-stream";
}

Status SiteServer::load(const std::string& folder, const std::vector<std::string>& files) {
  for (const std::string& file : files) {
    auto bytes = RegularFile::readAll(folder + "/" + file, kMaxFileBytes, /*follow_links=*/false);
    if (!bytes) return makeError(bytes.error());
    loaded_bytes_ += static_cast<std::int64_t>(bytes->size());
    if (loaded_bytes_ > kMaxBytes) return makeError(folder + ": more than " + std::to_string(kMaxBytes >> 20) + " MiB to serve");
    files_["/" + file] = File{std::make_shared<const std::string>(std::move(*bytes)), contentType(file)};
  }
  if (const auto index = files_.find("/index.html"); index != files_.end()) files_["/"] = index->second;
  return {};
}

Status SiteServer::loadFolder(const std::string& folder) {
  auto files = SiteFolder::regularFiles(folder, kMaxFiles, /*skip_hidden=*/true);  // .git, .env: never served
  if (!files) return makeError(files.error());
  return load(folder, *files);
}

Result<int> SiteServer::bind(int port) {
  auto bound = service_.bind("127.0.0.1", port);
  if (bound) port_.store(*bound);
  return bound;
}

void SiteServer::routes() {
  service_.server().Get(R"(/.*)", [this](const httplib::Request& request, httplib::Response& response) {
    const std::string host = request.get_header_value("Host"), port = ":" + std::to_string(port_.load());
    if (host != "127.0.0.1" + port && host != "localhost" + port)
      return HttpService::plain(response, 421, "this preview answers only http://127.0.0.1" + port + "/");
    const auto found = files_.find(request.path);
    if (found == files_.end()) return HttpService::plain(response, 404, "not found: " + request.path);
    response.set_header("Cache-Control", "no-cache");
    const std::shared_ptr<const std::string> bytes = found->second.bytes;
    response.set_content_provider(bytes->size(), found->second.type,
                                  [bytes](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                                    return sink.write(bytes->data() + offset, std::min(length, kChunkBytes));
                                  });
  });
}

}  // namespace streetgan::cli
