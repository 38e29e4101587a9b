"""Mail passwords (issue 27 point 8): from a password command, the system
keyring, the configuration file only if nobody else can read it, or the
environment with a warning; tested against a real SMTP server that asks
for a login (aiosmtpd on 127.0.0.1)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem import credentials
from pbem.cli import cli
from pbem.errors import UsageProblem
from tests.test_mail import _free_port, mailing, run  # noqa: F401 (mailing is a fixture)

SAY = f"{sys.executable} -c \"print('s3cret'); print('ignored')\""
FAIL = f"{sys.executable} -c \"import sys; print('s3cret'); sys.exit(3)\""


def _config(tmp_path: Path, mode: int = 0o600, body: str = "") -> Path:
    path = tmp_path / "smtp.toml"
    path.write_text(f'[smtp]\nhost = "127.0.0.1"\nusername = "red"\n{body}')
    path.chmod(mode)
    return path


def _readable_by_others(monkeypatch: pytest.MonkeyPatch, value: bool) -> None:
    # Tests run as root here, and on Windows modes say nothing: decide it for the test.
    monkeypatch.setattr(credentials, "readable_by_others", lambda path: value)


def test_a_password_command_gives_the_first_line(tmp_path: Path) -> None:
    assert credentials.password(_config(tmp_path), "red", command=SAY) == ("s3cret", [])


def test_a_failing_password_command_is_named_without_its_output(tmp_path: Path) -> None:
    with pytest.raises(UsageProblem, match=r"password_command failed \(exit 3\)") as err:
        credentials.password(_config(tmp_path), "red", command=FAIL)
    assert "s3cret" not in str(err.value)
    with pytest.raises(UsageProblem, match="no program 'no-such-program-pbem'"):
        credentials.password(_config(tmp_path), "red", command="no-such-program-pbem --x")


def test_a_password_in_a_file_others_can_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _config(tmp_path, 0o644, 'password = "s3cret"\n')
    _readable_by_others(monkeypatch, True)
    with pytest.raises(UsageProblem, match="holds a password and others can read it .mode 644.: chmod 600"):
        credentials.password(path, "red", in_file="s3cret")
    _readable_by_others(monkeypatch, False)
    assert credentials.password(path, "red", in_file="s3cret") == ("s3cret", [])


@pytest.mark.skipif(os.name == "nt", reason="file modes such as 0o644 mean nothing on Windows; its access lists are tested by test_portability.py")
def test_file_modes_are_read_as_posix_says(tmp_path: Path) -> None:
    assert credentials.readable_by_others(_config(tmp_path, 0o644))
    assert not credentials.readable_by_others(_config(tmp_path, 0o600))


def test_the_environment_is_accepted_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(credentials.ENV_PASSWORD, "from-env")
    found, warnings = credentials.password(_config(tmp_path), "red")
    assert found == "from-env" and warnings and "prefer password_command" in warnings[0]


def test_keyring_without_the_package_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "keyring", None)  # as if the package were not installed
    with pytest.raises(UsageProblem, match="needs the 'keyring' package"):
        credentials.password(_config(tmp_path), "red", use_keyring=True)


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")  # loopback test server
def test_send_logs_in_to_a_real_smtp_server_with_the_command_s_password(mailing, tmp_path: Path) -> None:  # noqa: F811
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult, LoginPassword

    received: list[bytes] = []

    class Handler:
        async def handle_DATA(self, server, session, envelope):
            received.append(envelope.original_content or envelope.content)
            return "250 OK"

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login == b"red" and auth_data.password == b"s3cret"
        return AuthResult(success=ok)

    port = _free_port()
    controller = Controller(Handler(), hostname="127.0.0.1", port=port, authenticator=authenticator,
                            auth_require_tls=False, auth_required=True)
    controller.start()
    try:
        good = tmp_path / "good.toml"
        good.write_text(f'[smtp]\nhost = "127.0.0.1"\nport = {port}\nsecurity = "none"\nusername = "red"\n'
                        f"password_command = '''{SAY}'''\n")
        good.chmod(0o644)  # no password in it: anyone may read it
        wrong = tmp_path / "wrong.toml"
        wrong.write_text(good.read_text().replace("s3cret", "guess") + "timeout = 5\n")
        run("do", "-g", mailing.red.gd.path, "advance 1", "pass")
        result = run("send", "-g", mailing.red.gd.path, "--smtp", "--smtp-config", good)
        assert f"127.0.0.1:{port}" in result.output and len(received) == 1
        again = CliRunner().invoke(cli, ["send", "-g", str(mailing.red.gd.path), "--since", "2", "--smtp",
                                         "--smtp-config", str(wrong)])
        assert again.exit_code == 13 and "could not send through 127.0.0.1" in again.output
        assert "guess" not in again.output and len(received) == 1
    finally:
        controller.stop()


def test_the_system_keyring_gives_the_password_and_says_how_to_store_a_missing_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27 point 8: 'keyring = true' reads the password from the system
    keyring (the optional 'keyring' package, here a stand-in with its API):
    service credentials.KEYRING_SERVICE, the login user."""
    import types

    stored = {(credentials.KEYRING_SERVICE, "red"): "from-keyring"}
    fake = types.ModuleType("keyring")
    fake.get_password = lambda service, user: stored.get((service, user))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "keyring", fake)
    assert credentials.password(_config(tmp_path), "red", use_keyring=True) == ("from-keyring", [])
    with pytest.raises(UsageProblem, match=f"keyring set {credentials.KEYRING_SERVICE} blue"):
        credentials.password(_config(tmp_path), "blue", use_keyring=True)
