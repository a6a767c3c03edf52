// The job store's messages (core/distributed/job_store_protocol.h) as a stranger on the rendezvous port
// may send them, before and after the handshake: the input as a request body and as a reply body.
// A request that decodes must encode back to the same bytes and be answered by a store table
// within its bounds (waits with no time to wait); nothing may crash, leak or allocate more than
// the body's lengths allow.
#include "core/distributed/job_store_protocol.h"
#include "core/distributed/job_store_table.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static streetgan::JobStoreTable table;
  if (auto request = streetgan::decodeStoreRequest(data, size)) {
    const auto again = streetgan::encodeStoreRequest(*request);
    if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
    if (request->op == streetgan::StoreOp::kWait) request->number = 0;
    (void)table.apply(*request);
  }
  if (auto reply = streetgan::decodeStoreReply(data, size)) {
    const auto again = streetgan::encodeStoreReply(*reply);
    if (again.size() != size) std::abort();
  }
  return 0;
}
