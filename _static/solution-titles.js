// A solution's title ("Solution to Exercise 3") opens and closes the solution wherever it is clicked.
// sphinx-togglebutton 0.4.5 makes the whole title clickable, but a click on the exercise's name, a link inside the
// title, finds no button and throws "button is not defined": the solution stays shut. Such clicks are taken here,
// before the title's own handler, and toggle the solution as a click on the rest of the title does.
document.addEventListener("click", (event) => {
  const title = event.target.closest(".toggle > .admonition-title");
  if (!title || event.target === title || event.target.closest(".toggle-button")) {
    return; // the title itself and its button: sphinx-togglebutton's own handler works
  }
  const button = title.querySelector(".toggle-button");
  if (!button || typeof toggleHidden !== "function") {
    return;
  }
  event.preventDefault();
  event.stopPropagation();
  toggleHidden(button);
}, true);
