"""``python -m toxlib chapters|run|book``: the chapters' declarations, one notebook run by papermill, the whole
book. ``run`` and ``book`` need the [book] extra (papermill, jupyter-book); each imports it when it runs."""

from __future__ import annotations

from toxlib.common.errors import ParameterError

DEVICE_HELP = ("where every stage of the chapters runs: cpu, cuda or cuda:N (default: TOXLIB_DEVICE, else the GPU when "
               "present); a GPU's rows are cached apart from a CPU's")
NO_RECORD_HELP = ("ignore the sample record (data/record/): recompute, or read from your own caches, every row "
                  "(the same as TOXLIB_RECORD=off)")


def _run(args) -> int:
    from pathlib import Path

    from toxlib.book_build.runner import default_output, run_notebook  # optional: the [book] extra (papermill)

    params = dict(args.parameter or [])
    profile = _profile(args)
    run = run_notebook(args.notebook, params, output=args.output, profile=profile)
    written = Path(args.output) if args.output else default_output(Path(args.notebook).resolve(), profile == "smoke")
    print(f"executed {run['notebook']} ({profile} profile) in {run['wall_s']:.1f} s with "
          f"{run['parameters']}: {written}")
    return 0


def _profile(args) -> str:
    """The --profile asked for; --smoke is an alias of --profile smoke (ParameterError when both disagree)."""
    if args.smoke and args.profile not in (None, "smoke"):
        raise ParameterError(f"--smoke is --profile smoke; it cannot be combined with --profile {args.profile}")
    return "smoke" if args.smoke else args.profile or "default"


def _chapters(args) -> int:
    from pathlib import Path

    from toxlib.chapters import chapters
    from toxlib.store.paths import project_root

    if args.write_toc:
        from toxlib.book_build.toc import missing_pages, write_toc

        if missing_pages(project_root()):
            raise ParameterError(f"_toc.yml not written: {', '.join(missing_pages(project_root()))} named by the "
                                 "declarations or toxlib.book_build.toc.PROSE is missing; add the page or fix its "
                                 "declaration's page")
        print("wrote _toc.yml" if write_toc(project_root()) else "_toc.yml already lists every chapter")
        return 0
    if args.write_cells:
        from toxlib.book_build.chapter_cells import write_cells  # optional: the [book] extra (nbformat)

        written = write_cells(project_root())
        for path in written:
            print(f"wrote the parameters cell of {Path(path).relative_to(project_root())}")
        print(f"{len(written)} notebook(s) written; the others already hold their declaration's cell")
        return 0
    for declared in chapters():
        print(f"{declared.stem}: {declared.title} (profiles: {', '.join(['default', *declared.profiles])})")
        for p in declared.parameters:
            print(f"  {p.name} = {p.default!r}: {p.check.allows}; {p.help}")
    return 0


def _book(args) -> int:
    from toxlib.book_build.book import build_book  # optional: the [book] extra (papermill, jupyter-book)

    result = build_book(only=args.only, profile=_profile(args), execute=not args.no_execute, force=args.force)
    for run in result["runs"]:
        print(f"  {run['notebook']:28s} {run['wall_s']:8.1f} s")
    print(f"book built in {result['wall_s']:.1f} s: open {result['html'] / 'index.html'}")
    return 0


def _new_chapter(args) -> int:
    from toxlib.book_build.new_chapter import new_chapter  # optional: the [book] extra (nbformat)
    from toxlib.store.paths import project_root

    root = project_root()
    written = new_chapter(root, args.name, args.title, args.paper)
    for path in written:
        print(f"wrote {path.relative_to(root)}")
    print(f"next: python -m toxlib run notebooks/{args.name}.ipynb --smoke, then the page \"Adding a paper\" "
          "(book/contributing.md): replace the example claim with the paper's, cite it, declare its data")
    return 0


def add_commands(sub) -> None:
    """``chapters``, ``new-chapter``, ``run`` and ``book``."""
    chapters = sub.add_parser("chapters", help="each chapter's parameters: default, what it may be, what it does "
                              "(declared in toxlib/chapters/)")
    chapters.add_argument("--write-cells", action="store_true", help="write each chapter notebook's parameters cell "
                          "from its declaration")
    chapters.add_argument("--write-toc", action="store_true", help="write _toc.yml from the chapters' declarations "
                          "(`book` does it before it builds)")
    chapters.set_defaults(func=_chapters)

    new = sub.add_parser("new-chapter", help="write a working skeleton of a new paper's chapter: its declaration, "
                         "its paper's folder with its compute function, its notebook and a test (book page \"Adding "
                         "a paper\")")
    new.add_argument("name", help="the chapter's name: snake_case, it names the module, the notebook and the folder")
    new.add_argument("--title", help="the chapter's title (default: from the name)")
    new.add_argument("--paper", help="the paper's name, as the report card and the scorecard show it (default: the "
                     "title)")
    new.set_defaults(func=_new_chapter)

    run = sub.add_parser("run", help="execute one notebook with papermill")
    run.add_argument("notebook", help="path of the .ipynb file")
    run.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"),
                     help="set a parameter (value parsed to the parameter's type); repeatable")
    run.add_argument("-o", "--output", help="write the executed notebook here (default: in place)")
    run.add_argument("--profile", choices=["default", "smoke", "quick", "paper"],
                     help="parameter set from the notebook's metadata toxlib.profiles: default (the parameters cell), "
                     "smoke (tiny; writes under _build/smoke) or paper (the paper's sizes; in place, like default); "
                     "-p overrides single values")
    run.add_argument("--smoke", action="store_true", help="the same as --profile smoke")
    run.add_argument("--no-record", action="store_true", help=NO_RECORD_HELP)
    run.add_argument("--device", help=DEVICE_HELP)
    run.set_defaults(func=_run)

    book = sub.add_parser("book", help="execute the notebooks in _toc.yml and build the HTML book")
    book.add_argument("--only", nargs="+", metavar="STEM", help="execute only these notebooks (and the scorecard)")
    book.add_argument("--profile", choices=["default", "smoke", "quick", "paper"],
                      help="each chapter's parameter set: default, smoke (a staging copy under _build/smoke) or paper "
                      "(in place, writes data/results/ like default)")
    book.add_argument("--smoke", action="store_true", help="the same as --profile smoke")
    book.add_argument("--no-execute", action="store_true", help="build the HTML from the notebooks as they are")
    book.add_argument("--force", action="store_true", help="execute every chapter even when nothing changed since "
                      "this checkout's last build (which otherwise only rebuilds the HTML)")
    book.add_argument("--device", help=DEVICE_HELP)
    book.add_argument("--no-record", action="store_true", help=NO_RECORD_HELP)
    book.set_defaults(func=_book)
