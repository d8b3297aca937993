"""`extoll-vec report STORE`: the HTML page of a real sweep (run by the CLI on a real Dask
cluster, one point of it failing), opened in a real headless browser (Debian's Chromium), which
must show its tables and decode its figures; `tables NAME --out DIR` writes NAME.html; bad
input is one line, exit 2."""
from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from extoll_vec.cli import main

from test_sweep_tables import sweep_store

# backpressure against the reference (none) over the mailbox, two seeds; with the model
# variant fifo16 the 64-slot mailbox deadlocks (test_sweep_dask), so the page has failed points
SPEC = """\
name: report-test
description: backpressure <b>vs</b> none & a deadlock, tiny alltoall
base: {example: tiny, variant: fifo16}
axes:
  protocol.name: [none, backpressure]
  slots: [64, 512]
repeat: 2
derived:
  protocol.mailbox_slots: "0 if protocol.name == 'none' else slots"
"""

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# appended to a copy of the page: once everything has loaded, each image's decoded size and the
# page's table rows become attributes of <body>, which --dump-dom then prints
PROBE = """<script>
window.addEventListener("load", () => {
  const imgs = [...document.images];
  document.body.setAttribute("data-images", imgs.map(i => i.naturalWidth + "x" + i.naturalHeight
                                                      + ":" + (i.complete ? 1 : 0)).join(" "));
  document.body.setAttribute("data-summary-rows",
                             document.querySelectorAll("#summary tbody tr").length);
  document.body.setAttribute("data-probed", "yes");
});
</script>"""


def browser() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no headless browser on this machine (Debian: apt-get install chromium; "
                ".ci/run installs it when it runs as root)")


def headless(page: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    """The browser on `page` (own profile: other browsers may run at the same time)."""
    cmd = [browser(), "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
           "--disable-extensions", f"--user-data-dir={tmp / 'profile'}",
           "--virtual-time-budget=10000", *args, page.as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


class _Page(HTMLParser):
    """What the page references and which tags it has."""

    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.refs += [v or "" for k, v in attrs if k in ("src", "href")]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    spec = d / "spec.yaml"
    spec.write_text(SPEC)
    store = d / "rt.zarr"
    # the failing points make the sweep exit 2; the store keeps the others
    assert main(["sweep", str(spec), "-o", str(store), "--workers", "1", "--quiet"]) == 2
    html = d / "page.html"
    assert main(["report", str(store), "-o", str(html)]) == 0
    return d, store, html


@pytest.mark.slow
def test_the_page_renders_its_tables_and_figures_in_a_browser(report, capsys):
    d, store, html = report
    text = html.read_text()
    parsed = _Page()
    parsed.feed(text)
    # self-contained: no script, stylesheet link or frame; every image inline
    assert not {"script", "link", "iframe", "object", "embed"} & set(parsed.tags)
    assert parsed.refs and all(r.startswith("data:image/png;base64,") for r in parsed.refs)
    assert "<b>vs</b>" not in text and "backpressure &lt;b&gt;vs&lt;/b&gt; none &amp;" in text

    probe = d / "probe.html"
    probe.write_text(text.replace("</body>", PROBE + "</body>"))
    run = headless(probe, d, "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    body = re.search(r"<body([^>]*)>", dom).group(1)
    assert 'data-probed="yes"' in body, body
    images = re.search(r'data-images="([^"]*)"', body).group(1).split()
    assert len(images) == 2                         # one figure per swept axis
    for img in images:                              # decoded: the PNG's own size, loaded
        size, loaded = img.split(":")
        w, h = map(int, size.split("x"))
        assert loaded == "1" and w >= 300 and h >= 200, images

    # the summary table as the browser read it: the completed points, as `sweep` prints them
    from extoll_vec.analysis.registry import compute
    table = compute("summary", store)
    assert f'data-summary-rows="{len(table.rows)}"' in body
    rows = re.findall(r'<tr data-point="(\d+)">(.*?)</tr>', dom.split('id="failed"')[0], re.S)
    assert [int(p) for p, _ in rows] == [r[0] for r in table.rows]
    first = re.findall(r"<td[^>]*>(.*?)</td>", rows[0][1])
    assert first == [table._text(v) for v in table.rows[0]]
    assert len(table.rows) == 6                    # 8 points, backpressure at 64 failed twice

    failed = re.search(r'<table id="failed">(.*?)</table>', dom, re.S).group(1)
    points = re.findall(r'<tr data-point="(\d+)">', failed)
    assert points == ["4", "5"] and failed.count("deadlock at cycle") == 2, failed
    assert "protocol.name=backpressure, slots=64, rep=0" in failed
    assert "rt.errors.log" in dom
    # the command that made the store, and where it ran
    cmd = re.search(r'<pre id="command">(.*?)</pre>', dom, re.S).group(1)
    assert f"sweep {spec_name(d)} -o {store} --workers 1 --quiet" in cmd, cmd
    assert "axis protocol.name" in dom and "8 on a 2 x 2 x 2 grid: 6 completed, 2 failed" in dom


def spec_name(d: Path) -> str:
    return str(d / "spec.yaml")


@pytest.mark.slow
def test_a_screenshot_shows_the_page(report):
    d, _, html = report
    shot = d / "shot.png"
    run = headless(html, d, f"--screenshot={shot}", "--window-size=1200,1600",
                   "--hide-scrollbars")
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    import matplotlib.image as mpimg
    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (1600, 1200)
    assert pixels[..., :3].std() > 0.05            # not a blank page


@pytest.mark.slow
def test_tables_out_writes_the_page_beside_the_csv(tmp_path, capsys):
    _, path = sweep_store(tmp_path, [0, 1, 2, 5])
    out = tmp_path / "o"
    assert main(["tables", "summary", "--from", str(path), "--out", str(out)]) == 0
    assert f"wrote {out / 'summary.html'}" in capsys.readouterr().out
    text = (out / "summary.html").read_text()
    assert (out / "summary.csv").is_file()
    assert text.count('<table id="target">') == 1 and text.count('<table id="summary">') == 1
    assert "Points not computed (12)" in text   # made up results: nothing failed, 12 to do
    assert "does not record the command" in text   # made from Python: the spec stands in


def test_bad_input_is_one_line(tmp_path, capsys):
    _, path = sweep_store(tmp_path, [0])
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "empty").mkdir()
    for argv, want in [
            (["report", str(tmp_path / "none.zarr")], "none.zarr: no such result store"),
            (["report", str(tmp_path / "file.txt")], "is not a zarr store (a file"),
            (["report", str(tmp_path / "empty")], "an empty directory, not a zarr store"),
            (["report", str(path), "-o", str(tmp_path / "file.txt" / "r.html")],
             "-o: "),
            (["report", str(path), "-o", str(tmp_path)], "-o: "),
            (["report", str(path), "-o", "/proc/no/r.html"], "-o: cannot write"),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err and want in err, (argv, err)
        assert "--from" not in err, err
    assert not (tmp_path / "s.html").exists()
    assert main(["report", str(path)]) == 0           # default: beside the store
    assert (tmp_path / "s.html").is_file()
