"""What llama-bench does not record about the machine: host name, OS, GPU driver, RAM."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from functools import lru_cache

from factreg import config

NVIDIA_SMI_TIMEOUT_S = 10.0


@lru_cache(maxsize=1)
def gpu_driver() -> str | None:
    """The NVIDIA driver version from `nvidia-smi` when it exists and answers, else None."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        proc = subprocess.run(
            [exe, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=NVIDIA_SMI_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    versions = sorted({line.strip() for line in proc.stdout.splitlines() if line.strip()})
    if proc.returncode != 0 or not versions:
        return None
    return ",".join(versions)


@lru_cache(maxsize=1)
def ram_gib() -> int | None:
    """Total physical memory in whole GiB (rounded), or None when it cannot be read."""
    try:
        pages = os.sysconf("SC_PHYS_PAGES")
        size = os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    if pages <= 0 or size <= 0:
        return None
    return round(pages * size / 2**30)


def identity(hostname: str | None = None) -> dict[str, str]:
    """Host conditions that decide comparability: machine, os, gpu_driver (when present), ram_gib."""
    out = {"machine": hostname or config.hostname(), "os": platform.system() or "unknown"}
    driver = gpu_driver()
    if driver:
        out["gpu_driver"] = driver
    ram = ram_gib()
    if ram is not None:
        out["ram_gib"] = str(ram)
    return out


def info() -> dict[str, str]:
    """Host facts kept alongside: OS release and CPU architecture."""
    return {"os_release": platform.release(), "arch": platform.machine()}
