"""The bench's process samples: a load worker that finished its share before the last sample
(exited, not yet reaped) is still counted, with its CPU and no memory."""

from __future__ import annotations

import subprocess
import sys
import time

from bench.lib.spawn import ProcSample


def state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0]


def test_a_process_that_exited_and_is_not_reaped_is_sampled_with_its_cpu() -> None:
    busy = "import time\nend = time.process_time() + 0.05\nwhile time.process_time() < end: pass"
    process = subprocess.Popen([sys.executable, "-c", busy])
    try:
        while state(process.pid) != "Z":  # a zombie: exited, not reaped
            time.sleep(0.01)
        sample = ProcSample.read(process.pid)
    finally:
        process.wait()
    assert sample.cpu > 0
    assert sample.rss_kb == sample.hwm_kb == 0
