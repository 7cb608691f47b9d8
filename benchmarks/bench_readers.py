"""Time and peak memory of the evidence readers as their inputs double: they stream and stay linear.

Five readers (FOCUS plain and compressed), each on inputs of n, 2n, 4n and 8n items (generating them is not timed):

- snapshot: a Prometheus text snapshot of n samples of a metric nobody configured, around one wanted
  sample (read_text_snapshot: a block at a time, only the wanted lines parsed);
- range: a query_range response of n series of another metric and one wanted (read_query_range:
  the file is read a block at a time and the others' samples are stepped over, never built, so
  its memory stays flat);
- incidents: an incidents CSV of n/8 rows (the file limit is 5 MB) all open at once on distinct
  components (the overlap check is one sweep);
- focus, focus-gz: a FOCUS export of n rows (about 290 bytes each, every field quoted; one in ten a GPU
  machine's hour), plain and gzip-compressed (read_focus: a row at a time, summed per month as it goes, so
  its memory stays flat whatever the rows);
- xlsx: a workbook whose rows (n, at most the 10,001 a sheet may hold) each hold a cell at column
  XFD: refused at its first row while the sheet's XML is scanned, before openpyxl would fill 16,384
  cells a row (8 M for 500 rows), so its time and memory stay flat.

Each measurement runs in a fresh subprocess: seconds (wall clock of the read alone) and the
process's peak resident set (getrusage, MiB), which includes Python and the libraries (about 100 MiB
with pandas), and "read MiB", how far the read raised that peak above what the process held before
it. Linear: the time doubles at most with the input; the memory above that base grows no faster
than the input, and for the snapshot, the query_range file, FOCUS and the xlsx not at all.

    python benchmarks/bench_readers.py [--n 100000] [--steps 4]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from datetime import UTC
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKENS = "vllm:generation_tokens_total"


def make_snapshot(folder: Path, n: int) -> Path:
    path = folder / "2026-11-01T00:00:00Z.prom"
    with path.open("w") as out:
        out.write("# TYPE node_cpu_seconds_total counter\n")
        for i in range(n // 2):
            out.write(f'node_cpu_seconds_total{{cpu="{i}",mode="idle"}} {i}.5\n')
        out.write(f'# TYPE {TOKENS} counter\n{TOKENS}{{model_name="m"}} 42\n')
        for i in range(n - n // 2):
            out.write(f'node_memory_bytes{{node="{i}"}} {i}\n')
    return path


def make_range(folder: Path, n: int) -> Path:
    path = folder / "range.json"
    with path.open("w") as out:
        out.write('{"status":"success","data":{"resultType":"matrix","result":[')
        for i in range(n):
            out.write(
                '{"metric":{"__name__":"node_cpu_seconds_total","cpu":"%d"},"values":[[1793491200,"%d"],[1793491260,"%d"]]},'
                % (i, i, i + 1)
            )
        out.write(
            '{"metric":{"__name__":"%s","model_name":"m"},"values":[[1793491200,"0"],[1793491260,"60"]]}]}}' % TOKENS
        )
    return path


def make_incidents(folder: Path, n: int) -> Path:
    from datetime import datetime, timedelta

    start = datetime(2026, 1, 1, tzinfo=UTC)
    end = (start + timedelta(days=360)).isoformat()
    path = folder / "incidents.csv"
    with path.open("w") as out:
        out.write("start,end,impact,components\n")
        for i in range(n):
            out.write(f"{(start + timedelta(seconds=i)).isoformat()},{end},major,c{i}\n")
    return path


def make_xlsx(folder: Path, n: int) -> Path:
    import zipfile

    import openpyxl

    book = openpyxl.Workbook()
    book.active["A1"] = "id"
    base = folder / "base.xlsx"
    book.save(base)
    path = folder / "wide.xlsx"
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            data = source.read(name)
            if name == "xl/worksheets/sheet1.xml":
                text = data.decode()
                rows = "".join(f'<row r="{i}"><c r="XFD{i}"/></row>' for i in range(1, min(n, 10_000) + 1))
                data = (
                    text[: text.index("<sheetData>")]
                    + f"<sheetData>{rows}</sheetData>"
                    + text[text.index("</sheetData>") + len("</sheetData>") :]
                ).encode()
            target.writestr(name, data)
    return path


FOCUS_HEADER = (
    '"BillingPeriodStart","ChargePeriodStart","ChargePeriodEnd","ChargeCategory","ChargeClass","BilledCost",'
    '"EffectiveCost","ConsumedQuantity","ConsumedUnit","PricingQuantity","PricingUnit","InvoiceId",'
    '"BillingCurrency","SkuId","ChargeDescription","x_UsageType"\n'
)


def make_focus(folder: Path, n: int, compressed: bool = False) -> Path:
    """A FOCUS export of n rows, quoted as exports write it: one GPU-hour row in ten, the rest other spend."""
    import gzip

    path = folder / ("focus.csv.gz" if compressed else "focus.csv")
    with gzip.open(path, "wt", compresslevel=1) if compressed else path.open("w") as out:
        out.write(FOCUS_HEADER)
        for i in range(n):
            day = 1 + i % 30
            when = f'"2026-11-{day:02d}T00:00:00Z","2026-11-{day:02d}T01:00:00Z"'
            if i % 10 == 0:
                out.write(
                    f'"2026-11-01T00:00:00Z",{when},"Usage","","32.0","32.0","1","Hours","1","Hours","INV-11","USD",'
                    '"SKU-P6","$32 per On Demand Linux p6-b200.48xlarge Instance Hour",'
                    '"USE1-BoxUsage:p6-b200.48xlarge"\n'
                )
            else:
                out.write(
                    f'"2026-11-01T00:00:00Z",{when},"Usage","","0.0023","0.0023","0.1","GB","0.1","GB","INV-11","USD",'
                    f'"SKU-S3-{i % 97}","$0.023 per GB-month of storage","USE1-TimedStorage-ByteHrs"\n'
                )
    return path


def make_focus_gz(folder: Path, n: int) -> Path:
    return make_focus(folder, n, compressed=True)


MAKERS = {
    "snapshot": make_snapshot,
    "range": make_range,
    "incidents": make_incidents,
    "xlsx": make_xlsx,
    "focus": make_focus,
    "focus-gz": make_focus_gz,
}


def measure(kind: str, path: str) -> None:
    """In a subprocess: read one input, print {"seconds", "peak_mib"} as JSON."""
    import resource
    import time

    sys.path.insert(0, str(ROOT))
    import pandas  # noqa: F401  (loaded before the clock starts, as in a running command)

    from procure.errors import InputError

    problems: list = []
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    try:
        if kind == "snapshot":
            from procure.io.telemetry import read_text_snapshot

            read_text_snapshot(Path(path), path, {TOKENS}, problems)
        elif kind == "range":
            from procure.io.query_range import read_query_range

            read_query_range(Path(path), path, {TOKENS}, problems)
        elif kind == "incidents":
            from procure.io.incidents import read_incidents

            read_incidents(Path(path))
        elif kind.startswith("focus"):
            from procure.io.focus import read_focus

            months, _ = read_focus(Path(path), path, problems)
            assert not problems and len(months) == 1, problems[:3]
        else:
            from procure.io.importers import read_sheet

            read_sheet(Path(path))
    except InputError:
        pass  # the xlsx is refused: what is measured is how soon
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mib": peak, "read_mib": peak - base}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="items in the smallest input (default 100,000)")
    parser.add_argument("--steps", type=int, default=4, help="sizes, each double the one before (default 4)")
    parser.add_argument("--only", choices=sorted(MAKERS), help="one reader only")
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure)
        return
    print(f"{'reader':<10} {'items':>10} {'MB':>8} {'seconds':>8} {'peak MiB':>9} {'read MiB':>9}")
    for kind in [args.only] if args.only else list(MAKERS):
        for step in range(args.steps):
            n = (
                args.n // 8 if kind == "incidents" else args.n
            ) * 2**step  # an incidents CSV holds 100,000 rows and 5 MB at most
            with tempfile.TemporaryDirectory() as folder:
                path = MAKERS[kind](Path(folder), n)
                size = path.stat().st_size / 1e6
                done = subprocess.run(
                    [sys.executable, __file__, "--measure", kind, str(path)], capture_output=True, text=True, check=True
                )
                found = json.loads(done.stdout.strip().splitlines()[-1])
            shown = min(n, 10_000) if kind == "xlsx" else n  # a sheet holds 10,000 offers and the header at most
            print(
                f"{kind:<10} {shown:>10,} {size:>8.1f} {found['seconds']:>8.2f} {found['peak_mib']:>9.0f} "
                f"{found['read_mib']:>9.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
