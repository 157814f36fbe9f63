{% raw %}
// synthprobe's item viewer: reads the JSON above, filters and draws rows; text goes in through
// textContent only, so nothing from the data is ever parsed as markup.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("items-data").textContent);
  var PAGE = 200;
  var items = D.items, models = D.models, runs = D.runs;
  var byItem = runs.map(function (rows) {
    var m = new Map();
    rows.forEach(function (r) { m.set(r.i, r); });
    return m;
  });
  var $ = function (id) { return document.getElementById(id); };
  var shown = PAGE, rows = [], openKey = null;

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function uniq(values, numeric) {
    var s = Array.from(new Set(values.filter(function (v) { return v !== null && v !== undefined; })));
    return s.sort(numeric ? function (a, b) { return a - b; } : function (a, b) { return String(a).localeCompare(String(b)); });
  }
  function fill(sel, options, first) {
    sel.textContent = "";
    if (first) sel.appendChild(new Option(first[1], first[0]));
    options.forEach(function (o) {
      var pair = Array.isArray(o) ? o : [String(o), String(o)];
      sel.appendChild(new Option(pair[1], pair[0]));
    });
  }
  // what a generated answer that picks no option was, by its outcome (the scorer's words)
  var OUTCOME = {unparsed: "no answer parsed", inconsistent: "inconsistent: letter and value name different options",
    echo: "echo: repeats a number of the question", cut_off: "cut off before it stated an answer"};
  function mistakeOf(r) {
    var it = items[r.i];
    if (!it.mistakes) return "—";              // GPT-3 items name no mistakes
    if (r.p >= 0) return String(it.mistakes[r.p]);
    if (r.oc && OUTCOME[r.oc]) return OUTCOME[r.oc];
    // a value was read, but it is none of the options (a free answer off the list)
    if (r.parsed !== undefined && r.parsed !== null && r.rule !== "unparsed") return "value matches no option";
    return "no answer parsed";
  }
  function pickText(r) {
    var it = items[r.i];
    if (r.gen !== undefined && !it.endings) return r.gen.trim() || "(nothing generated)";
    if (r.p < 0) return "—";
    return it.endings ? it.endings[r.p].trim() : "ending " + (r.p + 1);
  }
  function pickKey(r) { return r.gen !== undefined && !items[r.i].endings ? "g:" + r.gen.trim() : "p:" + r.p; }
  function fmt(x) { return x === null || x === undefined ? "—" : x.toFixed(3); }

  // -- the controls --------------------------------------------------------------------------
  var allRows = [].concat.apply([], runs);
  var brokenValues = uniq(allRows.map(function (r) { return r.fb; }));
  fill($("f-a"), models.map(function (m, k) { return [String(k), m.name]; }), ["", "every model"]);
  fill($("f-b"), models.map(function (m, k) { return [String(k), m.name]; }), ["", "—"]);
  fill($("f-depth"), uniq(items.map(function (it) { return it.depth; }), true), ["", "any"]);
  fill($("f-template"), uniq(items.map(function (it) { return it.template; })), ["", "any"]);
  fill($("f-topic"), uniq(items.map(function (it) { return it.topic; })), ["", "any"]);
  fill($("f-mistake"), uniq(allRows.map(mistakeOf)).filter(function (m) { return m !== "—"; }), ["", "any"]);
  fill($("f-protocol"), uniq(allRows.map(function (r) { return r.pr; })), ["", "any"]);
  fill($("f-broken"), brokenValues, ["", "any"]);
  if (!brokenValues.length) $("f-broken").parentNode.hidden = true;
  if (models.length === 2) { $("f-a").value = "0"; $("f-b").value = "1"; }
  function outcomes() {
    var b = $("f-b").value !== "" && $("f-a").value !== "";
    var keep = $("f-outcome").value;
    fill($("f-outcome"), b ? [["correct", "A correct"], ["wrong", "A wrong"], ["disagree", "A and B pick differently"],
      ["agree", "A and B pick the same"], ["onlyA", "A right, B wrong"], ["onlyB", "A wrong, B right"]]
      : [["correct", "correct"], ["wrong", "wrong"]], ["", "any"]);
    if (Array.from($("f-outcome").options).some(function (o) { return o.value === keep; })) $("f-outcome").value = keep;
  }
  outcomes();
  D.notes.forEach(function (n) { $("notes").appendChild(el("p", n, "warn")); });

  // -- filtering -----------------------------------------------------------------------------
  function compute() {
    var a = $("f-a").value, b = $("f-b").value;
    var f = {depth: $("f-depth").value, template: $("f-template").value, topic: $("f-topic").value,
      outcome: $("f-outcome").value, mistake: $("f-mistake").value, protocol: $("f-protocol").value,
      broken: $("f-broken").value, text: $("f-text").value.trim().toLowerCase()};
    var ms = a === "" ? models.map(function (_, k) { return k; }) : [Number(a)];
    var bi = a === "" || b === "" ? -1 : Number(b);
    var out = [];
    if (a === "") {
      // every model: item order, then model order
      var order = items.map(function () { return []; });
      ms.forEach(function (m) { runs[m].forEach(function (r) { order[r.i].push([m, r]); }); });
      order.forEach(function (list) { list.forEach(function (x) { out.push({m: x[0], r: x[1], b: null}); }); });
    } else {
      runs[ms[0]].forEach(function (r) {
        var rb = bi >= 0 ? byItem[bi].get(r.i) : null;
        if (bi >= 0 && !rb) return;   // side by side: the items both scored
        out.push({m: ms[0], r: r, b: rb});
      });
    }
    out = out.filter(function (x) {
      var it = items[x.r.i], r = x.r;
      if (f.depth !== "" && String(it.depth) !== f.depth) return false;
      if (f.template !== "" && it.template !== f.template) return false;
      if (f.topic !== "" && it.topic !== f.topic) return false;
      if (f.protocol !== "" && r.pr !== f.protocol) return false;
      if (f.broken !== "" && r.fb !== f.broken) return false;
      if (f.mistake !== "" && mistakeOf(r) !== f.mistake) return false;
      if (f.outcome === "correct" && !r.ok) return false;
      if (f.outcome === "wrong" && r.ok) return false;
      if (x.b) {
        if (f.outcome === "disagree" && pickKey(r) === pickKey(x.b)) return false;
        if (f.outcome === "agree" && pickKey(r) !== pickKey(x.b)) return false;
        if (f.outcome === "onlyA" && !(r.ok && !x.b.ok)) return false;
        if (f.outcome === "onlyB" && !(!r.ok && x.b.ok)) return false;
      }
      if (f.text) {
        var hay = (it.id + "\n" + (it.prompt || "") + "\n" + (it.template || "")).toLowerCase();
        if (hay.indexOf(f.text) < 0) return false;
      }
      return true;
    });
    if (bi >= 0) {   // side by side: where the two pick differently first, file order otherwise
      var diff = out.filter(function (x) { return pickKey(x.r) !== pickKey(x.b); });
      out = diff.concat(out.filter(function (x) { return pickKey(x.r) === pickKey(x.b); }));
    }
    return out;
  }

  function header(side) {
    var tr = document.createElement("tr");
    var cols = ["Item", "Depth", "Template", "Topic", side ? "A" : "Model", "Pick", "Named mistake", ""];
    if (side) cols = cols.concat(["B pick", "B named mistake", ""]);
    cols.push("Models right");
    cols.forEach(function (c, k) { tr.appendChild(el("th", c, k < 7 ? "l" : "")); });
    $("head").textContent = "";
    $("head").appendChild(tr);
  }

  function rightCount(i) {
    var k = 0, n = 0;
    byItem.forEach(function (m) { var r = m.get(i); if (r) { n += 1; k += r.ok; } });
    return k + "/" + n;
  }

  function draw() {
    var side = rows.length && rows[0].b !== null || ($("f-b").value !== "" && $("f-a").value !== "");
    header(side);
    var body = $("rows"), frag = document.createDocumentFragment();
    body.textContent = "";
    rows.slice(0, shown).forEach(function (x, k) {
      var it = items[x.r.i], tr = document.createElement("tr");
      tr.dataset.row = String(k);
      tr.tabIndex = 0;
      if (it.key + "|" + x.m === openKey) tr.className = "open";
      [it.id, it.depth, it.template, it.topic, models[x.m].name, pickText(x.r), mistakeOf(x.r)].forEach(function (v) {
        tr.appendChild(el("td", v === null || v === undefined ? "—" : v, "l"));
      });
      tr.appendChild(el("td", x.r.ok ? "✓" : "✗", x.r.ok ? "ok" : "bad"));
      if (side) {
        tr.appendChild(el("td", x.b ? pickText(x.b) : "—", "l"));
        tr.appendChild(el("td", x.b ? mistakeOf(x.b) : "—", "l"));
        tr.appendChild(el("td", x.b ? (x.b.ok ? "✓" : "✗") : "", x.b && x.b.ok ? "ok" : "bad"));
      }
      tr.appendChild(el("td", rightCount(x.r.i)));
      frag.appendChild(tr);
    });
    body.appendChild(frag);
    var n = rows.length;
    $("count").textContent = n ? "Showing " + Math.min(shown, n) + " of " + n + " row" + (n === 1 ? "" : "s") +
      (side ? " (A and B pick differently on " + rows.filter(function (x) { return pickKey(x.r) !== pickKey(x.b); }).length + ")" : "")
      : "No row matches the filters.";
    $("more").hidden = shown >= n;
  }

  function refresh() { shown = PAGE; rows = compute(); draw(); }

  // -- one item, opened ----------------------------------------------------------------------
  function open(x) {
    var it = items[x.r.i], box = $("detail");
    openKey = it.key + "|" + x.m;
    box.textContent = "";
    var close = el("button", "Close", "");
    close.type = "button";
    close.id = "close";
    close.addEventListener("click", function () { box.close(); });
    box.appendChild(close);
    box.appendChild(el("h2", "Item " + it.id));
    var k = it.key.split(":");
    box.appendChild(el("p", (k[0] === "gpt3"
      ? ["task " + it.template, "family " + it.topic, "seed " + k[1], "format " + k[2], "numbers " + k[3],
         k[7] + " demonstration" + (k[7] === "1" ? "" : "s")]
      : ["depth " + (it.depth === null ? "—" : it.depth), "template " + (it.template || "—"),
         "topic " + (it.topic || "—"), "data " + k[0] + "…"]).join(" · "), "sub"));
    if (it.prompt !== null) box.appendChild(el("pre", it.prompt, "prompt"));
    else box.appendChild(el("p", "The prompt is not in this report (its data file was not found).", "note"));
    var shownModels = [x.m].concat(x.b ? [Number($("f-b").value)] : []);
    var t = el("table"), head = document.createElement("tr");
    ["#", "Ending", "Value", "Named mistake"].forEach(function (c) { head.appendChild(el("th", c, "l")); });
    shownModels.forEach(function (m, k) {
      var tag = shownModels.length > 1 ? (k ? " (B)" : " (A)") : "";
      head.appendChild(el("th", models[m].name + tag + ": log-lik.", ""));
      head.appendChild(el("th", "per token", ""));
    });
    var thead = document.createElement("thead"); thead.appendChild(head); t.appendChild(thead);
    var tb = document.createElement("tbody");
    var n = it.endings ? it.endings.length : (it.mistakes ? it.mistakes.length : (x.r.lp ? x.r.lp.length : 0));
    for (var e = 0; e < n; e++) {
      var tr = document.createElement("tr");
      if (e === it.label) tr.className = "answer";
      tr.appendChild(el("td", String(e + 1), "l"));
      tr.appendChild(el("td", it.endings ? it.endings[e] : "—", "l"));
      tr.appendChild(el("td", it.values ? it.values[e] : "—", "l"));
      tr.appendChild(el("td", it.mistakes ? it.mistakes[e] : "—", "l"));
      shownModels.forEach(function (m, k) {
        var r = byItem[m].get(x.r.i), pick = r && r.p === e ? (k ? " pickB" : " pickA") : "";
        tr.appendChild(el("td", r && r.lp ? fmt(r.lp[e]) : "—", "lp" + pick));
        tr.appendChild(el("td", r && r.pt ? fmt(r.pt[e]) : "—", "pt" + pick));
      });
      tb.appendChild(tr);
    }
    t.appendChild(tb);
    if (n) {
      box.appendChild(el("h3", "Endings"));
      box.appendChild(t);
      box.appendChild(el("p", "✓ answer marks the correct ending; the framed cells are " +
        (shownModels.length > 1 ? "A's pick, the underlined ones B's." : "the model's pick."), "note"));
    }
    if (it.gold !== undefined && it.gold !== null) {
      box.appendChild(el("h3", "Answer"));
      box.appendChild(el("pre", it.gold.trim(), "gold"));
      box.appendChild(el("p", "A generation is right when, stripped of surrounding white space, it equals " +
        "the answer (the parse below is that stripped text).", "note"));
    }
    var gens = models.map(function (_, m) { return byItem[m].get(x.r.i); }).filter(function (r) { return r && r.gen !== undefined; });
    var hasFb = models.some(function (_, m) { var r = byItem[m].get(x.r.i); return r && r.fb !== undefined; });
    box.appendChild(el("h3", "Every model's pick"));
    var p = el("table"), ph = document.createElement("tr");
    var cols = ["Model", "Protocol", "Pick", "Named mistake", ""].concat(hasFb ? ["First broken step"] : [])
      .concat(gens.length ? ["Generated", "Parsed", "Read by rule", "Outcome"] : []);
    cols.forEach(function (c) { ph.appendChild(el("th", c, "l")); });
    var pt = document.createElement("thead"); pt.appendChild(ph); p.appendChild(pt);
    var pb = document.createElement("tbody");
    models.forEach(function (mod, m) {
      var r = byItem[m].get(x.r.i);
      var tr = document.createElement("tr");
      tr.appendChild(el("td", mod.name, "l"));
      if (!r) {
        tr.appendChild(el("td", "not scored on this item", "l"));
      } else {
        tr.appendChild(el("td", r.pr, "l"));
        tr.appendChild(el("td", pickText(r), "l"));
        tr.appendChild(el("td", mistakeOf(r), "l"));
        tr.appendChild(el("td", r.ok ? "✓" : "✗", r.ok ? "ok" : "bad"));
        if (hasFb) tr.appendChild(el("td", r.fb === undefined ? "—" : r.fb, "l"));
        if (gens.length) {
          tr.appendChild(el("td", r.gen === undefined ? "—" : r.gen, "l"));
          tr.appendChild(el("td", r.parsed === undefined || r.parsed === null ? "—" : r.parsed, "l"));
          tr.appendChild(el("td", r.rule === undefined ? "—" : r.rule, "l"));
          tr.appendChild(el("td", r.oc === undefined ? "—" : r.oc.replace("_", " ") + (r.ocn ? " (" + r.ocn + ")" : ""), "l"));
        }
      }
      pb.appendChild(tr);
    });
    p.appendChild(pb);
    box.appendChild(p);
    Array.from($("rows").children).forEach(function (tr) {
      var y = rows[Number(tr.dataset.row)];
      tr.className = y && items[y.r.i].key + "|" + y.m === openKey ? "open" : "";
    });
    if (!box.open) box.showModal();
    box.scrollTop = 0;
  }

  $("rows").addEventListener("click", function (ev) {
    var tr = ev.target.closest("tr");
    if (tr && tr.dataset.row !== undefined) open(rows[Number(tr.dataset.row)]);
  });
  $("rows").addEventListener("keydown", function (ev) {
    var tr = ev.target.closest("tr");
    if (ev.key === "Enter" && tr && tr.dataset.row !== undefined) open(rows[Number(tr.dataset.row)]);
  });
  $("more").addEventListener("click", function () { shown += PAGE; draw(); });
  ["f-a", "f-b"].forEach(function (id) { $(id).addEventListener("change", function () { outcomes(); refresh(); }); });
  ["f-depth", "f-template", "f-topic", "f-outcome", "f-mistake", "f-protocol", "f-broken"].forEach(function (id) {
    $(id).addEventListener("change", refresh);
  });
  $("f-text").addEventListener("input", refresh);
  $("controls").addEventListener("reset", function () { setTimeout(function () { outcomes(); refresh(); }, 0); });
  refresh();
  document.body.dataset.ready = "1";
  window.viewerReadyMs = performance.now();
})();
{% endraw %}
