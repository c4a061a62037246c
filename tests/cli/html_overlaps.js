// SPDX-License-Identifier: Apache-2.0
// Injected by test_cli_html.sh into a copy of a `keyshift html` page (the
// page itself has no script): finds every text of every chart whose box
// overlaps another text's box, a bar, a dot, or the curves (the rank
// line and the cumulative share, sampled along their length), and every
// marker line painted over a hot key's dot (a line that crosses the dot
// and comes after it in the SVG). Counts, for each row of a topic's
// layout (div.row), how many lines its boxes were laid out on (`rows`:
// 1 = side by side). Writes the findings as JSON into
// <body data-overlaps>, read from --dump-dom.
(function () {
  var out = [], charts = 0, texts = 0, marks = 0;
  var EPS = 1; // px of slack: glyph boxes include the font's line gap
  function box(r) {
    return {l: r.left + EPS, r: r.right - EPS, t: r.top + EPS, b: r.bottom - EPS};
  }
  function hit(a, b) { return a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b; }
  function inside(p, a) { return p.x > a.l && p.x < a.r && p.y > a.t && p.y < a.b; }
  function name(t) { return JSON.stringify(t.textContent.trim().slice(0, 40)); }
  document.querySelectorAll('svg.ks-chart').forEach(function (svg) {
    charts++;
    var chart = (svg.getAttribute('class') || '') + ' ' +
                (svg.getAttribute('aria-label') || '');
    var ts = Array.prototype.filter.call(svg.querySelectorAll('text'), function (t) {
      var r = t.getBoundingClientRect();
      return t.textContent.trim() && r.width > 0 && r.height > 0;
    });
    texts += ts.length;
    var tb = ts.map(function (t) { return box(t.getBoundingClientRect()); });
    for (var i = 0; i < ts.length; i++)
      for (var j = i + 1; j < ts.length; j++)
        if (hit(tb[i], tb[j]))
          out.push(chart + ': text ' + name(ts[i]) + ' overlaps text ' + name(ts[j]));
    // bars and dots: their boxes (legend swatches are not plot marks)
    svg.querySelectorAll('rect.ks-bar, rect.ks-bar-in, circle.ks-hot-dot, circle.ks-cum-dot')
      .forEach(function (m) {
        var r = m.getBoundingClientRect();
        if (r.width <= 0 && r.height <= 0) return;
        marks++;
        var mb = {l: r.left, r: r.right, t: r.top, b: r.bottom};
        for (var i = 0; i < ts.length; i++)
          if (hit(tb[i], mb))
            out.push(chart + ': text ' + name(ts[i]) + ' overlaps ' +
                     m.getAttribute('class') + ' ' +
                     JSON.stringify((m.querySelector('title') || {}).textContent || ''));
      });
    // marker lines over hot-key dots: a line crossing a dot's box must
    // come before it (the dot is painted over the line)
    svg.querySelectorAll('line.ks-marker').forEach(function (ln) {
      var lr = ln.getBoundingClientRect();
      svg.querySelectorAll('circle.ks-hot-dot').forEach(function (d) {
        var dr = d.getBoundingClientRect(), x = (lr.left + lr.right) / 2;
        if (x > dr.left && x < dr.right && lr.top < dr.bottom && dr.top < lr.bottom &&
            (d.compareDocumentPosition(ln) & Node.DOCUMENT_POSITION_FOLLOWING))
          out.push(chart + ': a marker line is painted over the hot key dot ' +
                   JSON.stringify((d.querySelector('title') || {}).textContent || ''));
      });
    });
    // curves: points every 2 px along the path
    svg.querySelectorAll('path.ks-rank-line, path.ks-cum, polyline.ks-rank-line, polyline.ks-cum')
      .forEach(function (p) {
        var len = p.getTotalLength(), ctm = p.getScreenCTM(), seen = {};
        marks++;
        for (var s = 0; s <= len; s += 2) {
          var q = p.getPointAtLength(s).matrixTransform(ctm);
          for (var i = 0; i < ts.length; i++)
            if (!seen[i] && inside(q, tb[i])) {
              seen[i] = 1;
              out.push(chart + ': text ' + name(ts[i]) + ' overlaps the curve ' +
                       p.getAttribute('class'));
            }
        }
      });
  });
  var rows = Array.prototype.map.call(document.querySelectorAll('div.row'), function (row) {
    var tops = {};
    Array.prototype.forEach.call(row.children, function (c) {
      tops[Math.round(c.getBoundingClientRect().top)] = 1;
    });
    return Object.keys(tops).length;
  });
  document.body.setAttribute('data-overlaps', JSON.stringify(
    {charts: charts, texts: texts, marks: marks, overlaps: out, rows: rows}));
})();
