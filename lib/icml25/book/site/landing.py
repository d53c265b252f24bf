"""The landing page's chapter cards, generated from the chapters themselves; never edited by hand.

Each card reads its chapter's ``index.md`` (the title, the first question of the paragraph
"**The question.**", the first sentence of "**What we found.**", the paragraph
"**Prerequisites.**"; a card stands alone, so its question names its subject), the executed
notebooks' provenance (claims held of checked, book-mode run time) and the reproduction's first
figure, scaled down into ``book/_static/cards/NN.png``. The reading time is the chapter's prose
at 200 words a minute plus its code at 30 lines a minute. ``python -m icml25.book ledger`` writes
``book/_landing.md`` with the ledger; the book's front page includes it.
"""

from __future__ import annotations

import base64
import io
import math
import re
from pathlib import Path

from icml25.book.run import notebooks
from icml25.book.site.generated import HEADER, claim_badges, headline_strip, strip
from icml25.common import paths

CARDS = paths.BOOK / "_static" / "cards"
THUMB_WIDTH = 480
FIELDS = {"question": "The question.", "finding": "What we found.",
          "prerequisites": "Prerequisites.", "teaches": "What it teaches."}


def _paragraph(text: str, label: str) -> str | None:
    match = re.search(rf"\*\*{re.escape(label)}\*\*(.*?)(?:\n\s*\n|\Z)", text, re.S)
    return " ".join(match.group(1).split()) if match else None


def _sentences(paragraph: str) -> list[str]:
    return re.split(r"(?<=[.?!])\s+(?=[A-Z$*{])", paragraph)


def first_sentence(paragraph: str) -> str:
    """What a card shows of a paragraph: its first sentence (at most about 40 words: the tests
    hold the chapters to it)."""
    return _sentences(paragraph)[0]


def _first_question(paragraph: str) -> str:
    """The paragraph's first sentence ending in a question mark (else its first sentence)."""
    sentences = _sentences(paragraph)
    for sentence in sentences:
        if sentence.endswith("?"):
            return sentence
    return sentences[0]


def fields(chapter: notebooks.Chapter) -> dict:
    """``title``, ``question``, ``finding``, ``prerequisites``, ``teaches`` of a chapter's
    ``index.md``
    (``None`` where missing; :func:`problems` names what is missing)."""
    index = chapter.path / "index.md"
    text = index.read_text() if index.exists() else ""
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), None)
    found = {"title": title, **{key: _paragraph(text, label) for key, label in FIELDS.items()}}
    if found["question"]:
        found["question"] = _first_question(found["question"])
    return found


def problems(chapter: notebooks.Chapter) -> list[str]:
    """What the chapter's ``index.md`` lacks for its card (the tests require none)."""
    missing = [f"**{FIELDS[k]}**" if k in FIELDS else "a '# ' title"
               for k, v in fields(chapter).items() if not v]
    return [f"{chapter.name}/index.md lacks {', '.join(missing)} (the front page's card is "
            "built from them)"] if missing else []


def reading_minutes(chapter: notebooks.Chapter) -> int:
    """Prose at 200 words a minute plus code at 30 lines a minute, rounded up to 5 minutes."""
    index = chapter.path / "index.md"
    words = len(index.read_text().split()) if index.exists() else 0
    lines = 0
    for py in chapter.notebooks:
        nb = notebooks.read_source(py)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                words += len(cell.source.split())
            else:
                lines += sum(bool(line.strip()) for line in cell.source.splitlines())
    return 5 * math.ceil((words / 200 + lines / 30) / 5)


def _first_figure(chapter: notebooks.Chapter) -> tuple[bytes, str] | None:
    """The PNG and alt text of the first ``{glue:figure}`` of the reproduction (or method)."""
    import nbformat

    for py in sorted(chapter.notebooks, key=lambda p: p.stem != "reproduction"):
        source = py.read_text()
        match = re.search(r"```\{glue:figure\}\s+(\S+)\s*\n#\s*:alt:\s*(.+)", source)
        executed = py.with_suffix(".ipynb")
        if not match or not executed.exists():
            continue
        name, alt = match.group(1), match.group(2).strip()
        nb = nbformat.read(executed, as_version=4)
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                glued = output.get("metadata", {}).get("scrapbook", {}).get("name")
                if glued == name and "image/png" in output.get("data", {}):
                    return base64.b64decode(output["data"]["image/png"]), alt
    return None


def thumbnail(png: bytes, width: int = THUMB_WIDTH) -> bytes:
    """``png`` scaled to ``width`` pixels (aspect kept), as PNG bytes; deterministic."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    height = round(image.height * width / image.width)
    out = io.BytesIO()
    image.resize((width, height), Image.LANCZOS).save(out, format="PNG", optimize=True)
    return out.getvalue()


def _escape(text: str) -> str:
    return text.replace("\n", " ")


def card(chapter: notebooks.Chapter, counts: dict) -> tuple[str, bytes | None]:
    """One chapter's card (MyST, sphinx-design) and its thumbnail."""
    f = {k: v or "(not yet written)" for k, v in fields(chapter).items()}
    f["title"] = fields(chapter)["title"] or chapter.name
    number = chapter.name[:2]
    figure = _first_figure(chapter)
    lines = [f"::::{{grid-item-card}} {f['title']}", f":link: /chapters/{chapter.name}/index",
             ":link-type: doc"]
    thumb = None
    if figure:
        thumb = thumbnail(figure[0])
        lines += [f":img-top: _static/cards/{number}.png", f":img-alt: {_escape(figure[1])}"]
    verdict = headline_strip(counts["headline"]) if "headline" in counts else strip(counts)
    lines += [
        "",
        f"**The question.** {f['question']}",
        "",
        f"**The paper's headline claims here:** {verdict}.",
        "",
        "**What we found.** " + (counts["lead"] + " " if "lead" in counts else "")
        + claim_badges(first_sentence(f["finding"]), counts.get("verdicts", {})),
        "",
        f"*Prerequisites:* {f['prerequisites']}",
        "",
        ":::{card-footer}",
        f"{strip(counts)} · {reading_minutes(chapter)} min read · "
        f"runs in {counts['runtime']:.0f} s",
        ":::",
        "::::",
    ]
    return "\n".join(lines), thumb


def page(chapters: list[notebooks.Chapter], counts: dict[str, dict],
         headline: str) -> dict[Path, str | bytes]:
    """``book/_landing.md`` (the ledger's ``headline``, then the cards), its thumbnails,
    ``book/_course.md`` (the course guide's table) and ``book/_teaching.md`` (what each chapter
    teaches)."""
    files: dict[Path, str | bytes] = {}
    cards = []
    for chapter in chapters:
        text, thumb = card(chapter, counts[chapter.name])
        cards.append(text)
        if thumb is not None:
            files[CARDS / f"{chapter.name[:2]}.png"] = thumb
    files[paths.BOOK / "_course.md"] = f"{HEADER}\n\n{course_table(chapters, counts)}\n"
    files[paths.BOOK / "_teaching.md"] = f"{HEADER}\n\n{teaching_list(chapters)}\n"
    files[paths.BOOK / "_syllabus.md"] = f"{HEADER}\n\n{syllabus(chapters, counts)}\n"
    files[paths.BOOK / "_landing.md"] = "\n".join([
        HEADER, "", headline, "", ":::::{grid} 1 1 2 2", ":gutter: 3", "", "\n\n".join(cards), ":::::", ""])
    return files


_EXERCISE = re.compile(r"\{exercise\}\s*(.*?)\n(?:#\s*:label:\s*(\S+)\n)?(?:#\s*\n)?"
                       r"(?:#\s*\*\*Level:\*\*\s*(\w+)\s*·\s*\*\*Time:\*\*\s*about\s*(\d+))?")


def exercises(chapter: notebooks.Chapter) -> list[dict]:
    """The chapter's exercises in order: ``title``, ``label``, ``notebook``, ``level`` and
    ``minutes`` (``None`` where the exercise does not state them), ``worked`` (whether its
    solution holds code that the published run executed)."""
    found = []
    for py in chapter.notebooks:
        text = py.read_text()
        for match in _EXERCISE.finditer(text):
            title, label, level, minutes = match.groups()
            worked = bool(label) and re.search(
                rf"\{{solution-start\}}\s+{re.escape(label)}\b", text) is not None
            found.append({"title": title.strip(), "label": label, "notebook": py.stem,
                          "level": level, "minutes": int(minutes) if minutes else None,
                          "worked": worked})
    return found


def teaching_list(chapters: list[notebooks.Chapter]) -> str:
    """The course guide's list: per chapter, its title (linked) and its "What it teaches."."""
    items = []
    for chapter in chapters:
        f = fields(chapter)
        items.append(f"- **[{f['title'] or chapter.name}](/chapters/{chapter.name}/index).** "
                     f"{f['teaches'] or '(not yet written)'}")
    return "\n".join(items)


def course_table(chapters: list[notebooks.Chapter], counts: dict[str, dict]) -> str:
    """The course guide's table: per chapter, what it needs, how long it takes, its exercises."""
    from icml25.book.tables import markdown_table

    rows = []
    for chapter in chapters:
        f = fields(chapter)
        found = exercises(chapter)
        levels = ", ".join(f"{sum(e['level'] == lv for e in found)} {lv}"
                           for lv in ("easy", "medium", "hard")
                           if any(e["level"] == lv for e in found))
        minutes = sum(e["minutes"] or 0 for e in found)
        worked = sum(e["worked"] for e in found)
        rows.append([
            f"[{chapter.name[:2]}](/chapters/{chapter.name}/index)",
            f["prerequisites"] or "-",
            f"{reading_minutes(chapter)} min",
            f"{counts[chapter.name]['runtime']:.0f} s",
            f"{len(found)}" + (f" ({levels})" if levels else "")
            + (f", about {minutes} min" if minutes else ""),
            f"{worked} of {len(found)}",
        ])
    return markdown_table(["chapter", "prerequisites", "reading", "book run",
                           "exercises", "worked solutions that run"], rows)


#: The syllabus's module plans: a title, who it is for, and its chapters in teaching order
#: (one 90-minute session each).
MODULES = (
    ("Testing, estimating and sampling with guarantees", "a statistics or causal-inference "
     "course (graduate)", ("04", "08", "13")),
    ("Algorithms that learn from advice and from play", "an algorithms or online-learning "
     "course (graduate)", ("01", "12", "14", "15")),
    ("Deep learning under scrutiny", "a three-week graduate module, two sessions a week",
     ("07", "03", "05", "16", "09", "18")),
)


def _session(chapter: notebooks.Chapter, counts: dict, number: int) -> list[str]:
    f = fields(chapter)
    found = [e for e in exercises(chapter) if e["minutes"]]
    rank = {"easy": 0, "medium": 1, "hard": 2}
    in_class = min(found, key=lambda e: (rank.get(e["level"], 3), e["minutes"]), default=None)
    homework = [e for e in found if e is not in_class and e["level"] in ("medium", "hard")]
    home = max(homework, key=lambda e: (e["worked"], e["minutes"]), default=None)

    def named(e):
        return (f"“{e['title']}” ({e['notebook']}, {e['level']}, about {e['minutes']} min)"
                if e else "none declared")

    link = f"[{f['title'] or chapter.name}](/chapters/{chapter.name}/index)"
    return [
        f"**Session {number}: {link}.**",
        "",
        f"- *Before (pre-reading, about {reading_minutes(chapter)} min):* the front page and "
        f"the method notebook. Prerequisites: {f['prerequisites'] or '-'}",
        "- *Live demo (25 min):* the method notebook in quick mode; change one size and "
        "re-run a cell; then the reproduction's first figure in quick mode.",
        f"- *In class (20 min):* {named(in_class)}; predict first, then run.",
        f"- *Discussion (15 min):* the verdicts. {counts.get('lead', '')} Which of them "
        "would survive the paper's scale, and why?",
        f"- *Homework:* {named(home)}; graded with `make grade NOTEBOOK=...` on the student "
        "edition (`make student`).",
        f"- *Outcomes:* {f['teaches'] or '-'}",
        "",
    ]


def syllabus(chapters: list[notebooks.Chapter], counts: dict[str, dict]) -> str:
    """Ready module plans, generated from the chapters: per session (one chapter, 90
    minutes) the pre-reading, the live demo, an in-class exercise, the discussion of the
    verdicts, the homework and the outcomes (:data:`MODULES`)."""
    by_number = {c.name[:2]: c for c in chapters}
    out = []
    for title, audience, numbers in MODULES:
        present = [by_number[n] for n in numbers if n in by_number]
        if not present:
            continue
        out += [f"## {title}", "", f"*For {audience}: {len(present)} sessions of 90 "
                "minutes.*", ""]
        for i, chapter in enumerate(present, 1):
            out += _session(chapter, counts[chapter.name], i)
    return "\n".join(out).rstrip()
