"""The probe's per-step peak memory (issue 23): on CUDA the step's peak allocated and peak
reserved, reset at each step's start; on CPU neither field is sent (absent, not 0) and
``mem`` is the process's peak RSS. The CUDA branch runs here on fake readings passed in,
torch itself untouched."""

import pytest
import torch
from probe_support import TINY, launch, records

from app.core.inputs.protocol import ProbeRecord
from gpu_probe import peak_memory
from gpu_probe.peak_memory import Readings, memory_fields, reset

pytestmark = pytest.mark.probe
CUDA = torch.device("cuda", 0)  # a device value only: nothing here touches a GPU


class FakeAllocator:
    """Peaks that grow as a step runs and return to zero on reset, as torch's do; it notes
    which device each call named."""

    def __init__(self) -> None:
        self.allocated = self.reserved = 0
        self.devices: list[torch.device] = []

    def run(self, allocated: int, reserved: int) -> None:
        self.allocated, self.reserved = max(self.allocated, allocated), max(self.reserved, reserved)

    def _read(self, name: str):
        def read(device: torch.device):
            self.devices.append(device)
            return getattr(self, name)

        return read

    def _reset(self, device: torch.device) -> None:
        self.devices.append(device)
        self.allocated = self.reserved = 0

    def readings(self) -> Readings:
        def no_rss():
            pytest.fail("a CUDA record reads no RSS")

        return Readings(self._read("allocated"), self._read("reserved"), self._reset, no_rss)


def test_on_cuda_each_step_reports_its_own_peaks_after_a_reset():
    fake = FakeAllocator()
    read = fake.readings()
    reset(CUDA, read)
    fake.run(allocated=3 << 30, reserved=4 << 30)
    first = memory_fields(CUDA, read)
    reset(CUDA, read)
    fake.run(allocated=1 << 30, reserved=2 << 30)
    second = memory_fields(CUDA, read)
    assert first == {"mem": 3 << 30, "mem_allocated": 3 << 30, "mem_reserved": 4 << 30}
    assert second == {"mem": 1 << 30, "mem_allocated": 1 << 30, "mem_reserved": 2 << 30}
    assert set(fake.devices) == {CUDA}  # every reading asks the rank's own device


def test_a_cuda_record_carries_the_peaks_and_the_protocol_accepts_them():
    fake = FakeAllocator()
    fake.run(allocated=5 << 30, reserved=5 << 30)
    base = {"run": "r", "rank": 0, "coord": {"dp": 0, "pp": 0, "tp": 0}, "node": 0,
            "step": 0, "t0": 1.7e9, "events": []}  # fmt: skip
    rec = ProbeRecord.model_validate(base | memory_fields(CUDA, fake.readings()))
    assert (rec.mem_allocated, rec.mem_reserved) == (5 << 30, 5 << 30)


def test_a_reading_of_reserved_below_allocated_never_costs_the_record():
    read = Readings(allocated=lambda d: 10, reserved=lambda d: 7, reset=lambda d: None)
    assert memory_fields(CUDA, read)["mem_reserved"] == 10


def test_on_cpu_only_the_rss_is_read_and_nothing_is_reset():
    def no_cuda(*_):
        pytest.fail("a CPU rank reads no CUDA counter")

    read = Readings(allocated=no_cuda, reserved=no_cuda, reset=no_cuda, rss=lambda: 123 << 20)
    cpu = torch.device("cpu")
    reset(cpu, read)
    assert memory_fields(cpu, read) == {"mem": 123 << 20}
    assert peak_memory.peak_rss_bytes() > 10 << 20  # this interpreter holds torch


@pytest.mark.timeout(120)
def test_a_cpu_runs_records_have_no_gpu_peaks_and_keep_the_rss(tmp_path):
    run = launch(["--pp", "2", "--microbatches", "2", "--steps", "2", "--quiet", *TINY], tmp_path)
    assert run.returncode == 0, run.output
    recs = records(tmp_path)
    assert len(recs) == 4  # 2 ranks x 2 steps
    for rec in recs:
        assert "mem_allocated" not in rec and "mem_reserved" not in rec, rec.keys()
        assert rec["mem"] > 50 << 20  # a process with torch loaded: its peak RSS, bytes
