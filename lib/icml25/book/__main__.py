"""Command line of the book: ``python -m icml25.book {status,run,ledger,clean,data}``.

Examples::

    python -m icml25.book status
    python -m icml25.book run 11                 # book mode: replaces the committed notebooks
    python -m icml25.book run 11 --mode quick    # into _build/runs/
    python -m icml25.book run 11 -p "seed=3"     # into _build/runs/ (overrides never publish)
    python -m icml25.book run --stale            # what `make book` does first
"""

from __future__ import annotations

import argparse
import os
import sys

from . import notebooks, paths
from .params import ParameterError, parse_overrides
from .tables import markdown_table


def cmd_status(args) -> int:
    from .staleness import state

    rows = []
    for chapter in notebooks.select(args.chapters):
        for py in chapter.notebooks:
            s = state(py)
            held = sum(c["holds"] for c in s.claims)
            rows.append([
                chapter.name,
                py.stem,
                ("stale: " + "; ".join(s.reasons)) if s.stale else "fresh",
                f"{s.duration:.1f} s" if s.duration is not None else "-",
                f"{held} held, {len(s.claims) - held} not held" if s.claims else "-",
            ])
    print(markdown_table(["chapter", "notebook", "state", "last duration", "claims"], rows))
    return 0


def cmd_run(args) -> int:
    from . import ledger, runner

    overrides = parse_overrides(" ".join(args.param or []))
    if args.mode:
        overrides["mode"] = args.mode
    chapters = notebooks.select(args.chapters)
    results = runner.run(chapters, overrides, only_stale=args.stale, progress=not args.no_progress)
    if results:
        print("\n" + runner.summary(results))
    if any(r.ok and r.mode == "book" and r.output.endswith(".ipynb") for r in results):
        for path in ledger.write():
            print(f"ledger updated: {paths.relative(path)}")
    failed = [r for r in results if not r.ok]
    if failed:
        print(f"\n{len(failed)} notebook(s) failed; committed notebooks were left untouched.",
              file=sys.stderr)
    return 1 if failed else 0


def cmd_ledger(args) -> int:
    from . import ledger

    if args.check:
        outdated = ledger.outdated()
        for path in outdated:
            print(f"out of date: {paths.relative(path)} (run `python -m icml25.book ledger`)")
        return 1 if outdated else 0
    for path in ledger.write():
        print(f"written: {paths.relative(path)}")
    return 0


def cmd_clean(args) -> int:
    for chapter in notebooks.select(args.chapters):
        for py in chapter.notebooks:
            if notebooks.clean_source(py):
                print(f"cleaned: {paths.relative(py)}")
    return 0


def cmd_data(args) -> int:
    from . import data

    problems = data.check()
    for problem in problems:
        print(problem)
    print(f"{len(data.read_manifest())} file(s) in data/MANIFEST, {len(problems)} problem(s)")
    return 1 if problems else 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m icml25.book", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", required=True)

    status = sub.add_parser("status", help="stale or fresh, last duration, claims, per notebook")
    status.add_argument("chapters", nargs="*", help="numbers or names (default: all)")
    status.set_defaults(func=cmd_status)

    run = sub.add_parser("run", help="execute chapters with papermill")
    run.add_argument("chapters", nargs="*", help="numbers or names (default: all)")
    run.add_argument("--mode", choices=["quick", "book", "paper"], help="default: book")
    run.add_argument("-p", "--param", action="append",
                     help='parameter overrides, e.g. -p "seed=3" (written under _build/runs/)')
    run.add_argument("--stale", action="store_true", help="only notebooks that are stale")
    run.add_argument("--no-progress", action="store_true", help="no per-cell progress bar")
    run.set_defaults(func=cmd_run)

    led = sub.add_parser("ledger", help="regenerate book/claims.md and chapters/*/_claims.md")
    led.add_argument("--check", action="store_true", help="only report out-of-date files")
    led.set_defaults(func=cmd_ledger)

    clean = sub.add_parser("clean", help="strip outputs/papermill metadata from the .py sources")
    clean.add_argument("chapters", nargs="*")
    clean.set_defaults(func=cmd_clean)

    data = sub.add_parser("data", help="check data/ against data/MANIFEST")
    data.set_defaults(func=cmd_data)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except (ParameterError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a reader that stopped early (`| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
