// Printing a page prints all of it: every folded block (a listing, a solution, a ledger
// line) opens for the print and closes again after it. `make pdf` opens them the same way.
(() => {
  let opened = [];
  window.addEventListener("beforeprint", () => {
    opened = Array.from(document.querySelectorAll("details:not([open])"));
    opened.forEach((d) => { d.open = true; });
  });
  window.addEventListener("afterprint", () => {
    opened.forEach((d) => { d.open = false; });
    opened = [];
  });
})();
