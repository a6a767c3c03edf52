#pragma once
// Secrets and nonces from the kernel's generator (getrandom): the job store's nonces, the job
// token, the launch id a detached training process carries in its environment.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

/// `count` random bytes. The kernel's generator does not fail once the system has booted; when
/// it does, that is a broken system, and this throws std::runtime_error.
std::vector<std::uint8_t> randomBytes(std::size_t count);
/// `count` random bytes as 2 × `count` lowercase hex digits.
std::string randomHex(std::size_t count);

}  // namespace streetgan
