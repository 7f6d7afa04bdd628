#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# serve_driver.py: drives headless Chromium (html_driver.Browser, DevTools over a pipe) through
# `jprof serve`'s page with real mouse and keyboard events; prints one JSON line per step.
"""usage: serve_driver.py --url URL --out DIR [--frame NAME] [--recs BASE,NEW] [--chromium PATH]

URL is the address jprof serve printed (with its token). The steps, in order:
  load     the page (the token becomes a cookie; the address bar loses it), its segments
  brush    a drag across the middle of the timeline: the range's flame graph, NAME drawn in it
  filter   a process name typed into "process" and Enter: the graph again, with the filter
  base     "Use as base", then a second drag (the right half) and "Diff with base"
  link     the page's own URL opened afresh: the same range, base and view come back
  recs     (--recs: serve --recordings) BASE picked in "Recording", its flame graph; "Use as
           base", NEW picked, "Diff with base": the diff; the link gives the two back
Screenshots go to DIR. Every console error or uncaught exception is an "error" line and makes
the exit status 1, as does a failed step.
"""
import base64
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from html_driver import new_page, page_clean  # noqa: E402


def main(argv):
    args = {}
    it = iter(argv)
    for a in it:
        if a in ("--url", "--out", "--chromium", "--frame", "--comm", "--recs"):
            args[a[2:]] = next(it)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    if "url" not in args or "out" not in args:
        print(__doc__, file=sys.stderr)
        return 2
    frame = args.get("frame", "main")
    chromium = args.get("chromium") or shutil.which("chromium") or "chromium"
    os.makedirs(args["out"], exist_ok=True)
    profile_dir = tempfile.mkdtemp(prefix="jprof-chromium-")
    status = 0
    b = None
    t_step = [time.monotonic()]

    def emit(step, **kv):
        kv["ms"] = round((time.monotonic() - t_step[0]) * 1e3)
        print(json.dumps(dict(step=step, **kv)), flush=True)

    def wait_for(expr, what, timeout=60.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            v = b.eval(expr)
            if v:
                return v
            b.pump(0.1)
        raise RuntimeError("waited %.0f s for %s; the page: %s" % (timeout, what,
                                                                  json.dumps(b.eval(state))))

    def shot(name):
        png = b.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(os.path.join(args["out"], name + ".png"), "wb") as f:
            f.write(base64.b64decode(png))

    def drag(x0, x1):
        """a real drag on the timeline, from x0 to x1 (fractions of its width)"""
        r = b.eval("(() => { const r = document.getElementById('timeline')"
                   ".getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
        y = r[1] + r[3] / 2
        b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": r[0] + r[2] * x0, "y": y})
        b.send("Input.dispatchMouseEvent", {"type": "mousePressed", "x": r[0] + r[2] * x0, "y": y,
                                            "button": "left", "clickCount": 1})
        for i in range(1, 6):
            x = r[0] + r[2] * (x0 + (x1 - x0) * i / 5)
            b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y,
                                                "buttons": 1})
        b.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": r[0] + r[2] * x1,
                                            "y": y, "button": "left", "clickCount": 1})

    # the flame graph in the frame: its script ran and NAME is one of its drawn frames
    graph = ("(() => { const w = document.getElementById('view').contentWindow;"
             " return !!(w && w.jprof && w.jprof.frameRect(%s)); })()" % json.dumps(frame))
    state = ("({range: document.getElementById('range').textContent,"
             " base: document.getElementById('base').textContent,"
             " status: document.getElementById('status').textContent,"
             " hash: location.hash, where: document.getElementById('where').textContent})")

    def diff_shown(what):
        """the diff page in the frame, NAME among its frames"""
        wait_for("(() => { const w = document.getElementById('view').contentWindow;"
                 " return !!(w && w.jprof && w.document.body.textContent.includes('base')"
                 " && w.jprof.frameRect(%s)); })()" % json.dumps(frame), what)

    def reopened(before, what):
        """the page's own URL opened afresh: (the same range, base and address?, its state)"""
        url = b.eval("location.href")
        b.send("Page.navigate", {"url": "about:blank"})
        b.wait_event("Page.loadEventFired")
        b.send("Page.navigate", {"url": url})
        b.wait_event("Page.loadEventFired")
        wait_for(graph, what)
        again = b.eval(state)
        return all(again[k] == before[k] for k in ("range", "base", "hash")), again

    try:
        b = new_page(chromium, 1280, 800, profile_dir)

        t_step[0] = time.monotonic()
        b.send("Page.navigate", {"url": args["url"]})
        b.wait_event("Page.loadEventFired")
        wait_for("document.getElementById('where').textContent.includes('segments')",
                 "the segments")
        href = b.eval("location.href")
        if "token=" in href:
            raise RuntimeError("the token stayed in the address bar: " + href)
        shot("serve-load")
        emit("load", href=href, state=b.eval(state))

        t_step[0] = time.monotonic()
        drag(0.1, 0.9)
        wait_for(graph, "the range's flame graph")
        shot("serve-brush")
        emit("brush", state=b.eval(state))

        t_step[0] = time.monotonic()
        b.eval("(() => { const e = document.getElementById('comm'); e.focus(); e.value = '';"
               " document.getElementById('view').srcdoc = ''; })()")
        b.send("Input.insertText", {"text": args.get("comm", "hotab")})
        b.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Enter", "code": "Enter",
                                          "windowsVirtualKeyCode": 13})
        b.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Enter", "code": "Enter",
                                          "windowsVirtualKeyCode": 13})
        wait_for(graph, "the filtered flame graph")
        emit("filter", state=b.eval(state))

        t_step[0] = time.monotonic()
        b.click_selector("#setbase")
        drag(0.55, 0.95)
        wait_for(graph, "the second range's flame graph")
        b.eval("document.getElementById('view').srcdoc = ''")
        b.click_selector("#diff")
        diff_shown("the diff")
        shot("serve-diff")
        st = b.eval(state)
        emit("base", state=st)

        t_step[0] = time.monotonic()
        same, again = reopened(st, "the view from the link")
        emit("link", same=same, state=again)
        if not same:
            status = 1

        if "recs" in args:
            base, new = args["recs"].split(",")

            def pick(name):
                b.eval("document.getElementById('view').srcdoc = ''")
                b.eval("(() => { const s = document.getElementById('rec'); s.value = %s;"
                       " s.dispatchEvent(new Event('change')); })()" % json.dumps(name))
                wait_for(graph, "the flame graph of " + name)

            t_step[0] = time.monotonic()
            pick(base)
            b.click_selector("#setbase")
            pick(new)
            b.eval("document.getElementById('view').srcdoc = ''")
            b.click_selector("#diff")
            diff_shown("the recordings' diff")
            shot("serve-recordings-diff")
            same, again = reopened(b.eval(state), "the recordings' view from the link")
            emit("recs", same=same, state=again)
            if not same:
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
