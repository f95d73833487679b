"""Unpack a submitted .zip or .tar.gz safely, or refuse it with a reason.

Refused: absolute names, ``..`` components, links of any kind (a link is how an archive points
out of its folder), devices and fifos, more than :attr:`Caps.members` entries, and more than
:attr:`Caps.total_bytes` once decompressed. Sizes are counted on the bytes actually written, not
on the sizes the archive declares (a zip bomb lies about them). The archive may hold the unit
folders at its top or under one folder (``alice/l23_online_softmax/...``); :func:`submission_root`
finds them.
"""

from __future__ import annotations

import re
import shutil
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from grader.grading.target import is_unit

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")


class UnsafeArchive(ValueError):
    """The archive was refused; the message says why."""


@dataclass(frozen=True)
class Caps:
    total_bytes: int = 64 * 2**20
    members: int = 2000


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.endswith(ARCHIVE_SUFFIXES)


def archive_stem(path: Path) -> str:
    return next(path.name[: -len(s)] for s in ARCHIVE_SUFFIXES if path.name.endswith(s))


def _safe_name(name: str) -> PurePosixPath:
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or re.match(r"^[A-Za-z]:", name):
        raise UnsafeArchive(f"absolute path {name!r}")
    if ".." in p.parts:
        raise UnsafeArchive(f"path with '..' {name!r}")
    return p


@dataclass(frozen=True)
class _Member:
    name: PurePosixPath
    is_dir: bool
    open: object  # () -> binary file object


def _zip_members(zf: zipfile.ZipFile) -> Iterator[_Member]:
    for info in zf.infolist():
        mode = info.external_attr >> 16
        if mode and (mode & 0o170000) not in (0, 0o100000, 0o040000):
            raise UnsafeArchive(f"{info.filename!r} is a link or special file")
        yield _Member(_safe_name(info.filename), info.is_dir(), lambda info=info: zf.open(info))


def _tar_members(tf: tarfile.TarFile) -> Iterator[_Member]:
    for info in tf:
        if not (info.isfile() or info.isdir()):
            raise UnsafeArchive(f"{info.name!r} is a link or special file")
        yield _Member(_safe_name(info.name), info.isdir(), lambda info=info: tf.extractfile(info))


def unpack(archive: Path, dest: Path, caps: Caps = Caps()) -> Path:
    """Extract ``archive`` into the new folder ``dest``; UnsafeArchive (and nothing written) if refused."""
    dest.mkdir(parents=True)
    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                _extract(_zip_members(zf), dest, caps)
        else:
            with tarfile.open(archive, "r:gz") as tf:
                _extract(_tar_members(tf), dest, caps)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise UnsafeArchive(f"cannot read {archive.name}: {exc}") from None
    except UnsafeArchive:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return dest


def _extract(members: Iterator[_Member], dest: Path, caps: Caps) -> None:
    budget = caps.total_bytes
    for count, m in enumerate(members, 1):
        if count > caps.members:
            raise UnsafeArchive(f"more than {caps.members} entries")
        out = dest.joinpath(*m.name.parts)
        if m.is_dir:
            out.mkdir(parents=True, exist_ok=True)
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        with m.open() as src, out.open("wb") as dst:  # type: ignore[operator]
            budget = _copy_capped(src, dst, budget, caps.total_bytes)


def _copy_capped(src: IO[bytes], dst: IO[bytes], budget: int, total: int) -> int:
    while chunk := src.read(1 << 16):
        budget -= len(chunk)
        if budget < 0:
            raise UnsafeArchive(f"more than {total >> 20} MiB once unpacked")
        dst.write(chunk)
    return budget


def submission_root(folder: Path) -> Path:
    """The folder that holds the unit folders: ``folder`` itself or its only subfolder."""
    if any(is_unit(p.name) for p in folder.iterdir() if p.is_dir()):
        return folder
    subdirs = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(("__MACOSX", "."))]
    if len(subdirs) == 1 and any(is_unit(p.name) for p in subdirs[0].iterdir() if p.is_dir()):
        return subdirs[0]
    return folder
