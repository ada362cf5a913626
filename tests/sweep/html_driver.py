"""html_driver.py - drives headless Chromium over the DevTools protocol on a
pipe (--remote-debugging-pipe: commands on its fd 3, answers on its fd 4,
each a JSON text ended by a NUL byte), so that the HTML tests can load a page
in a state, click, type, read the DOM and take screenshots - offline, with
nothing but python3's standard library - and reads gfp-sweep's page back
(its table of findings and failure points, and what that must hold by the
sweep's JSON).

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
from html.parser import HTMLParser


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
        """Loads url anew, also where only its fragment differs from the
        page's (which would be a same-document navigation)."""
        if getattr(self, "url", "about:blank").split("#")[0] == url.split("#")[0]:
            self.load("about:blank")
        self.url = url
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


class Node:
    """An element of a page's DOM as Chromium serialised it."""

    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def has_class(self, name):
        return name in self.attrs.get("class", "").split()

    def all(self, tag=None, cls=None, **attrs):
        """The elements under this one, in document order, with that tag,
        class and attributes (a value of True: present)."""
        for c in self.children:
            if isinstance(c, str):
                continue
            if ((tag is None or c.tag == tag) and (cls is None or c.has_class(cls)) and
                    all(c.attrs.get(k.replace("_", "-")) == v if v is not True
                        else k.replace("_", "-") in c.attrs for k, v in attrs.items())):
                yield c
            yield from c.all(tag, cls, **attrs)

    def one(self, tag=None, cls=None, **attrs):
        found = list(self.all(tag, cls, **attrs))
        if len(found) != 1:
            raise AssertionError(f"{len(found)} <{tag} class={cls} {attrs}>, expected one")
        return found[0]


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


def parse(html):
    """The DOM tree of an HTML text."""
    class Builder(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.root = self.cur = Node("#document", {})

        def handle_starttag(self, tag, attrs):
            node = Node(tag, attrs, self.cur)
            self.cur.children.append(node)
            if tag not in VOID:
                self.cur = node

        def handle_endtag(self, tag):
            n = self.cur
            while n is not None and n.tag != tag:
                n = n.parent
            if n is not None and n.parent is not None:
                self.cur = n.parent

        def handle_data(self, data):
            self.cur.children.append(data)

    b = Builder()
    b.feed(html)
    b.close()
    return b.root


# What gfp-sweep's page shows, read back, and what it must show, from the
# sweep's JSON alone.

ORDER = ["crash", "hang", "silent", "abort", "handled", "ok", "unreached"]
FINDING = {"crash", "hang", "silent"}


def points(rs):
    """The failure points of runs as a cell shows them: "hit 1, 2, 6"."""
    out, kind = [], ""
    for r in rs[:12]:
        k = "hit" if r["site"] else "call"
        out.append(("" if k == kind else k + " ") + str(r["hit"]))
        kind = k
    return ", ".join(out) + (", ..." if len(rs) > 12 else "")


def want_rows(run):
    """The table's rows as (outcome, site, runs, finding link): each finding,
    then each site (in the order of its first run) with each other outcome
    it had; and the failure points of the rows that are no finding."""
    results = run["results"]
    key = lambda r: r["site"] or r["injected_site"]
    want = [(f["outcome"], key(results[f["first_run"]]) or "(none)", f["count"], f"[{k + 1}]")
            for k, f in enumerate(run["findings"])]
    hits = [None] * len(want)
    at = {}
    for r in results:
        at.setdefault(key(r), {}).setdefault(r["outcome"], []).append(r)
    for site, outcomes in at.items():
        for o in ORDER:
            if o not in FINDING and o in outcomes:
                want.append((o, site or "(none)", len(outcomes[o]), ""))
                hits.append(points(outcomes[o]))
    return want, hits


def table_rows(page):
    """The rows of the page's table of findings and failure points, in the
    DOM's order."""
    t = parse(page.dom()).one("table", id="points")
    out = []
    for i, tr in enumerate(t.one("tbody").all("tr")):
        td = list(tr.all("td"))
        out.append({"i": i, "o": tr.attrs["data-o"], "hidden": "hidden" in tr.attrs,
                    "fn": "".join(c for c in td[1].children if isinstance(c, str)),
                    "fn_text": td[1].text(), "file": td[2].text(), "mod": td[3].text(),
                    "site": td[4].text(), "hits": td[5].text(), "runs": int(td[6].text()),
                    "finding": td[7].text()})
    return out


def shown_rows(page):
    return [r for r in table_rows(page) if not r["hidden"]]


def ident(rs):
    return [(r["o"], r["site"], r["runs"], r["finding"]) for r in rs]


def chromium():
    """Chromium's path, or None when it is not installed."""
    import shutil
    return shutil.which("chromium") or shutil.which("chromium-browser")


if __name__ == "__main__":
    # html_driver.py --which: Chromium's path, or exit 77 (a test's skip)
    # saying how to install it.
    if sys.argv[1:] == ["--which"]:
        if not chromium():
            print("chromium is not installed (Debian: apt-get install chromium)",
                  file=sys.stderr)
            sys.exit(77)
        print(chromium())
        sys.exit(0)
    # html_driver.py CHROMIUM URL OUT.png [WIDTH]: a screenshot of a page.
    tmp = os.environ.get("TMPDIR", "/tmp")
    with Page(sys.argv[1], tmp, int(sys.argv[4]) if len(sys.argv) > 4 else 1200) as p:
        p.load(sys.argv[2])
        p.screenshot(sys.argv[3])
        print("\n".join(p.errors) or "no console messages")
