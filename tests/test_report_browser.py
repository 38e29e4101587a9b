"""The HTML turn report checked in a real browser (issue 21 point 3).

Headless Chromium (the Debian package ``chromium``; another binary through
``PBEM_CHROMIUM``) opens the report as ``pbem report`` writes it, with the
map it embeds, and is driven over the DevTools protocol on a pipe (no
network port, no extra Python package). For A4 and Letter:

- with the print media emulated and the window as wide as the page's
  printable width (the paper less report.css's 12 mm margins), no element
  reaches beyond the page: the document does not scroll sideways and every
  box (an inline map counts as one) ends inside the width;
- the print stylesheet applies: rules of ``@media print`` hold under print
  and not on screen, and the PDF has the paper's size with the map on a
  landscape page of its own (``@page map``);
- the PDF and a PNG of the printed layout are written (to
  ``PBEM_BROWSER_OUT`` when set, to look at them).

Without Chromium the tests are skipped, saying so.
"""

from __future__ import annotations

import base64
import json
import os
import re
import selectors
import shutil
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pbem import rulesapi
from pbem.cli import cli
from pbem.table import THROWAWAY_PASSPHRASE, LocalTable, demo_policy
from tests import hilltop
from tests.test_happenings import scripted


def _chromium() -> str | None:
    named = os.environ.get("PBEM_CHROMIUM")
    if named:
        return named if Path(named).exists() else None
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install chromium; or set "
                             "PBEM_CHROMIUM to its binary): the HTML report's browser check cannot run")

MM_PER_INCH = 25.4
PX_PER_MM = 96 / MM_PER_INCH
POINTS_PER_MM = 72 / MM_PER_INCH
#: Paper (width, height) in mm, and report.css's page margin.
PAPERS = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
MARGIN_MM = 12.0
TIMEOUT = 60.0


class Browser:
    """Headless Chromium driven over ``--remote-debugging-pipe``: commands in
    on fd 3 and answers out on fd 4, JSON messages ended by a NUL byte."""

    def __init__(self, binary: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="pbem-chromium-")
        to_child, self._to_child = os.pipe()
        self._from_child, from_child = os.pipe()

        def fds() -> None:
            os.dup2(to_child, 3)
            os.dup2(from_child, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
             "--hide-scrollbars", "--allow-file-access-from-files", f"--user-data-dir={self.profile}"],
            pass_fds=(3, 4), preexec_fn=fds, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._id = self._loads = 0
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._from_child, selectors.EVENT_READ)
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            while b"\0" not in self._buffer:
                if not self._selector.select(max(0.0, deadline - time.monotonic())):
                    raise TimeoutError(f"Chromium did not answer {method} within {TIMEOUT:.0f} s")
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"Chromium exited during {method} (exit code {self.proc.poll()})")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, self.session, **params)

    def evaluate(self, expression: str) -> Any:
        result = self.page("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, path: Path) -> None:
        """Load ``path`` and wait until it is complete (a query of its own per
        load, so that the previous document can never be taken for it)."""
        self._loads += 1
        url = f"{path.resolve().as_uri()}?load={self._loads}"
        self.page("Page.navigate", url=url)
        deadline = time.monotonic() + TIMEOUT
        while self.evaluate(f"document.readyState === 'complete' && location.href === {json.dumps(url)}") is not True:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path} did not load")
            time.sleep(0.05)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self._selector.close()
        os.close(self._to_child)
        os.close(self._from_child)
        shutil.rmtree(self.profile, ignore_errors=True)


#: Measured in the page: the layout width, the sideways scroll, every box
#: that ends beyond the width (an SVG counts as one box: what it clips is
#: not on the page), and computed styles that only the print rules set.
MEASURE = """(() => {
  const width = document.documentElement.clientWidth;
  const beyond = [];
  for (const e of document.querySelectorAll('body *')) {
    if (e instanceof SVGElement && e.tagName !== 'svg') continue;
    const r = e.getBoundingClientRect();
    if (r.width > 0 && (r.right > width + 0.5 || r.left < -0.5))
      beyond.push(`${e.tagName.toLowerCase()}.${e.getAttribute('class') || ''} ${r.left.toFixed(1)}..${r.right.toFixed(1)}`);
  }
  const combat = document.querySelector('table.combat');
  return {width, scroll: document.documentElement.scrollWidth, beyond: beyond.slice(0, 12),
          bodyMaxWidth: getComputedStyle(document.body).maxWidth,
          combatBreak: combat ? getComputedStyle(combat).breakInside : null,
          maps: document.querySelectorAll('div.map svg').length};
})()"""


def printable_px(paper: str) -> int:
    width, _ = PAPERS[paper]
    return int((width - 2 * MARGIN_MM) * PX_PER_MM)


def measure(browser: Browser, page: Path, paper: str, media: str) -> dict[str, Any]:
    browser.page("Emulation.setEmulatedMedia", media=media)
    browser.page("Emulation.setDeviceMetricsOverride", width=printable_px(paper), height=1000, deviceScaleFactor=1,
                 mobile=False)
    browser.open(page)
    return browser.evaluate(MEASURE)


def pdf_page_sizes(pdf: bytes) -> list[tuple[float, float]]:
    """(width, height) in points of each page's MediaBox, in file order."""
    return [(float(w), float(h)) for w, h in
            re.findall(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", pdf)]


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


@pytest.fixture(scope="module")
def browser():
    assert CHROMIUM is not None
    b = Browser(CHROMIUM)
    yield b
    b.close()


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    named = os.environ.get("PBEM_BROWSER_OUT")
    if named:
        Path(named).mkdir(parents=True, exist_ok=True)
        return Path(named)
    return tmp_path_factory.mktemp("browser")


def _write_report(game: Path, out: Path) -> Path:
    result = CliRunner(env={"PBEM_PASSPHRASE": THROWAWAY_PASSPHRASE}).invoke(cli, ["report", "-g", str(game),
                                                                                  "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def hilltop_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The attacker's report after both rounds: two combat tables, the map."""
    rulesapi.register(hilltop.RULES)
    try:
        tmp = tmp_path_factory.mktemp("hilltop")
        table = LocalTable.create(tmp / "game", "hilltop", "hill")
        table.play(scripted(defender=[["dig in 2"], ["dig in 1"]], attacker=[["assault 4"], ["assault 3"]]), 20)
        return _write_report(table.player("defender").gd.path, tmp / "hilltop-defender.html")
    finally:
        rulesapi.unregister("hilltop")


@pytest.fixture(scope="module")
def ritd_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A RitD report with its real map: the demo's first events, for the
    side whose decision it is (its summary holds the other's last events)."""
    assert "ritd" in rulesapi.available(), "the ritd rules are part of this package (entry point)"
    rules = rulesapi.load("ritd")
    demo = rules.demo
    assert demo is not None
    tmp = tmp_path_factory.mktemp("ritd")
    table = LocalTable.create(tmp / "game", "ritd", demo.scenario, demo.options)
    table.play(demo_policy(rules), 8)
    decision = table.replay.pending()
    assert decision is not None
    return _write_report(table.player(decision.role).gd.path, tmp / f"ritd-{decision.role}.html")


@pytest.mark.parametrize("paper", sorted(PAPERS))
@pytest.mark.parametrize("which", ["hilltop", "ritd"])
def test_the_printed_report_fits_the_page_and_uses_the_print_styles(
        browser: Browser, out_dir: Path, paper: str, which: str, request: pytest.FixtureRequest) -> None:
    page: Path = request.getfixturevalue(f"{which}_report")
    screen = measure(browser, page, paper, "screen")
    printed = measure(browser, page, paper, "print")
    assert printed["width"] == printable_px(paper)
    assert printed["scroll"] <= printed["width"], printed
    assert printed["beyond"] == [], f"{which} on {paper}: boxes beyond the printable width: {printed['beyond']}"
    assert printed["maps"] >= 1  # the report embeds its map
    # The print rules hold in print and not on screen.
    assert printed["bodyMaxWidth"] == "none" and screen["bodyMaxWidth"] != "none"
    if which == "hilltop":
        assert printed["combatBreak"] == "avoid" and screen["combatBreak"] != "avoid"

    width_mm, height_mm = PAPERS[paper]
    pdf = base64.b64decode(browser.page("Page.printToPDF", paperWidth=width_mm / MM_PER_INCH,
                                        paperHeight=height_mm / MM_PER_INCH, preferCSSPageSize=True,
                                        printBackground=True)["data"])
    assert pdf.startswith(b"%PDF-")
    sizes = pdf_page_sizes(pdf)
    portrait = (width_mm * POINTS_PER_MM, height_mm * POINTS_PER_MM)

    def near(a: tuple[float, float], b: tuple[float, float]) -> bool:
        return abs(a[0] - b[0]) < 2 and abs(a[1] - b[1]) < 2

    assert sizes and all(near(s, portrait) or near(s, portrait[::-1]) for s in sizes), (paper, sizes)
    # The text on the paper's portrait pages, each map on a landscape page of its own (@page map).
    assert sum(near(s, portrait) for s in sizes) >= 1
    assert sum(near(s, portrait[::-1]) for s in sizes) == printed["maps"], sizes
    (out_dir / f"{page.stem}-{paper}.pdf").write_bytes(pdf)

    png = base64.b64decode(browser.page("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"])
    width_px, height_px = png_size(png)
    assert width_px == printable_px(paper) and height_px > 1000
    (out_dir / f"{page.stem}-{paper}.png").write_bytes(png)


def test_the_check_sees_a_box_beyond_the_page(browser: Browser, tmp_path: Path) -> None:
    """The measure is not blind: a table wider than the page is reported."""
    page = tmp_path / "wide.html"
    page.write_text('<!DOCTYPE html><html><body><table style="width: 300mm"><tr><td>x</td></tr></table>'
                    "</body></html>", encoding="utf-8")
    wide = measure(browser, page, "a4", "print")
    assert wide["scroll"] > wide["width"] and any(b.startswith("table.") for b in wide["beyond"])
