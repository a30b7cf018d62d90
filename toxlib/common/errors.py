"""Exceptions raised by toxlib. Each message names what is wrong and how to fix it."""


class ToxlibError(Exception):
    """Base class of every error toxlib raises on purpose."""


class UnknownNameError(ToxlibError, KeyError):
    """A name (data source, notebook parameter, ...) that toxlib does not know."""

    def __str__(self) -> str:  # KeyError would print the message with quotes around it
        return str(self.args[0]) if self.args else ""


class DataUnavailableError(ToxlibError):
    """A data file is not present locally and could not be downloaded or copied from a mirror."""


class ChecksumMismatchError(ToxlibError):
    """A fetched file's sha256 differs from the registry's."""


class DataFormatError(ToxlibError):
    """A data file is malformed (with file and line number where it applies)."""


class ModelUnavailableError(ToxlibError):
    """A model's weights cannot be found locally and cannot be downloaded (offline, missing package)."""


class ParameterError(ToxlibError, ValueError):
    """A notebook parameter value that cannot be parsed to the parameter's type."""


class NotebookExecutionError(ToxlibError):
    """A notebook raised while papermill executed it (the partial output notebook is kept)."""


class BookBuildError(ToxlibError):
    """jupyter-book failed, for example on a broken reference."""


class InputFileError(ToxlibError):
    """A file given to toxlib (a notebook, a text file to score) is missing, unreadable or not of the expected kind."""
