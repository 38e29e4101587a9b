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
   read the file (as ssh refuses a private key others can read): on POSIX
   (Linux, macOS) no group or other read bit; on Windows, where mode bits
   say nothing about readers, no entry of the file's access list (DACL)
   lets anyone but its owner, SYSTEM and Administrators read it (the rule
   of OpenSSH for Windows; a file in one's own profile folder passes);
4. ``$PBEM_SMTP_PASSWORD``: accepted with a warning (the environment leaks
   to child processes and shell history).
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from pbem.errors import UsageProblem

ENV_PASSWORD = "PBEM_SMTP_PASSWORD"
#: IMAP's counterpart of $PBEM_SMTP_PASSWORD (pbem fetch and pbem watch): ``password(env_name=...)``.
ENV_IMAP_PASSWORD = "PBEM_IMAP_PASSWORD"
COMMAND_TIMEOUT = 30
KEYRING_SERVICE = "pbem"
#: Whether file permissions are Windows access lists rather than POSIX mode bits.
WINDOWS = sys.platform == "win32"


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


# -- who may read a file on Windows ---------------------------------------------------

#: Who may read a password file on Windows besides its owner, as OpenSSH for Windows allows
#: for a private key: the system itself and the Administrators group (security identifiers);
#: OWNER RIGHTS is the owner under another name.
TRUSTED_READERS = {"S-1-5-18": "SYSTEM", "S-1-5-32-544": "Administrators", "S-1-3-4": "OWNER RIGHTS"}
#: Names for well-known groups in messages (the system's names are translated: "Jeder").
GROUP_NAMES = {
    "S-1-1-0": "Everyone",
    "S-1-5-7": "Anonymous Logon",
    "S-1-5-4": "Interactive",
    "S-1-5-11": "Authenticated Users",
    "S-1-5-32-545": "Users",
    "S-1-5-32-546": "Guests",
}
ACCESS_ALLOWED, ACCESS_DENIED = 0, 1  # ACE types
INHERIT_ONLY = 0x08  # ACE flag: the entry applies to children only, not to this file
#: FILE_READ_DATA, GENERIC_ALL, GENERIC_READ: the rights that let an entry read the file's bytes.
READ_RIGHTS = 0x0001 | 0x10000000 | 0x80000000


class Ace(NamedTuple):
    """One entry of a Windows access list (DACL)."""

    kind: int  # ACCESS_ALLOWED or ACCESS_DENIED
    flags: int
    mask: int
    sid: str  # as text, "S-1-5-..."


def other_readers(owner: str, aces: Iterable[Ace] | None) -> list[str]:
    """Who besides ``owner``, SYSTEM and Administrators may read a file with
    these access list entries (names of well-known groups, else SIDs), in
    list order.

    ``aces`` None is a null access list, which lets everyone in. Entries are
    taken in order as Windows does: a reader denied reading (itself or as
    Everyone) by an earlier entry is not counted. Only allow and deny
    entries say anything here (object, callback and audit entries are left
    out by ``access_list``).
    """
    if aces is None:
        return ["Everyone (the file has no access list)"]
    readers: list[str] = []
    denied: set[str] = set()
    for ace in aces:
        if ace.flags & INHERIT_ONLY or not ace.mask & READ_RIGHTS:
            continue
        if ace.kind == ACCESS_DENIED:
            denied.add(ace.sid)
        elif ace.kind == ACCESS_ALLOWED and ace.sid != owner and ace.sid not in TRUSTED_READERS:
            name = GROUP_NAMES.get(ace.sid, ace.sid)
            if name not in readers and not denied & {ace.sid, "S-1-1-0"}:
                readers.append(name)
    return readers


if sys.platform == "win32":  # pragma: no cover - Windows only; other_readers is tested everywhere
    import ctypes
    from ctypes import wintypes

    class _Acl(ctypes.Structure):
        _fields_ = [("AclRevision", ctypes.c_ubyte), ("Sbz1", ctypes.c_ubyte), ("AclSize", wintypes.WORD),
                    ("AceCount", wintypes.WORD), ("Sbz2", wintypes.WORD)]

    class _Ace(ctypes.Structure):
        """ACCESS_ALLOWED_ACE and ACCESS_DENIED_ACE: header, mask, then the SID."""

        _fields_ = [("AceType", ctypes.c_ubyte), ("AceFlags", ctypes.c_ubyte), ("AceSize", wintypes.WORD),
                    ("Mask", wintypes.DWORD), ("SidStart", wintypes.DWORD)]

    def access_list(path: Path) -> tuple[str, list[Ace] | None]:
        """The file's owner (SID) and the allow and deny entries of its access
        list (None for a null list). UsageProblem if Windows cannot say."""
        advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        out = ctypes.POINTER(ctypes.c_void_p)
        advapi32.GetNamedSecurityInfoW.argtypes = [wintypes.LPCWSTR, ctypes.c_int, wintypes.DWORD,
                                                   out, out, out, out, out]
        advapi32.GetNamedSecurityInfoW.restype = wintypes.DWORD
        advapi32.GetAce.argtypes = [ctypes.c_void_p, wintypes.DWORD, out]
        advapi32.GetAce.restype = wintypes.BOOL
        advapi32.ConvertSidToStringSidW.argtypes = [ctypes.c_void_p, ctypes.POINTER(wintypes.LPWSTR)]
        advapi32.ConvertSidToStringSidW.restype = wintypes.BOOL
        kernel32.LocalFree.argtypes = [ctypes.c_void_p]
        kernel32.LocalFree.restype = ctypes.c_void_p

        def fail(what: str, code: int) -> UsageProblem:
            return UsageProblem(f"cannot read {what} of {path} (Windows error {code}) to check that nobody "
                                "else can read its password; use password_command or keyring = true")

        def sid_text(sid: int, what: str) -> str:
            text = wintypes.LPWSTR()
            if not advapi32.ConvertSidToStringSidW(sid, ctypes.byref(text)):
                raise fail(what, ctypes.get_last_error())
            try:
                return text.value or ""
            finally:
                kernel32.LocalFree(ctypes.cast(text, ctypes.c_void_p))

        owner, dacl, descriptor = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        # SE_FILE_OBJECT; OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION
        status = advapi32.GetNamedSecurityInfoW(str(path), 1, 0x1 | 0x4, ctypes.byref(owner), None,
                                                ctypes.byref(dacl), None, ctypes.byref(descriptor))
        if status != 0:
            raise fail("the access list", status)
        try:
            owner_sid = sid_text(owner.value, "the owner") if owner.value else ""
            if not dacl.value:
                return owner_sid, None
            aces: list[Ace] = []
            for index in range(_Acl.from_address(dacl.value).AceCount):
                entry = ctypes.c_void_p()
                if not advapi32.GetAce(dacl, index, ctypes.byref(entry)) or not entry.value:
                    raise fail(f"entry {index} of the access list", ctypes.get_last_error())
                ace = _Ace.from_address(entry.value)
                if ace.AceType in (ACCESS_ALLOWED, ACCESS_DENIED):  # other types have no SID at SidStart
                    sid = sid_text(entry.value + _Ace.SidStart.offset, f"entry {index} of the access list")
                    aces.append(Ace(ace.AceType, ace.AceFlags, ace.Mask, sid))
            return owner_sid, aces
        finally:
            kernel32.LocalFree(descriptor)
else:
    def access_list(path: Path) -> tuple[str, list[Ace] | None]:
        """Windows only: POSIX systems say who may read a file by its mode bits."""
        raise UsageProblem(f"{path}: access lists are read on Windows only")


def _windows_readers(path: Path) -> list[str]:
    owner, aces = access_list(path)
    return other_readers(owner, aces)


def readable_by_others(path: Path) -> bool:
    """Whether someone other than the owner may read ``path``: on POSIX a
    group or other read bit; on Windows an access list entry that lets
    anyone but the owner, SYSTEM and Administrators read it
    (``other_readers``)."""
    if WINDOWS:
        return bool(_windows_readers(path))
    return bool(path.stat().st_mode & (stat.S_IRGRP | stat.S_IROTH))


def _readable_problem(path: Path) -> str:
    """Why a password in ``path`` is refused, and how to mend it, for this platform."""
    if WINDOWS:
        who = ", ".join(_windows_readers(path)) or "other users"
        user = os.environ.get("USERNAME") or "YOUR-USER-NAME"
        return (f"{path} holds a password and others can read it (its access list lets {who} read it): "
                f'icacls "{path}" /inheritance:r /grant:r "{user}:F", or use password_command or keyring = true')
    mode = stat.S_IMODE(path.stat().st_mode)
    return (f"{path} holds a password and others can read it (mode {mode:03o}): "
            f"chmod 600 {path}, or use password_command or keyring = true")


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
            raise UsageProblem(_readable_problem(config_path))
        return in_file, []
    env = os.environ.get(env_name, "")
    if env:
        return env, [f"the mail password comes from ${env_name}: the environment leaks to other "
                     "programs; prefer password_command or keyring = true in the configuration"]
    return "", []
