#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# html_driver.py: drives headless Chromium over the DevTools protocol (a pipe, no network) through a
# jprof HTML flame graph with real mouse and keyboard events; prints one JSON line per step.
"""usage: html_driver.py --html FILE --out DIR [--chromium PATH] STEP...

steps:  load            open the file, wait for its load event, print load timing and state
        search:TEXT     click the search box, replace its text by TEXT (typed), print state
        regex           click the Regex checkbox, print state
        click:FRAME     left-click the centre of the widest drawn frame named FRAME
        hover:FRAME     move the mouse over that frame (its tooltip shows in the state)
        reset           click "Reset zoom"
        whole           click the "blocked all recording" toggle
        view:NAME       click the view button (icicle, flame, reverse)
        pixel:FRAME     print the canvas colour at the centre of FRAME
        shot:NAME       save a screenshot of the viewport as DIR/NAME.png
        brush:ID:A:B    drag with the left button across canvas #ID (tl: the timeline, hm: the
                        heatmap) from fraction A to fraction B of its width (on the heatmap
                        from its top row to its bottom row), print state
        brush:ID:A:B:shift  the same with Shift held (the page's base range to compare with)
        by:KIND         choose the timeline's grouping with the keyboard (proc, thread)
        open:HASH       open the file again with #HASH (a copied link), print state

Every console error, warning of a failed load and uncaught exception is printed as an "error" line
and makes the exit status 1, as does a failed step.
"""
import base64
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

STEP_TIMEOUT = 120.0  # seconds; a loaded machine runs five engineers' builds


class Browser:
    def __init__(self, chromium, width, height, profile_dir):
        cmd_r, self.cmd_w = os.pipe()
        self.res_r, res_w = os.pipe()
        # the child's fd 3 reads commands and fd 4 writes replies (--remote-debugging-pipe)
        hi_r, hi_w = os.dup(cmd_r), os.dup(res_w)

        def child_fds():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                "--disable-extensions", "--mute-audio", "--remote-debugging-pipe",
                "--user-data-dir=" + profile_dir, "--window-size=%d,%d" % (width, height),
                "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, close_fds=False,
                                     preexec_fn=child_fds, start_new_session=True)
        for fd in (cmd_r, res_w, hi_r, hi_w):
            os.close(fd)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close", session=False, timeout=10)
                except Exception:
                    pass
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            os.close(self.cmd_w)
            os.close(self.res_r)

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply from Chromium")
            ready, _, _ = select.select([self.res_r], [], [], left)
            if ready:
                chunk = os.read(self.res_r, 1 << 20)
                if not chunk:
                    raise EOFError("Chromium closed the DevTools pipe (exit %s)" % self.proc.poll())
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=True, timeout=STEP_TIMEOUT):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self.cmd_w, data):]
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method, timeout=STEP_TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == method:
                    return self.events.pop(i)
            m = self._read_message(deadline)
            if "method" in m:
                self.events.append(m)

    def pump(self, seconds):
        """collects events for a while (the page's timers run meanwhile)"""
        deadline = time.monotonic() + seconds
        try:
            while True:
                m = self._read_message(deadline)
                if "method" in m:
                    self.events.append(m)
        except TimeoutError:
            pass

    def eval(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("evaluating %s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def mouse_click(self, x, y):
        for t in ("mouseMoved", "mousePressed", "mouseReleased"):
            p = {"type": t, "x": x, "y": y}
            if t != "mouseMoved":
                p.update(button="left", clickCount=1)
            self.send("Input.dispatchMouseEvent", p)

    def click_selector(self, sel):
        r = self.eval("(() => { const r = document.querySelector(%s).getBoundingClientRect();"
                      " return [r.left + r.width / 2, r.top + r.height / 2]; })()" % json.dumps(sel))
        self.mouse_click(r[0], r[1])


def errors_of(events):
    """console errors, failed loads and uncaught exceptions among the collected events"""
    out = []
    for e in events:
        m, p = e["method"], e.get("params", {})
        if m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("exception: %s %s" % (d.get("text"), d.get("exception", {}).get("description")))
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
            out.append("console.%s: %s" % (p["type"], " ".join(
                str(a.get("value", a.get("description"))) for a in p.get("args", []))))
        elif m == "Page.javascriptDialogOpening":
            out.append("dialog %s: %s" % (p.get("type"), p.get("message")))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
            out.append("log %s: %s" % (p["entry"]["level"], p["entry"].get("text")))
    return out


def new_page(chromium, width, height, profile_dir):
    """a browser with one page attached: Runtime, Log and Page events on"""
    b = Browser(chromium, width, height, profile_dir)
    target = b.send("Target.createTarget", {"url": "about:blank"}, session=False)
    b.session = b.send("Target.attachToTarget", {"targetId": target["targetId"],
                                                 "flatten": True}, session=False)["sessionId"]
    for m in ("Runtime.enable", "Log.enable", "Page.enable"):
        b.send(m)
    return b


def page_clean(b, emit):
    """the page's last events collected; each console error or exception an "error" line;
    True when there was none"""
    b.pump(0.2)
    errs = errors_of(b.events)
    for e in errs:
        emit("error", error=e)
    return not errs


def main(argv):
    args, steps = {}, []
    it = iter(argv)
    for a in it:
        if a in ("--html", "--out", "--chromium", "--width", "--height"):
            args[a[2:]] = next(it)
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            steps.append(a)
    if "html" not in args or "out" not in args:
        print(__doc__, file=sys.stderr)
        return 2
    chromium = args.get("chromium") or shutil.which("chromium") or "chromium"
    url = "file://" + os.path.abspath(args["html"])
    os.makedirs(args["out"], exist_ok=True)
    profile_dir = tempfile.mkdtemp(prefix="jprof-chromium-")
    status = 0
    b = None

    step_t = [time.monotonic()]

    def emit(step, **kv):
        """one line per step; ms: the step's wall time, the page's work included"""
        kv["ms"] = round((time.monotonic() - step_t[0]) * 1e3)
        print(json.dumps(dict(step=step, **kv)), flush=True)

    try:
        b = new_page(chromium, int(args.get("width", 1280)), int(args.get("height", 800)),
                     profile_dir)
        b.send("Emulation.setDeviceMetricsOverride", {"width": int(args.get("width", 1280)),
               "height": int(args.get("height", 800)), "deviceScaleFactor": 1, "mobile": False})
        for step in steps:
            step_t[0] = time.monotonic()
            kind, _, arg = step.partition(":")
            if kind == "load":
                t = time.monotonic()
                b.send("Page.navigate", {"url": url})
                b.wait_event("Page.loadEventFired")
                load_ms = (time.monotonic() - t) * 1e3
                # a frame painted, so the time includes the first render on screen
                b.send("Page.captureScreenshot", {"format": "png"})
                paint_ms = (time.monotonic() - t) * 1e3
                ok = b.eval("typeof window.jprof === 'object'")
                if not ok:
                    emit(step, error="the page's script did not finish (no window.jprof)")
                    status = 1
                    continue
                emit(step, load_ms=round(load_ms), painted_ms=round(paint_ms),
                     timing=b.eval("jprof.timing()"), state=b.eval("jprof.state()"))
            elif kind == "search":
                b.click_selector("#search")
                b.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": "a", "code": "KeyA",
                                                  "modifiers": 2, "commands": ["selectAll"]})
                b.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "a", "code": "KeyA",
                                                  "modifiers": 2})
                if arg:
                    b.send("Input.insertText", {"text": arg})
                else:
                    b.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": "Backspace",
                                                      "code": "Backspace",
                                                      "windowsVirtualKeyCode": 8})
                b.pump(0.6)  # the page waits 150 ms after the last key
                emit(step, state=b.eval("jprof.state()"))
            elif kind in ("regex", "reset", "whole"):
                b.click_selector("#" + kind)
                emit(step, state=b.eval("jprof.state()"))
            elif kind == "view":
                b.click_selector("#v-" + arg)
                emit(step, timing=b.eval("jprof.timing()"), state=b.eval("jprof.state()"))
            elif kind in ("click", "hover", "pixel"):
                r = b.eval("jprof.frameRect(%s)" % json.dumps(arg))
                if not r:
                    emit(step, error="no frame %r drawn" % arg)
                    status = 1
                    continue
                if kind == "click":
                    b.mouse_click(r["cx"], r["cy"])
                    emit(step, rect=r, state=b.eval("jprof.state()"))
                elif kind == "hover":
                    b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": r["cx"],
                                                        "y": r["cy"]})
                    emit(step, rect=r, state=b.eval("jprof.state()"))
                else:
                    # copied to a canvas of its own: readbacks of the page's canvas, more than
                    # one, make Chromium log a warning (willReadFrequently)
                    rgb = b.eval("(() => { const fg = document.getElementById('fg'),"
                                 " dpr = window.devicePixelRatio || 1,"
                                 " c = document.createElement('canvas'); c.width = c.height = 1;"
                                 " const x = c.getContext('2d'); x.imageSmoothingEnabled = false;"
                                 " x.drawImage(fg, %d * dpr, %d * dpr, 1, 1, 0, 0, 1, 1);"
                                 " return Array.from(x.getImageData(0, 0, 1, 1).data.slice(0, 3)); })()"
                                 % (int(r["x"] + min(r["w"] / 2, 1)), int(r["y"] + 1)))
                    emit(step, rgb=rgb)
            elif kind == "brush":
                cid, a, bfrac, *mods = arg.split(":")
                mod = 8 if mods == ["shift"] else 0
                r = b.eval("(() => { const r = document.getElementById(%s).getBoundingClientRect();"
                           " return [r.left, r.top, r.width, r.height]; })()" % json.dumps(cid))
                x0, x1 = r[0] + r[2] * float(a) + 1, r[0] + r[2] * float(bfrac) - 1
                y0, y1 = (r[1] + 1, r[1] + r[3] - 1) if cid == "hm" else (r[1] + r[3] / 2,) * 2
                b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x0, "y": y0})
                b.send("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x0, "y": y0,
                                                    "button": "left", "buttons": 1, "clickCount": 1,
                                                    "modifiers": mod})
                for k in range(1, 6):
                    b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "button": "left", "buttons": 1,
                                                        "x": x0 + (x1 - x0) * k / 5,
                                                        "y": y0 + (y1 - y0) * k / 5, "modifiers": mod})
                b.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x1, "y": y1,
                                                    "button": "left", "buttons": 0, "clickCount": 1,
                                                    "modifiers": mod})
                emit(step, timing=b.eval("jprof.timing()"), state=b.eval("jprof.state()"))
            elif kind == "by":
                b.eval("document.getElementById('tl-by').focus()")
                want = {"proc": 0, "thread": 1}[arg]
                cur = b.eval("document.getElementById('tl-by').selectedIndex")
                key = "ArrowDown" if want > cur else "ArrowUp"
                for _ in range(abs(want - cur)):
                    b.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": key, "code": key,
                                                      "windowsVirtualKeyCode": 40 if key == "ArrowDown" else 38})
                    b.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": key,
                                                      "windowsVirtualKeyCode": 40 if key == "ArrowDown" else 38})
                emit(step, state=b.eval("jprof.state()"))
            elif kind == "open":
                b.send("Page.navigate", {"url": "about:blank"})
                b.wait_event("Page.loadEventFired")
                b.send("Page.navigate", {"url": url + "#" + arg})
                b.wait_event("Page.loadEventFired")
                emit(step, state=b.eval("jprof.state()"))
            elif kind == "shot":
                png = b.send("Page.captureScreenshot", {"format": "png"})["data"]
                path = os.path.join(args["out"], arg + ".png")
                with open(path, "wb") as f:
                    f.write(base64.b64decode(png))
                emit(step, path=path)
            else:
                emit(step, error="unknown step")
                status = 1
        if not page_clean(b, emit):
            status = 1
    except Exception as e:  # report, never hang: the browser is killed below
        emit("driver", error="%s: %s" % (type(e).__name__, e))
        status = 1
    finally:
        if b:
            b.close()
        shutil.rmtree(profile_dir, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
