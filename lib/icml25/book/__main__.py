"""Command line of the book: ``python -m icml25.book {status,run,robustness,ledger,...}``.

Examples::

    python -m icml25.book status
    python -m icml25.book run 11                 # book mode: replaces the committed notebooks
    python -m icml25.book run 11 --mode quick    # into _build/runs/
    python -m icml25.book run 11 -p "seed=3"     # into _build/runs/ (overrides never publish)
    python -m icml25.book run --stale --jobs 2   # what `make book` does first
    python -m icml25.book robustness 11 --seeds 5  # verdicts under seeds 0-4: _robustness.json
    python -m icml25.book robustness --until-decided  # more seeds while a claim is undecided
    python -m icml25.book claims --json          # every claim, its seeds and pooled verdict
    python -m icml25.book claims --headline      # the papers' headline claims and verdicts
    python -m icml25.book robustness --scheduler tcp://host:8786  # on a Dask cluster
    python -m icml25.book fingerprint            # what a Dask worker must share with the client
    python -m icml25.book numerics               # this CPU's kernels against other CPUs' bits
    python -m icml25.book perturbed 16           # chapter 16's claims under perturbed numerics
    python -m icml25.book student 11             # _build/student/11-sotdd/*.ipynb, no solutions
    python -m icml25.book pdf 11                 # _build/html/_pdf/11-sotdd.pdf, after a build
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from icml25.book.claims import VERDICTS
from icml25.book.params import MODES, ParameterError, parse_overrides
from icml25.book.run import notebooks, robustness
from icml25.book.run.executor import WorkerMismatch
from icml25.book.tables import markdown_table
from icml25.common import paths
from icml25.common.numerics import PERTURBATIONS

#: Per-chapter budgets on a 2-core machine, read from recorded durations (see ``budgets``).
BOOK_BUDGET_S, QUICK_BUDGET_S = 90, 20


def cmd_status(args) -> int:
    from icml25.book.run.staleness import state

    rows = []
    for chapter in notebooks.select(args.chapters):
        for py in chapter.notebooks:
            s = state(py)
            verdicts = [c["verdict"] for c in s.claims]
            counts = ", ".join(f"{verdicts.count(v)} {v}" for v in VERDICTS if v in verdicts)
            rows.append([
                chapter.name,
                py.stem,
                ("stale: " + "; ".join(s.reasons)) if s.stale else "fresh",
                f"{s.duration:.1f} s" if s.duration is not None else "-",
                counts or "-",
            ])
        seeds = robustness.problems(chapter)
        rows.append([chapter.name, "(seeds)", "; ".join(seeds) if seeds else "fresh", "-", "-"])
    print(markdown_table(["chapter", "notebook", "state", "last duration", "verdicts"], rows))
    print("\n" + budgets())
    return 0


def budgets() -> str:
    """Each chapter's recorded durations against the budgets (book 90 s, quick 20 s on 2 cores).

    Read from what the executions recorded, never timed here: a busy machine would lie.
    """
    from icml25.book.run.staleness import read_record, state

    def busy(records) -> bool:
        """Was any run measured while more processes wanted a core than there were cores?"""
        for record in records:
            load = (record or {}).get("load")
            if load and max(load["before"], load["after"]) > load["cores"] + 0.5:
                return True
        return False

    def cell(seconds, budget, records) -> str:
        text = f"{seconds:.0f} s" + ("" if seconds <= budget else " OVER")
        return text + (" (measured on a busy machine)" if busy(records) else "")

    rows = []
    for chapter in notebooks.chapters():
        book = [state(py).record for py in chapter.notebooks]
        book_s = sum((r or {}).get("duration_s", 0) for r in book)
        quick = [paths.RUNS / chapter.name / f"{py.stem}.quick.ipynb" for py in chapter.notebooks]
        quick_records = [read_record(q) for q in quick if q.exists()]
        quick_s = (sum((r or {}).get("duration_s", 0) for r in quick_records)
                   if len(quick_records) == len(quick) else None)
        rows.append([
            chapter.name,
            cell(book_s, BOOK_BUDGET_S, book),
            "not run" if quick_s is None else cell(quick_s, QUICK_BUDGET_S, quick_records),
        ])
    return markdown_table(
        ["chapter", f"book mode (budget {BOOK_BUDGET_S} s)",
         f"quick mode (budget {QUICK_BUDGET_S} s; `make quick` records it)"], rows)


def cmd_robustness(args) -> int:
    """Seeds 0..N-1 for the chosen chapters; with ``--until-decided``, for the chapters whose
    claims are still undecided, the seeds up to the next look of the chapter's seed plan
    (``[chapter] looks``; never beyond a claim's ``max_seeds``), while a seed of the chapter
    costs at most ``--cheap-s`` seconds and the added runs fit in ``--budget-s`` seconds of
    execution (cheapest chapters first). A look is a whole look: stopping between two would
    add one the plan did not declare. A chapter whose look is due but too dear for those two
    limits is named, and the command exits with 1: its record stops short of its plan."""
    from icml25.book.site import ledger

    chapters = notebooks.select(args.chapters)
    by_name = {chapter.name: chapter for chapter in chapters}
    if args.carry_over:
        kept = robustness.carry_over(chapters, jobs=args.jobs, scheduler=args.scheduler)
        for name, record in kept.items():
            path = robustness.write(by_name[name], record)
            print(f"carried over: {paths.relative(path)}")
        for path in ledger.write():
            print(f"ledger updated: {paths.relative(path)}")
        return 0 if all(not robustness.problems(c) for c in chapters) else 1
    target = {chapter.name: args.seeds for chapter in chapters}
    budget = args.budget_s
    failed, short = False, []
    while target:
        todo = [by_name[name] for name in target]
        try:
            records = {}
            for n in sorted(set(target.values())):
                records |= robustness.measure([c for c in todo if target[c.name] == n], n,
                                              jobs=args.jobs, scheduler=args.scheduler)
        except RuntimeError as exc:
            print(str(exc), file=sys.stderr)
            records, failed = exc.records, True
        for name, record in records.items():
            path = robustness.write(by_name[name], record)
            print(f"written: {paths.relative(path)} ({len(record['seeds'])} seeds)")
        if failed or not args.until_decided:
            break
        target, plans = {}, []
        for chapter in todo:
            cost = sum(state.duration or 0 for state in robustness.published(chapter))
            wanted = [n for _, n in ledger.undecided(chapter)]
            have = len((robustness.read(chapter) or {}).get("seeds", []))
            if not wanted or max(wanted) <= have:
                continue
            more = max(wanted)  # the plan's next look
            if cost > args.cheap_s:
                # the plan's look is due whatever a seed costs: say so, and let the exit
                # status tell a script that the record stops short of its plan
                short.append(chapter.name)
                print(f"{chapter.name}: undecided claims and the plan's next look is {more} "
                      f"seeds, but a seed costs {cost:.0f} s > --cheap-s {args.cheap_s:.0f}: "
                      f"left at {have} seeds (raise --cheap-s to take the look)")
                continue
            plans.append(((more - have) * cost, chapter.name, have, more))
        for cost, name, have, more in sorted(plans):
            if cost > budget:
                short.append(name)
                print(f"{name}: undecided claims, but seeds {have} -> {more} would cost "
                      f"{cost:.0f} s > the {budget:.0f} s left: left at {have} seeds")
                continue
            budget -= cost
            target[name] = more
            print(f"{name}: undecided claims; seeds {have} -> {more}")
    for path in ledger.write():
        print(f"ledger updated: {paths.relative(path)}")
    if short:
        print(f"short of their seed plan: {', '.join(short)}", file=sys.stderr)
    return 1 if failed or short else 0


def cmd_claims(args) -> int:
    """Every claim of the book with its declaration, seeds and pooled verdict."""
    from icml25.book.site import ledger

    chapters = notebooks.select(args.chapters)
    found = ledger.all_rows(chapters)
    if args.headline:
        judged = ledger.headlines(chapters, found)
        print(ledger.headline_json(judged) if args.json else ledger.headline_csv(judged),
              end="")
        return 0
    print(ledger.as_json(found) if args.json else ledger.as_csv(found), end="")
    return 0


def cmd_run(args) -> int:
    from icml25.book.run import runner
    from icml25.book.site import ledger

    overrides = parse_overrides(" ".join(args.param or []))
    if args.mode:
        overrides["mode"] = args.mode
    chapters = notebooks.select(args.chapters)
    results = runner.run(chapters, overrides, only_stale=args.stale,
                         progress=not args.no_progress, jobs=args.jobs,
                         scheduler=args.scheduler)
    if results:
        print("\n" + runner.summary(results))
    if any(r.ok and r.published for r in results):
        for path in ledger.write():
            print(f"ledger updated: {paths.relative(path)}")
    failed = [r for r in results if not r.ok]
    if failed:
        print(f"\n{len(failed)} notebook(s) failed; committed notebooks were left untouched.",
              file=sys.stderr)
    return 1 if failed else 0


def cmd_ledger(args) -> int:
    from icml25.book.site import ledger

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
    from icml25.common import data

    problems = data.check()
    for problem in problems:
        print(problem)
    print(f"{len(data.read_manifest())} file(s) in data/MANIFEST, {len(problems)} problem(s)")
    return 1 if problems else 0


def cmd_student(args) -> int:
    from icml25.book.site import student

    written = student.write(notebooks.select(args.chapters))
    for path in written:
        print(f"written: {paths.relative(path)}")
    return 0


def cmd_grade(args) -> int:
    """A student's edition graded against the chapter's solutions (run the same way)."""
    from icml25.book.site import student
    from icml25.book.tables import markdown_table

    rows = student.grade(Path(args.notebook), mode=args.mode, rtol=args.rtol)
    if not rows:
        print("no named answer to grade in this chapter notebook")
        return 1
    print(markdown_table(["exercise", "answer", "expected", "yours", "correct"],
                         [[lab, f"`{n}`", e, "-" if g is None else g, "yes" if ok else "no"]
                          for lab, n, e, g, ok in rows]))
    right = sum(r[-1] for r in rows)
    print(f"\n{right} of {len(rows)} answers correct")
    return 0 if right == len(rows) else 1


def cmd_pdf(args) -> int:
    from icml25.book.site import printing

    printing.write(notebooks.select(args.chapters))
    return 0


def cmd_bench(args) -> int:
    from icml25.book.site import performance

    return performance.main(["--render"] if args.render else ["--quick"] if args.quick else [])


def cmd_archive(args) -> int:
    from icml25.book.site import archive

    archive.write()
    return 0


def cmd_fingerprint(args) -> int:
    import json

    from icml25.book.run.executor import digest, fingerprint

    print_ = fingerprint()
    print(json.dumps({"digest": digest(print_), **print_}, indent=1))
    return 0


def cmd_numerics(args) -> int:
    import json

    from icml25.book import probe

    mine = probe.measure(args.perturb)
    if args.json:
        print(json.dumps(mine, indent=1))
        return 0
    if args.write:
        print(f"wrote {paths.relative(probe.write(mine))} (list it in data/MANIFEST)")
        return 0
    lines, differing = probe.report(mine, probe.committed())
    print(f"{mine['machine']['cpu']}, torch {mine['machine']['torch']}, "
          f"numpy {mine['machine']['numpy']}, settings {probe.settings(mine)}")
    print("\n".join(lines))
    return 1 if differing else 0


def cmd_perturbed(args) -> int:
    """The chapters' notebook tests (nbval, claims compared as under the pins), perturbed."""
    import json
    import subprocess

    from icml25.common import numerics

    targets = [py.with_suffix(".ipynb")
               for chapter in notebooks.select(args.chapters) for py in chapter.notebooks]
    if args.torch:  # the notebooks whose published run had torch loaded (its provenance says)
        targets = [nb for nb in targets if "torch_cpu_capability" in json.loads(
            nb.read_text())["metadata"].get("icml25", {}).get("platform", {})]
    targets = [paths.relative(nb) for nb in targets]
    print(f"{len(targets)} notebook(s) under {numerics.PERTURB}={args.numerics} "
          f"({', '.join(f'{k}={v}' for k, v in PERTURBATIONS[args.numerics].items())})",
          flush=True)
    env = {**os.environ, numerics.PERTURB: args.numerics}
    nbval = ["--nbval-lax", "--nbval-current-env",
             "--nbval-sanitize-with", "tests/nbval_sanitize.cfg"]
    jobs = ["-n", str(args.jobs), "--dist", "loadfile"] if args.jobs > 1 else []
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *jobs, *nbval,
               *targets]
    return subprocess.call(command, cwd=paths.ROOT, env=env)


def _scheduler_option(sub) -> None:
    sub.add_argument("--scheduler", metavar="ADDRESS",
                     help="run on the Dask distributed cluster at ADDRESS (tcp://host:8786; "
                     "default: $ICML25_SCHEDULER, else local processes)")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m icml25.book", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", required=True)

    status = sub.add_parser("status", help="stale or fresh, last duration, claims, per notebook")
    status.add_argument("chapters", nargs="*", help="numbers or names (default: all)")
    status.set_defaults(func=cmd_status)

    run = sub.add_parser("run", help="execute chapters with papermill")
    run.add_argument("chapters", nargs="*", help="numbers or names (default: all)")
    run.add_argument("--mode", choices=MODES, help="default: book")
    run.add_argument("-p", "--param", action="append",
                     help='parameter overrides, e.g. -p "seed=3" (written under _build/runs/)')
    run.add_argument("--stale", action="store_true", help="only notebooks that are stale")
    run.add_argument("--no-progress", action="store_true", help="no per-cell progress bar")
    run.add_argument("--jobs", type=int, default=1,
                     help="notebooks executed in parallel (one single-threaded kernel each)")
    _scheduler_option(run)
    run.set_defaults(func=cmd_run)

    rob = sub.add_parser("robustness", help="re-execute chapters with several seeds; record "
                         "every claim's verdict per seed in chapters/NN-*/_robustness.json")
    rob.add_argument("chapters", nargs="*", help="numbers or names (default: all)")
    rob.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 (0 is the published run)")
    rob.add_argument("--carry-over", action="store_true",
                     help="after a change that should move no value: re-measure each stale "
                          "record's highest seed and keep the record if every claim agrees")
    rob.add_argument("--until-decided", action="store_true",
                     help="then add seeds while a claim is undecided, up to the next look of "
                          "its chapter's seed plan")
    rob.add_argument("--cheap-s", type=float, default=60.0,
                     help="with --until-decided: only chapters whose book run takes at most this")
    rob.add_argument("--budget-s", type=float, default=1800.0,
                     help="with --until-decided: execution seconds the added seeds may take")
    rob.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                     help="executions in parallel (default: one per core)")
    _scheduler_option(rob)
    rob.set_defaults(func=cmd_robustness)

    stu = sub.add_parser("student", help="student editions (solutions replaced by empty cells) "
                         "under _build/student/")
    stu.add_argument("chapters", nargs="*", help="numbers or names (default: all)")
    stu.set_defaults(func=cmd_student)
    gra = sub.add_parser("grade", help="grade a student's edition: run it and the chapter's "
                         "solutions the same way and compare the named answers")
    gra.add_argument("notebook", help="the student's notebook (as make student wrote it)")
    gra.add_argument("--mode", default="quick", choices=("quick", "book"))
    gra.add_argument("--rtol", type=float, default=0.01,
                     help="relative tolerance for numbers (default 0.01)")
    gra.set_defaults(func=cmd_grade)

    pdf = sub.add_parser("pdf", help="print each chapter's built pages into "
                         "_build/html/_pdf/NN-name.pdf (needs the built book and Chromium)")
    pdf.add_argument("chapters", nargs="*", help="numbers or names (default: all)")
    pdf.set_defaults(func=cmd_pdf)

    bench = sub.add_parser("bench", help="time the kernels beside their peers; write the "
                           "Performance page (make bench)")
    bench.add_argument("--render", action="store_true",
                       help="regenerate the page from the committed record, measuring nothing")
    bench.add_argument("--quick", action="store_true", help="small sizes, written under _build/")
    bench.set_defaults(func=cmd_bench)

    arc = sub.add_parser("archive", help="the book's source as _build/html/_downloads/"
                         "icml25-book.zip, for readers to run the chapters (make html)")
    arc.set_defaults(func=cmd_archive)

    fp = sub.add_parser("fingerprint", help="Python, pinned packages and source digests that a "
                        "Dask worker must share with the client")
    fp.set_defaults(func=cmd_fingerprint)

    num = sub.add_parser("numerics", help="the numerics probe: this CPU's kernels compared, "
                         "bit for bit, with the records of other CPUs (data/reference/numerics)")
    num.add_argument("--write", action="store_true", help="commit this machine's record")
    num.add_argument("--json", action="store_true", help="print this machine's record")
    num.add_argument("--perturb", choices=PERTURBATIONS, help="over the pins, as the "
                     "perturbed tests run")
    num.set_defaults(func=cmd_numerics)

    per = sub.add_parser("perturbed", help="re-execute chapters under perturbed numerics and "
                         "compare every claim as the notebook tests do")
    per.add_argument("chapters", nargs="*", help="numbers or names (default: all)")
    per.add_argument("--numerics", choices=PERTURBATIONS, default="all",
                     help="the perturbation (default: all of them at once)")
    per.add_argument("--torch", action="store_true",
                     help="only the notebooks whose published run loaded torch")
    per.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                     help="notebooks executed in parallel")
    per.set_defaults(func=cmd_perturbed)

    cl = sub.add_parser("claims", help="every claim: declaration, per-seed values, pooled "
                        "verdict (CSV, or --json)")
    cl.add_argument("chapters", nargs="*", default=["all"])
    cl.add_argument("--json", action="store_true", help="JSON instead of CSV")
    cl.add_argument("--headline", action="store_true", help="the papers' headline claims, "
                    "each with its words, source, tests and verdict, instead of the tests")
    cl.set_defaults(func=cmd_claims)

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
    except (ParameterError, ValueError, KeyError, WorkerMismatch) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a reader that stopped early (`| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
