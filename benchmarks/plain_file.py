"""A typical small script with neither TensorFlow nor processes, for the single-file latency of
benchmarks/lint_speed.py: what a pre-commit hook pays for on most files of a project."""
import argparse
import csv
import statistics
from pathlib import Path


def read_rows(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def column(rows: list[dict], name: str) -> list[float]:
    values = []
    for row in rows:
        try:
            values.append(float(row[name]))
        except (KeyError, ValueError):
            continue
    return values


def summary(values: list[float]) -> dict:
    if not values:
        return {"count": 0}
    return {
        "count": len(values),
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "spread": max(values) - min(values),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Summarise one column of a CSV file.")
    parser.add_argument("csv", type=Path)
    parser.add_argument("--column", default="latency_ms")
    args = parser.parse_args()
    figures = summary(column(read_rows(args.csv), args.column))
    for key, value in figures.items():
        print(f"{key:>8}: {value}")


if __name__ == "__main__":
    main()
