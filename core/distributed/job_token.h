#pragma once
// The job token: a secret every rank of a distributed job proves it knows before rank 0's store
// (JobStoreServer) lets it in. `streetgan train --nproc N` makes one for a job on one host and
// gives it to its ranks in the environment; a job on several hosts shares one through
// `--job-token FILE` (the same file on every host) or the environment variable, which is also
// how ranks started by torchrun get it. The token never appears on a command line or in a log.
#include "core/util/result.h"

#include <string>

namespace streetgan {

/// The environment variable that carries the token to a rank.
inline constexpr char kJobTokenVariable[] = "STREETGAN_JOB_TOKEN";
inline constexpr std::size_t kMinJobTokenBytes = 16;
inline constexpr std::size_t kMaxJobTokenBytes = 1024;

/// A new token: 32 random bytes as 64 hex digits.
std::string newJobToken();
/// `token` when it is usable (16 to 1024 printable characters, no spaces), or an Error that
/// names `where` it came from.
Result<std::string> checkJobToken(const std::string& token, const std::string& where);
/// The token in the first line of `path`: a regular file of at most 4 KiB that other users cannot
/// read (it is the job's secret), or an Error naming the file.
Result<std::string> readJobTokenFile(const std::string& path);
/// The token in the environment variable, nothing when it is unset or empty, or an Error.
Result<std::string> jobTokenFromEnvironment();

}  // namespace streetgan
