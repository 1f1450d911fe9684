"""attnc.viz.head_view on a compiled kernel's weights, rendered by headless Chromium.

A causal 2-head kernel with outputs [out, weights], called twice (two "layers": inputs of
their own) on 8 tokens; the page of both layers is checked:
- self-contained: no script, style, image or font from a network address;
- what Chromium draws (--dump-dom after the page's script ran) equals the kernel's weights
  exactly: one line per (head, query, key) with weight > 0, its data-w the weight's value
  (the page's numbers are the kernel's float32 values, printed and parsed back exactly);
- the state in the address: layer 1; heads=1 draws head 1 alone; hover=5 draws query 5's
  lines alone;
- the same layer's weights from the reference evaluator (attnc-run --reference -o on the same
  inputs, float64) draw the same lines, within matrix.json's f32 tolerance (rtol 2e-5,
  atol 2e-6);
- a screenshot (900 x 500) of layer 1 with query 5 hovered, which shows both heads' colours.

Prints PASS / FAIL lines; exits non-zero on a failure.
"""
import argparse
import html.parser
import os
import re
import subprocess
import sys

import numpy as np

import attnc
import attnc.viz

SPEC = """
attn.kernel @causal {
  attn.attention {num_heads = 2, num_kv_heads = 2, head_dim = 16, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, max_seq = [8, 8], outputs = [out, weights]}
}
"""
TOKENS = ["the", "cat", "sat", "on", "the", "warm", "mat", "."]
HEAD_COLOURS = [(0x1f, 0x77, 0xb4), (0xff, 0x7f, 0x0e)]  # the page's first two
failures = 0


def check(name, ok, detail=""):
    global failures
    failures += not ok
    print("%s %-60s %s" % ("PASS" if ok else "FAIL", name, detail))


class Lines(html.parser.HTMLParser):
    """The <line> elements of a dumped DOM: {(head, query, key): weight}."""

    def __init__(self):
        super().__init__()
        self.lines = {}

    def handle_starttag(self, tag, attrs):
        if tag == "line":
            a = dict(attrs)
            self.lines[(int(a["data-h"]), int(a["data-q"]), int(a["data-k"]))] = float(a["data-w"])


def chromium(args, *flags):
    cmd = [args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-dev-shm-usage", "--user-data-dir=" + os.path.join(args.work, "profile")]
    done = subprocess.run(cmd + list(flags), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=120)
    if done.returncode:
        sys.exit("chromium failed (%d): %s" % (done.returncode, done.stderr[-2000:]))
    return done.stdout


def drawn(args, page, state):
    return lines_of(chromium(args, "--dump-dom", "file://%s#%s" % (page, state)))


def lines_of(dom):
    parser = Lines()
    parser.feed(dom)
    return parser.lines


def expected(weights, heads=(0, 1), query=None):
    return {(h, i, j): float(weights[h, i, j]) for h in heads for i in range(8) for j in range(8)
            if weights[h, i, j] > 0 and (query is None or i == query)}


def check_reference(args, page, inputs, kernel_weights):
    """The same layer's weights from the reference evaluator (attnc-run --reference -o on the
    same q, k, v) drawn: the kernel's lines, within matrix.json's f32 tolerance."""
    spec = os.path.join(args.work, "spec.mlir")
    with open(spec, "w") as f:
        f.write(SPEC)
    files = []
    for name, array in zip("qkv", inputs):
        files += ["-" + name, os.path.join(args.work, name + ".npy")]
        np.save(files[-1], array)
    out = os.path.join(args.work, "reference")
    attnc_run = os.path.join(os.path.dirname(args.attnc), "attnc-run")
    subprocess.run([attnc_run, spec, "--reference", "-o", out] + files, check=True,
                   stdout=subprocess.DEVNULL)
    weights = np.load(os.path.join(out, "weights.npy"))
    ref_page = os.path.join(args.work, "reference.html")
    attnc.viz.head_view(weights, TOKENS, ref_page)
    got, want = drawn(args, ref_page, "layer=0"), drawn(args, page, "layer=1")
    close = got.keys() == want.keys() and all(
        abs(got[key] - want[key]) <= 2e-6 + 2e-5 * abs(got[key]) for key in got)
    check("the reference's weights draw the kernel's lines (f32 tolerance)",
          close and len(got) == 72, "%d lines; max |kernel - reference| %.1e"
          % (len(got), max(abs(got[key] - want.get(key, 0)) for key in got)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc", required=True)
    parser.add_argument("--chromium", default="chromium")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    kernel = attnc.compile(SPEC, cache=os.path.join(args.work, "cache"), attnc=args.attnc).causal
    rng = np.random.default_rng(11)
    layers, inputs = [], []
    for _ in range(2):
        inputs.append([rng.standard_normal((1, 2, 8, 16), np.float32) for _ in range(3)])
        layers.append(kernel(*inputs[-1])[1])  # weights [1, 2, 8, 8]
    page = os.path.join(args.work, "heads.html")
    text = attnc.viz.head_view(layers, TOKENS, page, title="2 layers, 2 heads, 8 tokens")
    loads = re.findall(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:|//)|url\(|@import|fetch\(|"""
                       r"""XMLHttpRequest""", text)
    check("self-contained: nothing loaded from a network", not loads, str(loads))

    w1 = layers[1][0]
    got, want = drawn(args, page, "layer=1"), expected(w1)
    check("layer 1: the drawn lines are the kernel's weights > 0", got == want,
          "%d lines drawn, %d weights > 0" % (len(got), len(want)))
    check("causal: no line to a later key", all(j <= i for _, i, j in got))
    got = drawn(args, page, "layer=0&heads=1")
    check("heads=1: head 1's lines alone, layer 0", got == expected(layers[0][0], heads=(1,)),
          "%d lines" % len(got))
    got = drawn(args, page, "layer=1&hover=5")
    check("hover=5: query 5's lines alone, both heads", got == expected(w1, query=5),
          "%d lines" % len(got))

    check_reference(args, page, inputs[1], w1)

    png = os.path.join(args.work, "heads.png")
    chromium(args, "--screenshot=" + png, "--window-size=900,500", "--hide-scrollbars",
             "file://%s#layer=1&hover=5" % page)
    from PIL import Image
    image = np.asarray(Image.open(png).convert("RGB")).astype(int)
    seen = [int((np.abs(image - np.array(c)).sum(-1) < 40).sum()) for c in HEAD_COLOURS]
    check("screenshot 900 x 500 with both heads' colours", image.shape[:2] == (500, 900) and
          min(seen) > 50, "pixels of each head's colour: %s" % seen)
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
