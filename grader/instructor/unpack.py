"""Unpack a submitted .zip or .tar.gz safely, or refuse it with a reason.

Refused: absolute names, ``..`` components, links of any kind (a link is how an archive points
out of its folder), devices and fifos, more than :attr:`Caps.members` entries, and more than
:attr:`Caps.total_bytes` once decompressed. Sizes are counted on the bytes actually written, not
on the sizes the archive declares (a zip bomb lies about them). A submission, folder or
archive alike, may hold its unit folders at its top or one or two folders down
(``alice/l23_online_softmax/...``, ``alice/week3/l23_online_softmax/...``); :func:`submission_root`
finds them, or says what it found instead.
"""

from __future__ import annotations

import re
import shutil
import tarfile
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from grader.core.target import is_unit

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


IGNORED_DIRS = ("__MACOSX", "__pycache__", ".ipynb_checkpoints", ".git")
MAX_DEPTH = 2  # units at the top, one folder down (alice/l23_.../), or two (nbgrader: alice/week3/l23_.../)


class LayoutError(ValueError):
    """No single folder of the submission holds unit folders; the message says what was found and what is expected."""


def _subdirs(folder: Path) -> list[Path]:
    """Real subfolders (links are not followed), junk folders left out."""
    return sorted(p for p in folder.iterdir()
                  if p.is_dir() and not p.is_symlink() and p.name not in IGNORED_DIRS and not p.name.startswith("._"))


def _holds_units(folder: Path) -> list[str]:
    return [p.name for p in _subdirs(folder) if is_unit(p.name)]


def _listing(folder: Path, limit: int = 8) -> str:
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir())
    return ", ".join(names[:limit]) + (f", ... ({len(names)} entries)" if len(names) > limit else "") or "nothing"


def submission_root(folder: Path, units: Sequence[str] = ()) -> Path:
    """The one folder of a submission (a folder or an unpacked archive: one rule for both) that holds its
    unit folders: ``folder`` itself, or one or two folders down (``alice/l23_online_softmax/``,
    nbgrader's ``autograded/<student>/<assignment>/l23_online_softmax/``); the shallowest wins. Where
    several hold units at that depth, those holding one of ``units`` are preferred. LayoutError,
    naming what was found and what is expected, where none or several remain."""
    level = [folder]
    for _ in range(MAX_DEPTH + 1):
        found = [f for f in level if _holds_units(f)]
        preferred = [f for f in found if set(_holds_units(f)) & set(units)] or found
        if len(preferred) == 1:
            return preferred[0]
        if preferred:
            where = ", ".join(f"{f.relative_to(folder)}/ ({' '.join(_holds_units(f))})" for f in preferred)
            raise LayoutError(f"unit folders found in {len(preferred)} places: {where}; expected one place: "
                              "keep one copy of each unit folder (for nbgrader, grade one assignment: "
                              "batch --nbgrader COURSE --assignment A)")
        level = [sub for f in level for sub in _subdirs(f)]
    example = f"{units[0] if units else 'l23_online_softmax'}/<module>.py"
    raise LayoutError(f"no unit folder found at the top of the submission nor one or two folders down; found: "
                      f"{_listing(folder)}; expected {example} at its top (laid out like exercises/)")
