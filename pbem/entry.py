"""The ``pbem`` console script and ``python -m pbem``: a command as a process.

``pbem.cli.main`` is the command line as a function (tests and benchmarks call
it in their own process); ``run`` is what the installed ``pbem`` runs, and adds
the two things only a process that ends with its command may do.

- The cyclic garbage collector runs less often: a collection every 100,000
  new objects instead of every 700, and the older generations more rarely.
  Start-up builds tens of thousands of long-lived objects (modules, classes,
  the rules' data) that each collection would walk again, and a command
  makes little cyclic garbage (its states and events are freed by reference
  counting). A cold ``pbem show`` does about 4% less work; the peak memory
  of a whole campaign's audit is printed by benchmarks/campaign.py.
- The interpreter's teardown is skipped. Everything a command writes is
  written, flushed and fsynced before it returns (pbem.fileio, the store's
  write order), and no command leaves a thread or a child process behind,
  so tearing down every module and object would only free memory that the
  process gives back anyway; it costs a short command such as ``pbem show``
  about a tenth of its time (issue 20's cold start). ``run`` flushes standard
  output, runs the ``atexit`` handlers (a temporary directory's cleanup, for
  one), flushes standard error and ends the process. Standard output that
  cannot be flushed (a closed pipe, a full disk) exits 120, as Python's own
  exit does.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
from typing import NoReturn

#: ``gc.set_threshold`` for a command's process (see the module's text).
GC_THRESHOLDS = (100_000, 50, 50)


def run() -> NoReturn:
    """Run the command line of ``sys.argv`` and end the process with its exit code."""
    gc.set_threshold(*GC_THRESHOLDS)
    from pbem.cli import main

    code = main()
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        code = 120
    atexit._run_exitfuncs()
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(code)
