"""The result cache of `tfproc-lint check`, like Ruff's: a second run over unchanged files reads
their findings instead of importing LibCST and analysing them again.

An entry is keyed by everything that can change a file's result: its bytes (a hash), the path it is
reported under, whether fix edits were asked for, the effective configuration (every field of the
`Config` the file is checked with, its `origin` included: messages quote where a setting came from),
and the linter itself (its version, the Python and the CPU count it runs with, and the size and
modification time of each of its modules and of LibCST's version file, so that an edited checkout
never reads results of its old code). Entries
live in `<cache dir>/<linter fingerprint>/<key>.json`; the folder holds a `.gitignore` of `*` and a
`CACHEDIR.TAG`, as Ruff's does. Only files that reach the analysis are stored (the others are
decided by the pre-filter faster than a cache lookup). Writes are atomic (a temporary file, then
`os.replace`), so concurrent runs and `-j` workers never read half an entry. A missing, corrupt or
unwritable entry is a miss, never an error; an unusable cache folder turns the cache off with one
warning (`open_cache`). `--fix` and `--diff` do not use it: they rewrite and re-check each file.
Project module summaries (tfproc_lint/project.py) are kept beside the entries (`SummaryStore`),
each with the files it was read from, served only while they are unchanged.

The file index (`FileIndex`, like git's index) spares a second run reading and screening every
file: for each path it remembers the file's `os.stat` signature (device, inode, size, modification
and status-change times in nanoseconds) and what the run found: that the pre-filter stops it (its
result is empty whatever the configuration), or its content's digest (its result is the entry of
that digest's key, for this run's configuration). Any write to a file changes its status-change
time, which no program can set back, so an unchanged signature means unchanged bytes, with one
exception that git calls "racily clean": a file written within its timestamp's granularity after
it was read. A signature is therefore remembered only for a file last changed more than
`RACY_SECONDS` before the run began; a more recent one is read and hashed again each run.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

from tfproc_lint import __version__
from tfproc_lint.config import Config
from tfproc_lint.diagnostics import Applicability, Diagnostic, Edit, FileError, Fix, Related, Severity

DEFAULT_CACHE_DIR = ".tfproc_lint_cache"
# Config fields that cannot change a file's result: where the cache is, and the run's warnings.
_NOT_RESULTS = frozenset({"cache_dir", "warnings"})
_FORMAT = 3  # bumped when an entry's layout changes
INDEX_NAME = "file-index"  # the file index (JSON), in the versioned folder beside the entries
SUMMARIES = "summaries"  # project module summaries (SummaryStore), in the versioned folder
# A file changed less than this before a run may change again without a new timestamp (coarse
# file system clocks: 2 s on FAT, 1 s on ext3 and HFS+); its signature is not remembered.
RACY_SECONDS = 2.0
# hashlib, json and tempfile are imported where used: a run whose files all stop at the pre-filter
# never needs them (about a quarter of the start of a check of one file without TensorFlow).


@dataclasses.dataclass(frozen=True)
class ResultCache:
    directory: Path  # <cache dir>/<linter fingerprint>

    def key(self, data: bytes, display: str, config: Config, fix_edits: bool) -> str:
        return self.key_for(content_digest(data), display, config, fix_edits)

    def key_for(self, digest: str, display: str, config: Config, fix_edits: bool) -> str:
        """The entry's key for a content digest (`content_digest`) and everything else that can
        change the file's result."""
        import hashlib

        key = hashlib.blake2b(digest.encode("ascii"), digest_size=20)
        key.update(b"\0" + display.encode("utf-8", "surrogatepass") + b"\0" + bytes([fix_edits]))
        key.update(b"\0" + settings_key(config).encode("utf-8", "surrogatepass"))
        return key.hexdigest()

    def summaries(self) -> "SummaryStore":
        """Where project module summaries are kept (tfproc_lint/project.py reads and writes them)."""
        return SummaryStore(self.directory / SUMMARIES)

    def file_index(self) -> "FileIndex":
        return FileIndex.load(self.directory / INDEX_NAME)

    def get(self, key: str) -> list[Diagnostic] | FileError | None:
        """The stored result, or None (no entry, or one that cannot be read back)."""
        import json

        try:
            with open(self.directory / f"{key}.json", encoding="utf-8") as stream:
                entry = json.load(stream)
            if not deps_unchanged(entry.get("deps", ())):
                return None  # a project module it read has changed since
            if "error" in entry:
                path, reason = entry["error"]
                return FileError(str(path), str(reason))
            return [_diagnostic(item) for item in entry["diagnostics"]]
        except Exception:  # noqa: BLE001 - missing, truncated, edited by hand: recompute
            return None

    def put(self, key: str, diagnostics: list[Diagnostic], error: FileError | None = None,
            deps: list | tuple = ()) -> None:
        """Store a result; internal errors are not stored (a fixed bug must not stay cached).
        `deps`: (path, content digest) of each project module whose summary the result used: the
        entry is valid only while each of them is unchanged."""
        if error is not None and error.internal:
            return
        import json
        import tempfile

        entry = {"error": [error.path, error.reason]} if error else {"diagnostics": [_encoded(d) for d in diagnostics]}
        if deps:
            entry["deps"] = [list(dep) for dep in deps]
        try:
            descriptor, temporary = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
                    json.dump(entry, stream, separators=(",", ":"))
                os.replace(temporary, self.directory / f"{key}.json")
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:  # full disk, folder removed meanwhile: the next run recomputes
            pass


@dataclasses.dataclass(frozen=True)
class SummaryStore:
    """Project module summaries by key (the module file's content digest and everything else its
    summary can depend on, tfproc_lint/project.py makes it), each valid while the files it read
    (deps) are unchanged. Missing, stale or unreadable: None, never an error."""

    directory: Path

    def load(self, key: str) -> dict | None:
        import json

        try:
            with open(self.directory / f"{key}.json", encoding="utf-8") as stream:
                entry = json.load(stream)
            if not deps_unchanged(entry["deps"]):
                return None
            return entry
        except Exception:  # noqa: BLE001 - missing, truncated, edited by hand: recompute
            return None

    def save(self, key: str, entry: dict) -> None:
        """Store `entry` (plain data with a "deps" list of [path, digest]) atomically."""
        import json
        import tempfile

        try:
            self.directory.mkdir(exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
                    json.dump(entry, stream, separators=(",", ":"))
                os.replace(temporary, self.directory / f"{key}.json")
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:  # full disk, folder removed meanwhile: the next run recomputes
            pass


def deps_unchanged(deps) -> bool:
    """Each (path, digest) still names a file with that content."""
    for path, digest in deps:
        try:
            with open(path, "rb") as stream:
                if content_digest(stream.read()) != digest:
                    return False
        except OSError:
            return False
    return True


def content_digest(data: bytes) -> str:
    import hashlib

    return hashlib.blake2b(data, digest_size=20).hexdigest()


# What the file index remembers of a file: the pre-filter stops it (whatever the configuration), or
# the digest of its content (a str of hex digits).
PREFILTERED = ""
Signature = tuple  # (st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)


class FileIndex:
    """Each file's `os.stat` signature and what a run found for it (see the module's docstring).
    Loaded at the start of a run and written back at its end if it changed; concurrent runs may
    overwrite each other's index, which costs only a reread next time."""

    def __init__(self, path: Path, entries: dict[str, list]) -> None:
        self.path = path
        self.entries = entries  # key (`index_key`) -> [*signature, outcome]
        self.changed = False
        # Files changed after this are "racily clean" (see RACY_SECONDS): not remembered.
        self._settled_before_ns = time.time_ns() - int(RACY_SECONDS * 1e9)

    @classmethod
    def load(cls, path: Path) -> "FileIndex":
        import json

        try:
            with open(path, encoding="utf-8") as stream:
                entries = json.load(stream)
            if not isinstance(entries, dict):
                entries = {}
        except Exception:  # noqa: BLE001 - missing, truncated, edited by hand: start afresh
            entries = {}
        return cls(path, entries)

    @staticmethod
    def signature(path) -> Signature | None:
        try:
            stat = os.stat(path)
        except OSError:
            return None
        return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns

    def outcome(self, key: str, signature: Signature | None) -> str | None:
        """What was found for this file when it had this signature, or None."""
        entry = self.entries.get(key)
        if signature is None or not isinstance(entry, list) or len(entry) != 6 or tuple(entry[:5]) != signature:
            return None
        return entry[5] if isinstance(entry[5], str) else None

    def remember(self, key: str, signature: Signature | None, outcome: str | None) -> None:
        if signature is None or outcome is None or max(signature[3], signature[4]) >= self._settled_before_ns:
            return
        entry = [*signature, outcome]
        if self.entries.get(key) != entry:
            self.entries[key] = entry
            self.changed = True

    def save(self) -> None:
        if not self.changed:
            return
        import json
        import tempfile

        try:
            descriptor, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
                    json.dump(self.entries, stream, separators=(",", ":"))
                os.replace(temporary, self.path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:  # the next run reads the files again
            pass
        self.changed = False


def index_key(display: str, explicit: bool) -> str:
    """A file named on the command line is decoded whatever it holds: another outcome."""
    return f"{int(explicit)}{display}"


def open_cache(directory: Path) -> tuple[ResultCache | None, str]:
    """The cache in `directory` (created, with its `.gitignore`), or None and a one-line warning."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, content in ((".gitignore", "# Automatically created by tfproc-lint.\n*\n"),
                              ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n")):
            if not (directory / name).exists():
                (directory / name).write_text(content, encoding="utf-8")
        versioned = directory / linter_fingerprint()
        versioned.mkdir(exist_ok=True)
        if not os.access(versioned, os.W_OK | os.X_OK):
            raise PermissionError(f"Permission denied: '{versioned}'")
    except OSError as error:
        return None, f"cache disabled: cannot use {directory}: {error.strerror or error}"
    return ResultCache(versioned), ""


def settings_key(config: Config) -> str:
    """A stable text of every field of `config` that can change a result."""
    import json

    values = {f.name: _stable(getattr(config, f.name))
              for f in dataclasses.fields(config) if f.name not in _NOT_RESULTS}
    return json.dumps(values, sort_keys=True, default=repr)


def _stable(value):
    if isinstance(value, dict):
        return sorted((repr(k), _stable(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_stable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(repr(v) for v in value)
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def linter_fingerprint() -> str:
    """The linter's version, the Python it runs on, the CPU count, and the size and modification
    time of every module of tfproc_lint and of LibCST's version file (about 1 ms of `stat` calls)."""
    import hashlib
    import importlib.util

    package = Path(__file__).resolve().parent
    # TFP302's message counts this machine's CPUs
    parts = [f"{_FORMAT}", __version__, sys.version, f"cpus:{os.cpu_count()}"]
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        parts.append(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}")
    spec = importlib.util.find_spec("libcst")
    if spec is not None and spec.origin:
        version_file = Path(spec.origin).with_name("_version.py")
        try:
            stat = version_file.stat()
            parts.append(f"libcst:{stat.st_size}:{stat.st_mtime_ns}")
        except OSError:
            parts.append("libcst")
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()


# entries ------------------------------------------------------------------------------------------
def _encoded(diagnostic: Diagnostic) -> dict:
    fix = diagnostic.fix
    return {
        "code": diagnostic.code, "message": diagnostic.message, "path": diagnostic.path,
        "line": diagnostic.line, "col": diagnostic.col, "severity": diagnostic.severity.value,
        "end_line": diagnostic.end_line, "end_col": diagnostic.end_col, "cell": diagnostic.cell,
        "fix": None if fix is None else {
            "title": fix.title, "applicability": fix.applicability.value,
            "edits": None if fix.edits is None else [[e.start, e.end, e.content] for e in fix.edits]},
        "related": [[r.message, r.line, r.col, r.end_line, r.end_col, r.cell, r.path] for r in diagnostic.related],
        "manual_edit": diagnostic.manual_edit,
    }


def _diagnostic(item: dict) -> Diagnostic:
    fix = item["fix"]
    if fix is not None:
        edits = fix["edits"]
        fix = Fix(fix["title"], Applicability(fix["applicability"]),
                  None if edits is None else tuple(Edit(*edit) for edit in edits))
    return Diagnostic(
        code=item["code"], message=item["message"], path=item["path"], line=item["line"], col=item["col"],
        severity=Severity(item["severity"]), fix=fix, end_line=item["end_line"], end_col=item["end_col"],
        related=tuple(Related(*related) for related in item["related"]), cell=item["cell"],
        manual_edit=item["manual_edit"],
    )
