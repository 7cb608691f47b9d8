"""The console entry point: a repeated `procure compare` or `procure report` on unchanged inputs is answered from the
result cache (procure/io/resultcache.py) before the command line, or any library it computes with, is imported;
otherwise the command runs as always (procure/cli), and what it printed, and the document it wrote, are kept for the
next time."""

from __future__ import annotations

import io
import sys

# The commands whose answers are kept: compare writes nothing but its output (with --out it is not kept); report
# writes one document, kept with the answer
KEPT = ("compare", "report")


class _Capture:
    """Bytes written to one stream, in order, whether as text or to its binary buffer."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.spinner = False


class _BinaryTee(io.RawIOBase):
    def __init__(self, raw: object, capture: _Capture) -> None:
        self._raw = raw
        self._capture = capture

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[no-untyped-def, override]
        written = self._raw.write(data)  # type: ignore[attr-defined]
        self._capture.parts.append(bytes(data))
        return written if written is not None else len(data)

    def flush(self) -> None:
        self._raw.flush()  # type: ignore[attr-defined]

    def fileno(self) -> int:
        return self._raw.fileno()  # type: ignore[attr-defined]

    def isatty(self) -> bool:
        return self._raw.isatty()  # type: ignore[attr-defined]


class _TextTee(io.TextIOBase):
    """A text stream that writes through to the one it replaces and keeps a copy: the same terminal, the same
    encoding, so the command prints exactly what it would."""

    def __init__(self, stream: io.TextIOBase, capture: _Capture) -> None:
        self._stream = stream
        self._capture = capture
        raw = getattr(stream, "buffer", None)
        self.buffer = _BinaryTee(raw, capture) if raw is not None else None

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self._stream.errors

    @property
    def line_buffering(self) -> bool:
        return getattr(self._stream, "line_buffering", False)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:  # type: ignore[override]
        written = self._stream.write(text)
        if "\r" in text or "\x1b[?25" in text:
            self._capture.spinner = True  # a spinner (procure/cli/output.py `working`): timing, not an answer
        self._capture.parts.append(text.encode(self.encoding or "utf-8", self.errors or "strict"))
        return written

    def flush(self) -> None:
        self._stream.flush()

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()


def _status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    return 1


def main() -> None:
    """Answer from the result cache, else run the command line and keep its answer. The environment is read here,
    before the command line loads, because the result cache's key and folder depend on it (procure/environment.py);
    the command line reads its own when it runs."""
    import os

    from procure.environment import Environment, using

    with using(Environment(dict(os.environ))):
        _answer(sys.argv[1:])


def _answer(args: list[str]) -> None:
    if not args or args[0] not in KEPT:
        from procure.cli import main as command_line

        command_line()  # any other command: nothing imported before the command line
        return
    key = None
    try:
        from procure.io import resultcache

        key = resultcache.key_for(args)
        found = resultcache.load(key) if key is not None else None
    except Exception:  # the cache is a convenience: any fault of its own turns it off
        key, found = None, None
    if found is not None and found[3] and not _written_again(found[3]):
        found = None  # a document that cannot be written as it was: the command runs and says why
    if found is not None and getattr(sys.stdout, "buffer", None) and getattr(sys.stderr, "buffer", None):
        status, out, err, _ = found
        try:
            sys.stdout.buffer.write(out)
            sys.stdout.flush()
            sys.stderr.buffer.write(err)
            sys.stderr.flush()
        except BrokenPipeError:  # a reader that stopped early (`| head`): the rest goes nowhere, without a traceback
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(status)

    from procure.cli import main as command_line

    if key is None:
        command_line()
        return
    out, err = _Capture(), _Capture()
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _TextTee(stdout, out), _TextTee(stderr, err)  # type: ignore[assignment]
    status: int | None = None
    try:
        command_line()
        status = 0
    except SystemExit as exc:
        status = _status(exc.code)
        raise
    finally:
        sys.stdout, sys.stderr = stdout, stderr
        if status in (0, 2) and not out.spinner and not err.spinner:
            try:
                files = resultcache.written() if status == 0 else []
                resultcache.store(key, status, b"".join(out.parts), b"".join(err.parts), files)
            except Exception:
                pass


def _written_again(files: list) -> bool:  # type: ignore[type-arg]
    """Write a kept answer's documents as the command wrote them (procure/io/files.py: atomically, never over an
    input or anything but a regular file); False, with nothing more written, where one cannot be."""
    try:
        from procure.io.files import write_atomic

        for path, content in files:
            write_atomic(path, content)
    except Exception:
        return False
    return True
