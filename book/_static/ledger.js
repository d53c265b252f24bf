// The claims ledger's filter: show only the tests of a verdict, a fidelity and a chapter.
// Static: it hides elements of the page, and opens the chapters that hold a match.
document.addEventListener("DOMContentLoaded", () => {
  const bar = document.querySelector(".ledger-filter");
  if (!bar) return;
  const selects = Array.from(bar.querySelectorAll("select[data-filter]"));
  const apply = () => {
    const want = Object.fromEntries(selects.map((s) => [s.dataset.filter, s.value]));
    const any = Object.values(want).some((v) => v);
    document.querySelectorAll(".ledger-test").forEach((el) => {
      const ok = (!want.verdict || el.classList.contains("verdict-" + want.verdict)) &&
        (!want.fidelity || el.classList.contains("fidelity-" + want.fidelity)) &&
        (!want.chapter || el.classList.contains("chapter-" + want.chapter));
      el.hidden = !ok;
    });
    document.querySelectorAll(".ledger-chapter").forEach((box) => {
      const shown = box.querySelectorAll(".ledger-test:not([hidden])").length;
      const section = box.closest("section");
      if (section) section.hidden = any && shown === 0;
      if (any && shown) box.open = true;
    });
  };
  selects.forEach((s) => s.addEventListener("change", apply));
});
