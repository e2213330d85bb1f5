"""Importing coremltools on Linux without its noise.

coremltools announces at import that its native runtime (macOS only) is missing, and its
converters draw progress bars: neither is needed to convert and save a model, so the scripts
that write test models (scripts/make-interface-models.py, scripts/make-licence-models.py,
bench/delta_coreml.py) import it inside `quiet()`.
"""
import contextlib, logging, os, warnings


@contextlib.contextmanager
def quiet():
    """Silences logging, warnings, progress bars and file descriptor 2 while the block runs
    (the import prints from native code, past Python's own streams)."""
    os.environ.setdefault("TQDM_DISABLE", "1")
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(devnull)
        os.close(saved)
