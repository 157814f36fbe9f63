{% raw %}
// synthprobe's item viewer, pairs: answers that name the item they are a variant of ("tw") are
// shown beside that item's answer by the same model. Text goes in through textContent only.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("items-data").textContent);
  var items = D.items, models = D.models, runs = D.runs, PAGE = 50;
  var $ = function (id) { return document.getElementById(id); };
  var keyIndex = new Map();
  items.forEach(function (it, i) { keyIndex.set(it.key, i); });
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  var pairs = [];
  runs.forEach(function (rows, m) {
    var byItem = new Map();
    rows.forEach(function (r) { byItem.set(r.i, r); });
    rows.forEach(function (r) {
      if (!r.tw) return;
      var oi = keyIndex.get(r.tw.of);
      var o = oi === undefined ? null : byItem.get(oi);
      if (o) pairs.push({m: m, o: o, t: r});
    });
  });
  function outcome(x) {
    return x.o.ok && x.t.ok ? "both right" : !x.o.ok && !x.t.ok ? "both wrong" : x.o.ok ? "right → wrong" : "wrong → right";
  }
  function mistake(r) {
    if (r.p < 0) return "no option picked";
    if (r.tw && r.tw.src) return r.tw.src;
    var it = items[r.i];
    return it.mistakes ? String(it.mistakes[r.p]) : "option " + (r.p + 1);
  }
  function fill(sel, values, first) {
    sel.textContent = "";
    sel.appendChild(new Option(first, ""));
    values.forEach(function (v) { sel.appendChild(new Option(v[1], v[0])); });
  }
  var ms = Array.from(new Set(pairs.map(function (x) { return x.m; }))).sort(function (a, b) { return a - b; });
  fill($("p-model"), ms.map(function (m) { return [String(m), models[m].name]; }), "every model");
  fill($("p-kind"), Array.from(new Set(pairs.map(function (x) { return x.t.tw.k; }))).sort().map(function (k) { return [k, k]; }), "any");
  fill($("p-outcome"), ["right → wrong", "wrong → right", "both right", "both wrong"].map(function (o) { return [o, o]; }), "any");
  var shown = PAGE, rows = [];

  function side(title, r) {
    var it = items[r.i], box = el("div");
    box.appendChild(el("h4", title + ": " + it.id + " " + (r.ok ? "✓" : "✗"), r.ok ? "ok" : "bad"));
    if (it.prompt !== null && it.prompt !== undefined) box.appendChild(el("pre", it.prompt));
    else box.appendChild(el("p", "The prompt is not in this report (its data file was not found).", "note"));
    var n = it.endings ? it.endings.length : (it.mistakes ? it.mistakes.length : 0);
    if (n) {
      var t = el("table"), head = document.createElement("tr");
      ["#", "Option", "Value", "Named mistake"].forEach(function (c) { head.appendChild(el("th", c, "l")); });
      var th = document.createElement("thead"); th.appendChild(head); t.appendChild(th);
      var tb = document.createElement("tbody");
      for (var e = 0; e < n; e++) {
        var tr = document.createElement("tr"), cls = "l" + (r.p === e ? " pick" : "");
        tr.appendChild(el("td", String(e + 1) + (e === it.label ? " ✓" : ""), cls));
        tr.appendChild(el("td", it.endings ? it.endings[e] : "—", cls));
        tr.appendChild(el("td", it.values ? it.values[e] : "—", cls));
        tr.appendChild(el("td", it.mistakes ? it.mistakes[e] : "—", cls));
        tb.appendChild(tr);
      }
      t.appendChild(tb);
      box.appendChild(t);
    }
    box.appendChild(el("p", "Pick: " + (r.p < 0 ? "none" : "option " + (r.p + 1)) + " · " + mistake(r), "note"));
    if (r.gen !== undefined) box.appendChild(el("pre", r.gen));
    return box;
  }

  function draw() {
    var list = $("p-list"), frag = document.createDocumentFragment();
    list.textContent = "";
    rows.slice(0, shown).forEach(function (x) {
      var d = el("details", null, "pair"), it = items[x.t.i];
      d.appendChild(el("summary", [models[x.m].name, x.t.tw.k, it.template || "—", "depth " + (items[x.o.i].depth === null ? "—" : items[x.o.i].depth),
        outcome(x), "twin's pick: " + mistake(x.t)].join(" · ")));
      var sides = el("div", null, "sides");
      sides.appendChild(side("Original", x.o));
      sides.appendChild(side("Twin (" + x.t.tw.k + ")", x.t));
      d.appendChild(sides);
      frag.appendChild(d);
    });
    list.appendChild(frag);
    $("p-count").textContent = rows.length ? "Showing " + Math.min(shown, rows.length) + " of " + rows.length + " pair" + (rows.length === 1 ? "" : "s") : "No pair matches.";
    $("p-more").hidden = shown >= rows.length;
  }
  function refresh() {
    var m = $("p-model").value, k = $("p-kind").value, o = $("p-outcome").value;
    rows = pairs.filter(function (x) {
      return (m === "" || String(x.m) === m) && (k === "" || x.t.tw.k === k) && (o === "" || outcome(x) === o);
    });
    var changed = rows.filter(function (x) { return x.o.ok !== x.t.ok; });
    rows = changed.concat(rows.filter(function (x) { return x.o.ok === x.t.ok; }));
    shown = PAGE;
    draw();
  }
  ["p-model", "p-kind", "p-outcome"].forEach(function (id) { $(id).addEventListener("change", refresh); });
  $("p-more").addEventListener("click", function () { shown += PAGE; draw(); });
  refresh();
})();
{% endraw %}
