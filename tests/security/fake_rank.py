#!/usr/bin/python3
"""A stranger on the rendezvous port, as issue 49 found one: it joins rank 0's c10d store as rank 1
of 2 (the join protocol of core/distributed/rank_group.cpp), then plays the attack on a resumed run's
config exchange, the first collective of the job: it adds EXTRA to the size it gives the exchange,
receives the size the exchange yields and that many bytes, and counts the non-zero bytes past
what rank 0 meant to send (the part of the announced size that is EXTRA): rank 0's memory, when
the attack works.

    fake_rank.py PORT EXTRA

Prints one JSON line: {"announced": N, "leaked_nonzero": K}, or {"error": "..."} when the join or
a collective fails (rank 0's store drops a stranger that cannot prove the job's token).
"""
import datetime
import json
import sys

import torch
import torch.distributed as dist


def join(port, timeout):
    store = dist.TCPStore("127.0.0.1", port, None, False, timeout)
    store.wait(["streetgan/attempt"])
    store.wait(["streetgan/join/job"])
    store.add("streetgan/join/rank/1", 1)
    store.set("streetgan/join/in/1", "stranger")
    store.add("streetgan/join/count", 1)
    store.wait(["streetgan/join/verdict"])
    verdict = store.get("streetgan/join/verdict")
    if verdict != b"ok":
        raise RuntimeError("rank 0 refused the join: " + verdict.decode(errors="replace"))
    options = dist.ProcessGroupGloo._Options()
    options._devices = [dist.ProcessGroupGloo.create_device(hostname="127.0.0.1")]
    options._timeout = timeout
    return dist.ProcessGroupGloo(dist.PrefixStore("streetgan/gloo", store), 1, 2, options)


def main():
    port, extra = int(sys.argv[1]), int(sys.argv[2])
    try:
        group = join(port, datetime.timedelta(seconds=20))
    except Exception as error:  # refused at the door; "Connection refused" goes to stderr, to try again
        if "Connection refused" in str(error):
            raise
        print(json.dumps({"join_error": (str(error).splitlines() or [type(error).__name__])[0]}))
        return
    try:
        size = torch.tensor([extra], dtype=torch.int64)
        group.allreduce([size]).wait()
        announced = int(size.item())
        data = torch.zeros(max(announced, 0), dtype=torch.uint8)
        group.broadcast(data, 0).wait()
        meant = max(announced - extra, 0)
        print(json.dumps({"announced": announced, "leaked_nonzero": int((data[meant:] != 0).sum().item())}))
    except Exception as error:  # the collective failed: rank 0 did not send what the sum said
        print(json.dumps({"error": (str(error).splitlines() or [type(error).__name__])[0]}))


if __name__ == "__main__":
    main()
