"""Headless Chromium for the page tests and benchmarks: Debian's ``chromium`` driven by Playwright, offline.

The browser is the system one (``/usr/bin/chromium``, or ``HYDROSEQ_CHROMIUM``); Playwright never
downloads its own. Chromium's background services (updates, sync, safe browsing, field trials) are
switched off, so the only requests a page session makes are those the page asks for: each one is
recorded in :attr:`PageSession.requests`, each console message and uncaught error in
:attr:`PageSession.console_errors`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = ("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability",
                  "--disable-client-side-phishing-detection", "--metrics-recording-only", "--no-pings",
                  "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication")


def chromium_path() -> str | None:
    """The system Chromium: ``HYDROSEQ_CHROMIUM``, else ``chromium`` on the PATH; None where there is none."""
    return os.environ.get("HYDROSEQ_CHROMIUM") or shutil.which("chromium")


@dataclass
class PageSession:
    """A page in a fresh browser context, with what it asked the network for and what it logged."""

    page: Any
    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def open(self, url: str, ready: str = "window.hydroseqReady !== undefined", timeout_ms: float = 30_000) -> float:
        """Load ``url`` and wait until the JavaScript expression ``ready`` is true; milliseconds from the
        start of the navigation to then (the page's ``performance.now()``)."""
        self.page.goto(url, wait_until="load", timeout=timeout_ms)
        self.page.wait_for_function(ready, timeout=timeout_ms, polling=10)
        return float(self.page.evaluate("performance.now()"))


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (Playwright ``Browser``)."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        raise RuntimeError("no Chromium: apt-get install chromium chromium-driver (or set HYDROSEQ_CHROMIUM)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=list(CHROMIUM_FLAGS), headless=True)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def page_session(browser: Any, width: int = 1366, height: int = 768) -> Iterator[PageSession]:
    """A new context and page of ``browser``, a ``width`` x ``height`` viewport (a laptop's by default), recording
    requests and console errors."""
    context = browser.new_context(viewport={"width": width, "height": height}, service_workers="block")
    try:
        page = context.new_page()
        session = PageSession(page)
        context.on("request", lambda request: session.requests.append(request.url))
        page.on("console", lambda message: session.console_errors.append(message.text)
                if message.type == "error" else None)
        page.on("pageerror", lambda error: session.console_errors.append(f"uncaught: {error}"))
        yield session
    finally:
        context.close()


def file_url(path: str | os.PathLike[str]) -> str:
    """``file:///...`` of a local file."""
    return Path(path).resolve().as_uri()
