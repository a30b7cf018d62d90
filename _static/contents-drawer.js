// The page's contents, opened as a drawer (pydata-sphinx-theme's dialog, below 1,600 pixels in this book): following
// one of its links closes the drawer, so the reader lands on the section instead of under the drawer. The theme
// moves the drawer's content back to its column when the dialog closes.
document.addEventListener("click", (event) => {
  const link = event.target.closest("dialog[open] a[href^='#']");
  if (link) {
    link.closest("dialog").close();
  }
});
