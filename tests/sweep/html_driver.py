"""html_driver.py - drives headless Chromium over the DevTools protocol on a
pipe (--remote-debugging-pipe: commands on its fd 3, answers on its fd 4,
each a JSON text ended by a NUL byte), so that the HTML tests can load a page
in a state, click, type, read the DOM and take screenshots - offline, with
nothing but python3's standard library.

Every console message and uncaught exception the page makes is kept in
Page.errors; a test fails on any."""

import base64
import fcntl
import json
import os
import select
import subprocess
import sys
import time


class PageError(Exception):
    pass


class Page:
    def __init__(self, chromium, tmp, width=1200, height=900, timeout=30):
        self.timeout = timeout
        self.errors = []
        self.events = []
        self.next_id = 0
        cmd_r, cmd_w = os.pipe()
        ans_r, ans_w = os.pipe()
        # Out of the way of 3 and 4, where the child wants them, and not
        # inherited: the pipe ends when Chromium exits.
        hi_cmd_r = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
        hi_ans_w = fcntl.fcntl(ans_w, fcntl.F_DUPFD_CLOEXEC, 10)

        def child():
            os.dup2(hi_cmd_r, 3)
            os.dup2(hi_ans_w, 4)

        self.log = open(f"{tmp}/chromium-cdp.log", "ab")
        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--remote-debugging-pipe",
             f"--user-data-dir={tmp}/chrome-cdp", f"--window-size={width},{height}",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
            preexec_fn=child, close_fds=False)  # what child() put at 3 and 4 stays
        for fd in (cmd_r, ans_w, hi_cmd_r, hi_ans_w):
            os.close(fd)
        self.w, self.r, self.buf = cmd_w, ans_r, b""
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.resize(width, height)

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except Exception:
            pass
        os.close(self.w)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.r)
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise PageError("Chromium did not answer in time")
            chunk = os.read(self.r, 1 << 16)
            if not chunk:
                raise PageError("Chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def _event(self, msg):
        m, p = msg.get("method"), msg.get("params", {})
        if m == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append("exception: " + d.get("exception", {}).get(
                "description", d.get("text", "")))
        elif m == "Runtime.consoleAPICalled":
            self.errors.append(f"console.{p['type']}: " + " ".join(
                str(a.get("value", a.get("description", ""))) for a in p["args"]))
        elif m == "Log.entryAdded":
            e = p["entry"]
            self.errors.append(f"log {e['level']} ({e['source']}): {e['text']}")
        self.events.append(m)

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            ans = self._read(deadline)
            if ans.get("id") == self.next_id:
                if "error" in ans:
                    raise PageError(f"{method}: {ans['error']}")
                return ans.get("result", {})
            self._event(ans)

    def wait_event(self, method):
        deadline = time.monotonic() + self.timeout
        while method not in self.events:
            self._event(self._read(deadline))
        self.events.remove(method)

    def resize(self, width, height):
        self.width = width
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": False})

    def scripts(self, on):
        self.send("Emulation.setScriptExecutionDisabled", {"value": not on})

    def load(self, url):
        self.events.clear()
        ans = self.send("Page.navigate", {"url": url})
        if ans.get("errorText"):
            raise PageError(f"{url}: {ans['errorText']}")
        self.wait_event("Page.loadEventFired")

    def eval(self, expr):
        """The value of a JavaScript expression (a promise is awaited)."""
        ans = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                             "awaitPromise": True, "userGesture": True})
        if "exceptionDetails" in ans:
            raise PageError(f"{expr}: {ans['exceptionDetails']}")
        return ans["result"].get("value")

    def click(self, selector):
        """A real mouse click in the middle of the element."""
        box = self.eval(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();
            return [r.x + r.width / 2, r.y + r.height / 2]; }})()""")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})

    def type(self, selector, text):
        self.eval(f"document.querySelector({json.dumps(selector)}).focus()")
        self.send("Input.insertText", {"text": text})

    def dom(self):
        return self.eval("document.documentElement.outerHTML")

    def screenshot(self, path, full=True, top=0, height=None):
        """The page as rendered: all of it (full, or height pixels from top)
        or the viewport."""
        params = {"format": "png"}
        if full:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            height = min(height or size["height"], size["height"] - top, 16000)
            params["captureBeyondViewport"] = True
            params["clip"] = {"x": 0, "y": top, "width": self.width, "height": height,
                              "scale": 1}
        data = self.send("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))


if __name__ == "__main__":
    # html_driver.py CHROMIUM URL OUT.png [WIDTH]: a screenshot of a page.
    tmp = os.environ.get("TMPDIR", "/tmp")
    with Page(sys.argv[1], tmp, int(sys.argv[4]) if len(sys.argv) > 4 else 1200) as p:
        p.load(sys.argv[2])
        p.screenshot(sys.argv[3])
        print("\n".join(p.errors) or "no console messages")
