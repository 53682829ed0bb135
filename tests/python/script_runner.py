"""Runs a test's script in a fresh interpreter: for what only a new process
shows (interpreter shutdown, a first use of a lazily loaded library).

    run_script('''
        import turnout
        ...
        print("done")
    ''', times=3)
"""

import os
import subprocess
import sys
import textwrap

__all__ = ["run_script"]


def run_script(script: str, times: int = 1, timeout: float = 120) -> None:
    """Runs `script` (dedented) with this interpreter and this test's
    sys.path, `times` times; each run must exit with 0 and print exactly
    "done". A hang fails with subprocess.TimeoutExpired after `timeout`
    seconds."""
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    for _ in range(times):
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)],
                              capture_output=True, text=True, env=env,
                              timeout=timeout)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "done", proc.stdout
