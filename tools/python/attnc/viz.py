"""Attention weights as an interactive page, after BertViz's head view.

    html = attnc.viz.head_view([layer0_weights, layer1_weights], tokens, "heads.html")

writes one self-contained HTML file (no network: the data, the style and the script are in
it). Queries on the left, keys on the right, a line from query i to key j per selected head,
as opaque as the weight; a menu picks the layer, the colour squares pick the heads (click:
toggle, double-click: only that one); hovering a query shows only its lines and colours the
keys by their weights. The page's state can also be given in its address
(`heads.html#layer=1&heads=0,1&hover=3`), which is how the tests drive it headless.

Weights come from a compiled kernel's `weights` output (outputs = [out, weights] in its spec)
or from the reference (`attnc-run --reference -o DIR` writes DIR/weights.npy): any array with
a NumPy view, torch tensors included; each layer [heads, seq_q, seq_kv] or [1, heads, seq_q,
seq_kv] (batch 0 of a call), or all layers at once [layers, heads, seq_q, seq_kv].
"""
from __future__ import annotations

import html as _html
import json
import os
from typing import Any, Sequence

import numpy as np


def _as_numpy(x):
    if type(x).__module__.split(".")[0] == "torch":
        return x.detach().float().cpu().numpy()
    x = np.asarray(x)
    return x if x.dtype.kind == "f" and x.itemsize >= 4 else x.astype(np.float32)


def _layers(weights):
    """[layers, heads, seq_q, seq_kv] float32 from what head_view takes."""
    if isinstance(weights, (list, tuple)):
        layers = [_as_numpy(w) for w in weights]
        layers = [w[0] if w.ndim == 4 and w.shape[0] == 1 else w for w in layers]
        bad = [i for i, w in enumerate(layers) if w.ndim != 3 or w.shape != layers[0].shape]
        if bad:
            raise ValueError("layer %d has shape %s; every layer must be [heads, seq_q, seq_kv] "
                             "(or [1, heads, seq_q, seq_kv]) like layer 0's %s"
                             % (bad[0], layers[bad[0]].shape, layers[0].shape))
        return np.stack(layers)
    w = _as_numpy(weights)
    if w.ndim == 3:
        return w[None]
    if w.ndim != 4:
        raise ValueError("weights of shape %s: expected [layers, heads, seq_q, seq_kv], one "
                         "layer [heads, seq_q, seq_kv], or a list of layers" % (w.shape,))
    return w


def head_view(weights: Any, tokens: Sequence[str], path: str | os.PathLike | None = None, *,
              key_tokens: Sequence[str] | None = None,
              layer_names: Sequence[str] | None = None, title: str = "attention weights") -> str:
    """The head view of `weights` over `tokens` (the queries'; `key_tokens` for the keys
    when they differ, as in cross-attention): the page's HTML, also written to `path`."""
    w = _layers(weights)
    key_tokens = list(tokens) if key_tokens is None else list(key_tokens)
    if w.shape[2] != len(tokens) or w.shape[3] != len(key_tokens):
        raise ValueError("weights are [%d, %d, %d, %d] (layers, heads, seq_q, seq_kv), but there "
                         "are %d query tokens and %d key tokens"
                         % (w.shape + (len(tokens), len(key_tokens))))
    names = list(layer_names) if layer_names else ["layer %d" % i for i in range(w.shape[0])]
    if len(names) != w.shape[0]:
        raise ValueError("%d layer names for %d layers" % (len(names), w.shape[0]))
    data = {"weights": w.astype(np.float64).tolist(), "queries": [str(t) for t in tokens],
            "keys": [str(t) for t in key_tokens], "layers": names}
    # "</" cannot end the script element the data sits in.
    text = _PAGE.replace("@TITLE@", _html.escape(title)).replace(
        "@DATA@", json.dumps(data).replace("</", "<\\/")).replace("@SCRIPT@", _SCRIPT)
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return text


_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>@TITLE@</title>
<style>
body { font: 14px sans-serif; margin: 16px; color: #222; }
#controls { margin-bottom: 8px; }
.head { display: inline-block; width: 18px; height: 18px; margin-left: 4px;
        vertical-align: middle; cursor: pointer; border: 2px solid #fff; }
.head.off { opacity: 0.2; }
text { cursor: default; }
</style></head>
<body>
<h3>@TITLE@</h3>
<div id="controls">Layer: <select id="layer"></select> Heads:<span id="heads"></span></div>
<svg id="view" xmlns="http://www.w3.org/2000/svg"></svg>
<p id="shown"></p>
<script id="data" type="application/json">@DATA@</script>
<script>@SCRIPT@</script>
</body></html>
"""

_SCRIPT = r"""
const data = JSON.parse(document.getElementById('data').textContent);
const nHeads = data.weights[0].length;
const colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
                '#7f7f7f', '#bcbd22', '#17becf'];
const color = h => colors[h % colors.length];
const state = {layer: 0, heads: [...Array(nHeads).keys()], hover: -1};
// The address may give the state: #layer=1&heads=0,2&hover=3.
for (const part of location.hash.slice(1).split('&').filter(p => p)) {
  const [key, value] = part.split('=');
  if (key === 'layer') state.layer = Number(value);
  if (key === 'heads') state.heads = value.split(',').filter(v => v !== '').map(Number);
  if (key === 'hover') state.hover = Number(value);
}
const svgNs = 'http://www.w3.org/2000/svg';
const rowH = 22, lineL = 150, lineR = 330, right = 340, topY = 10;

function element(name, attrs, parent) {
  const e = document.createElementNS(svgNs, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  parent.appendChild(e);
  return e;
}

function tokenColumn(svg, tokens, x, anchor, side) {
  tokens.forEach((t, i) => {
    const g = element('g', {'class': side, 'data-index': i}, svg);
    element('rect', {x: anchor === 'end' ? x - 130 : x - 2, y: topY + i * rowH, width: 132,
                     height: rowH - 2, fill: 'none'}, g);
    const label = element('text', {x: x, y: topY + i * rowH + 15, 'text-anchor': anchor}, g);
    label.textContent = t;
    if (side === 'query') {
      g.addEventListener('mouseenter', () => { state.hover = i; render(); });
      g.addEventListener('mouseleave', () => { state.hover = -1; render(); });
    }
  });
}

function render() {
  const svg = document.getElementById('view');
  svg.innerHTML = '';
  const rows = Math.max(data.queries.length, data.keys.length);
  svg.setAttribute('width', right + 150);
  svg.setAttribute('height', topY + rows * rowH + 10);
  const w = data.weights[state.layer];
  let shown = 0;
  const keyShade = data.keys.map(() => []);
  for (const h of state.heads) {
    data.queries.forEach((_, i) => {
      if (state.hover >= 0 && i !== state.hover) return;
      w[h][i].forEach((value, j) => {
        if (!(value > 0)) return;
        element('line', {x1: lineL, y1: topY + i * rowH + 10, x2: lineR, y2: topY + j * rowH + 10,
                         stroke: color(h), 'stroke-width': 2, 'stroke-opacity': value,
                         'data-h': h, 'data-q': i, 'data-k': j, 'data-w': String(value)}, svg);
        if (state.hover >= 0) keyShade[j].push([h, value]);
        shown++;
      });
    });
  }
  tokenColumn(svg, data.queries, lineL - 10, 'end', 'query');
  tokenColumn(svg, data.keys, right, 'start', 'key');
  if (state.hover >= 0) {  // the hovered query, and the keys coloured by its weights
    svg.querySelectorAll('g.query')[state.hover].firstChild.setAttribute('fill', '#ddd');
    const keys = svg.querySelectorAll('g.key');
    keyShade.forEach((shades, j) => shades.forEach(([h, value], n) => {
      element('rect', {x: right + 100 + 14 * n, y: topY + j * rowH + 3, width: 12, height: 14,
                       fill: color(h), 'fill-opacity': value}, keys[j]);
    }));
  }
  document.getElementById('shown').textContent =
      data.layers[state.layer] + ': ' + shown + ' lines (weight > 0)';
}

const layerMenu = document.getElementById('layer');
data.layers.forEach((name, i) => {
  const o = document.createElement('option');
  o.value = i;
  o.textContent = name;
  layerMenu.appendChild(o);
});
layerMenu.value = state.layer;
layerMenu.addEventListener('change', () => { state.layer = Number(layerMenu.value); render(); });
const headBox = document.getElementById('heads');
for (let h = 0; h < nHeads; h++) {
  const square = document.createElement('span');
  square.className = 'head' + (state.heads.includes(h) ? '' : ' off');
  square.style.background = color(h);
  square.title = 'head ' + h;
  square.addEventListener('click', () => {
    state.heads = state.heads.includes(h) ? state.heads.filter(x => x !== h)
                                          : [...state.heads, h].sort((a, b) => a - b);
    square.classList.toggle('off');
    render();
  });
  square.addEventListener('dblclick', () => {
    state.heads = [h];
    headBox.querySelectorAll('.head').forEach((s, i) => s.classList.toggle('off', i !== h));
    render();
  });
  headBox.appendChild(square);
}
render();
"""
