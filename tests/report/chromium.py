"""A real browser for the report's page: headless Chromium over the DevTools protocol.

Chromium (Debian's `chromium`) is started with `--remote-debugging-pipe`: commands go as JSON
on fd 3, answers and events come back on fd 4, each message ended by a NUL byte; no port, no
network. `open_page` loads a file:// URL, waits for its load event and returns what a test
checks: console errors and uncaught exceptions, failed loads, the result of a script run in the
page, and optionally a PNG of the first screen. Chromium is found and started as every test
part is (tests/parts.py `chromium_command`, `require_part`): where it is missing the test is
skipped with "not run: ..." and, with CI=true, fails (the README's test command installs it).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.parts import chromium_command

TIMEOUT_S = 60.0


@dataclass
class Page:
    """What the browser saw."""

    errors: list[str] = field(default_factory=list)  # console errors, exceptions, failed loads
    result: Any = None  # the value of the script run after the load event
    screenshot: bytes | None = None


class _Pipe:
    def __init__(self, proc: subprocess.Popen[bytes], send: int, receive: int) -> None:
        self.proc, self.send, self.receive = proc, send, receive
        self.next_id, self.buffer = 0, b""
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.send, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def read(self) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_S
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self.receive, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its pipe")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def wait_for(self, method: str) -> dict[str, Any]:
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(i)
        while True:
            event = self.read()
            if event.get("method") == method:
                return event
            self.events.append(event)


def open_page(url: str, script: str, screenshot: tuple[int, int] | None = None) -> Page:
    """Load `url`, run `script` (an expression; its JSON-able value is `Page.result`), and
    collect every console error, exception and failed request on the way."""
    # above fd 10 and close-on-exec: only the two moved to 3 and 4 reach Chromium
    to_chrome_r, to_chrome_w = map(_high, os.pipe())
    from_chrome_r, from_chrome_w = map(_high, os.pipe())
    width, height = screenshot or (1280, 900)

    # bash (fds over 9 in its redirections) puts the pipes at 3 and 4 and execs Chromium: a
    # preexec_fn would run Python in a child forked from this process, which JAX's threads
    # make unsafe (JAX warns of it once a test of the same worker has imported it)
    at_3_and_4 = ["bash", "-c", f'exec "$@" 3<&{to_chrome_r} 4>&{from_chrome_w} '
                  f'{to_chrome_r}<&- {from_chrome_w}>&-', "bash"]
    with tempfile.TemporaryDirectory(prefix="report-browser-") as profile:
        proc = subprocess.Popen(
            [*at_3_and_4, *chromium_command(Path(profile)), "--remote-debugging-pipe",
             f"--window-size={width},{height}", "--hide-scrollbars", "about:blank"],
            pass_fds=(to_chrome_r, from_chrome_w), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        pipe = _Pipe(proc, to_chrome_w, from_chrome_r)
        try:
            return _visit(pipe, url, script, screenshot is not None)
        finally:
            with contextlib.suppress(RuntimeError, TimeoutError, OSError):
                pipe.call("Browser.close")
            os.close(to_chrome_w)
            os.close(from_chrome_r)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _high(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


def _visit(pipe: _Pipe, url: str, script: str, shoot: bool) -> Page:
    target = next(t for t in pipe.call("Target.getTargets")["targetInfos"]
                  if t["type"] == "page")
    session = pipe.call("Target.attachToTarget", targetId=target["targetId"],
                        flatten=True)["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        pipe.call(f"{domain}.enable", session)
    pipe.call("Page.navigate", session, url=url)
    pipe.wait_for("Page.loadEventFired")
    value = pipe.call("Runtime.evaluate", session, expression=script, returnByValue=True,
                      awaitPromise=True)
    page = Page(result=value.get("result", {}).get("value"))
    if "exceptionDetails" in value:
        page.errors.append(f"the test's script threw: {value['exceptionDetails']}")
    if shoot:
        page.screenshot = base64.b64decode(pipe.call("Page.captureScreenshot", session,
                                                     format="png")["data"])
    for event in pipe.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            page.errors.append(f"exception: {params['exceptionDetails'].get('text')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            page.errors.append(f"console.{params['type']}: {params.get('args')}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            page.errors.append(f"log: {params['entry'].get('text')} {params['entry'].get('url')}")
        elif method == "Network.loadingFailed":
            page.errors.append(f"failed to load: {params.get('errorText')}")
    return page


def file_url(path: Path) -> str:
    return path.resolve().as_uri()
