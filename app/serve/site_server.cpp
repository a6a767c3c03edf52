#include "app/serve/site_server.h"

#include "core/util/regular_file.h"

#include <httplib.h>

#include <cstdint>
#include <filesystem>

namespace streetgan::cli {
namespace {

constexpr std::int64_t kMaxFileBytes = std::int64_t(256) << 20;  // the model of a 128-px G is ~50 MB

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
    files_["/" + file] = File{std::move(*bytes), contentType(file)};
  }
  if (const auto index = files_.find("/index.html"); index != files_.end()) files_["/"] = index->second;
  return {};
}

Status SiteServer::loadFolder(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code error;
  fs::recursive_directory_iterator it(folder, fs::directory_options::none, error), end;
  for (; !error && it != end; it.increment(error)) {
    if (it.depth() >= 2) it.disable_recursion_pending();
    if (it->is_symlink(error) || !it->is_regular_file(error)) continue;
    if (files.size() == kMaxFiles) return makeError(folder + ": more than " + std::to_string(kMaxFiles) + " files to serve");
    files.push_back(fs::relative(it->path(), folder, error).string());
  }
  if (error) return makeError(folder + ": " + error.message());
  return load(folder, files);
}

void SiteServer::routes() {
  service_.server().Get(R"(/.*)", [this](const httplib::Request& request, httplib::Response& response) {
    const auto found = files_.find(request.path);
    if (found == files_.end()) return HttpService::plain(response, 404, "not found: " + request.path);
    response.set_header("Cache-Control", "no-cache");
    response.set_content(found->second.bytes, found->second.type.c_str());
  });
}

}  // namespace streetgan::cli
