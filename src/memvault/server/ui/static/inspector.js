// memvault inspector: small progressive enhancement; every form also works without it.
"use strict";

// Ask before a form that deletes something is sent.
document.addEventListener("submit", (event) => {
  const question = event.target.dataset.confirm;
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});

document.addEventListener("DOMContentLoaded", () => {
  // "all" ticks every entry of its panel for the bulk delete.
  for (const box of document.querySelectorAll("[data-select-all]")) {
    box.addEventListener("change", () => {
      const panel = document.getElementById(box.dataset.selectAll);
      for (const tick of panel.querySelectorAll("input.tick")) {
        tick.checked = box.checked;
      }
      countTicks();
    });
  }
  // Changing the severity filter applies it.
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form.requestSubmit());
  }
  document.addEventListener("change", (event) => {
    if (event.target.matches("input.tick")) {
      countTicks();
    }
  });
  countTicks();
});

// The bulk delete button says how many entries are ticked.
function countTicks() {
  const button = document.querySelector("[data-count-ticks]");
  if (button) {
    const ticked = document.querySelectorAll("input.tick:checked").length;
    button.textContent = ticked ? `Delete selected (${ticked})` : "Delete selected";
    button.disabled = ticked === 0;
  }
}
