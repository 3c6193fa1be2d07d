"""NCCL's own bandwidth on this host, the baseline for Trident's device-to-device exchange.

PyTorch's NCCL process group (the same NCCL the host has) on every GPU, one process each:
a 256 MiB all-reduce (the issue's reference figure) and an all-gather of 256 MiB per rank,
median of 10 after 3 warm-ups. Bus bandwidth as nccl-tests defines it: all-reduce
2(n-1)/n * bytes / t, all-gather (n-1)/n * total bytes / t.

    python3 benches/dist/nccl_baseline.py [MiB]
"""

import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def run(rank, world, mib):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    n = mib * (1 << 20) // 4
    x = torch.ones(n, dtype=torch.float32, device="cuda")
    out = torch.empty(n * world, dtype=torch.float32, device="cuda")

    def timed(f):
        times = []
        for i in range(13):
            torch.cuda.synchronize()
            dist.barrier()
            t = time.perf_counter()
            f()
            torch.cuda.synchronize()
            if i >= 3:
                times.append(time.perf_counter() - t)
        return statistics.median(times)

    t_ar = timed(lambda: dist.all_reduce(x))
    t_ag = timed(lambda: dist.all_gather_into_tensor(out, x))
    if rank == 0:
        b = n * 4
        print(f"nccl {'.'.join(map(str, torch.cuda.nccl.version()))}, {world} x {torch.cuda.get_device_name(0)}")
        print(f"all-reduce {mib} MiB: {t_ar * 1e3:.3f} ms, bus bandwidth {2 * (world - 1) / world * b / t_ar / 1e9:.1f} GB/s")
        print(f"all-gather {mib} MiB per rank: {t_ag * 1e3:.3f} ms, bus bandwidth {(world - 1) / world * b * world / t_ag / 1e9:.1f} GB/s")
    dist.destroy_process_group()


if __name__ == "__main__":
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    world = torch.cuda.device_count()
    mp.spawn(run, args=(world, mib), nprocs=world)
