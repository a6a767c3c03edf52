#include "core/distributed/job_token.h"

#include "core/util/random_bytes.h"
#include "core/util/regular_file.h"

#include <cstdlib>

#include <sys/stat.h>

namespace streetgan {

std::string newJobToken() { return randomHex(32); }

Result<std::string> checkJobToken(const std::string& token, const std::string& where) {
  if (token.size() < kMinJobTokenBytes || token.size() > kMaxJobTokenBytes)
    return makeError(where + " holds a job token of " +
                     (token.size() > kMaxJobTokenBytes ? "more than " + std::to_string(kMaxJobTokenBytes)
                                                       : std::to_string(token.size())) +
                     " characters; allowed: " +
                     std::to_string(kMinJobTokenBytes) + " to " + std::to_string(kMaxJobTokenBytes) +
                     " (make one with: head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n')");
  for (unsigned char c : token)
    if (c <= 0x20 || c >= 0x7f)
      return makeError(where + " holds a job token with a space or a character that is not printable ASCII");
  return token;
}

Result<std::string> readJobTokenFile(const std::string& path) {
  constexpr std::int64_t kMaxFileBytes = 4096;
  auto file = RegularFile::open(path);
  if (!file) return makeError("job token file " + file.error());
  struct stat info {};
  if (::fstat(file->descriptor(), &info) == 0 && (info.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    return makeError("job token file " + path + " is open to other users; allow only its owner (chmod 600 " + path +
                     ")");
  auto text = file->readRest(kMaxFileBytes);
  if (!text) return makeError("job token file " + text.error());
  std::string line = text->substr(0, text->find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return checkJobToken(line, "job token file " + path);
}

Result<std::string> jobTokenFromEnvironment() {
  const char* value = std::getenv(kJobTokenVariable);
  if (!value || !*value) return std::string();
  return checkJobToken(value, std::string("environment variable ") + kJobTokenVariable);
}

}  // namespace streetgan
