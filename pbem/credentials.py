"""Mail passwords (issue 27 point 8, PLAN "Mail passwords"): one place for
SMTP (``pbem send --smtp``) and IMAP (``pbem fetch``, ``pbem watch``); the
identity passphrase command of ``pbem watch`` runs through ``run_command`` too.

Where a password comes from, first match wins:

1. ``password_command`` in the configuration: a command (no shell; split
   like a shell line) whose first line of output is the password, as
   msmtp's ``passwordeval`` or a password manager's CLI (``pass show mail``);
2. ``keyring = true``: the system keyring (the optional ``keyring``
   package, service "pbem", the configured user name);
3. ``password`` in the configuration file, only if nobody but its owner can
   read the file (as ssh refuses a private key others can read);
4. ``$PBEM_SMTP_PASSWORD``: accepted with a warning (the environment leaks
   to child processes and shell history).
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
from pathlib import Path

from pbem.errors import UsageProblem

ENV_PASSWORD = "PBEM_SMTP_PASSWORD"
#: IMAP's counterpart of $PBEM_SMTP_PASSWORD (pbem fetch and pbem watch): ``password(env_name=...)``.
ENV_IMAP_PASSWORD = "PBEM_IMAP_PASSWORD"
COMMAND_TIMEOUT = 30
KEYRING_SERVICE = "pbem"


def _from_command(command: str) -> str:
    return run_command(command, "password_command", "password")


def run_command(command: str, what: str, secret: str) -> str:
    """The first line a command (no shell) prints: a password, or ``pbem watch``'s
    passphrase. UsageProblem naming ``what`` if it cannot run, fails or prints nothing."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageProblem(f"{what} cannot be read: {exc}") from None
    if not argv:
        raise UsageProblem(f"{what} is empty")
    try:
        done = subprocess.run(argv, capture_output=True, timeout=COMMAND_TIMEOUT, check=False)
    except FileNotFoundError:
        raise UsageProblem(f"{what}: no program '{argv[0]}'") from None
    except subprocess.TimeoutExpired:
        raise UsageProblem(f"{what} did not answer within {COMMAND_TIMEOUT} s") from None
    if done.returncode != 0:
        # Its output is not shown: it may hold the secret or part of it.
        raise UsageProblem(f"{what} failed (exit {done.returncode})")
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    if not lines or not lines[0]:
        raise UsageProblem(f"{what} printed no {secret}")
    return lines[0]


def _from_keyring(user: str) -> str:
    try:
        import keyring  # type: ignore[import-not-found]
    except ImportError:
        raise UsageProblem("keyring = true needs the 'keyring' package (pip install keyring)") from None
    found = keyring.get_password(KEYRING_SERVICE, user)
    if not found:
        raise UsageProblem(f"the system keyring holds no password for service '{KEYRING_SERVICE}', user '{user}' "
                           f"(store one with: keyring set {KEYRING_SERVICE} {user})")
    return str(found)


def readable_by_others(path: Path) -> bool:
    """Whether group or others may read ``path`` (never on Windows, where
    POSIX modes do not say who may read)."""
    if os.name == "nt":
        return False
    return bool(path.stat().st_mode & (stat.S_IRGRP | stat.S_IROTH))


def password(config_path: Path, user: str, *, in_file: str = "", command: str = "",
             use_keyring: bool = False, env_name: str = ENV_PASSWORD) -> tuple[str, list[str]]:
    """The password for ``user`` and the warnings to print. UsageProblem
    (exit 2) naming the source when a configured source fails, or when the
    file holds a password others can read."""
    if command:
        return _from_command(command), []
    if use_keyring:
        return _from_keyring(user), []
    if in_file:
        if readable_by_others(config_path):
            mode = stat.S_IMODE(config_path.stat().st_mode)
            raise UsageProblem(f"{config_path} holds a password and others can read it (mode {mode:03o}): "
                               f"chmod 600 {config_path}, or use password_command or keyring = true")
        return in_file, []
    env = os.environ.get(env_name, "")
    if env:
        return env, [f"the mail password comes from ${env_name}: the environment leaks to other "
                     "programs; prefer password_command or keyring = true in the configuration"]
    return "", []
