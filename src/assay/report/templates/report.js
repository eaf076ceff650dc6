// report.html's script: lazy data blocks, folded plots, the per-query table and the per-question explorer.
// Plain JavaScript; data is written with textContent and attributes only. Included inline by report.html.j2.
(function () {
  "use strict";
  var cache = {};
  var MAX_ROWS = 2000;

  // A lazy block: base64 of gzip-compressed JSON, decompressed by the browser once and kept.
  function load(id) {
    if (!cache[id]) {
      var node = document.getElementById(id);
      var bytes = Uint8Array.from(atob(node.textContent.trim()), function (c) { return c.charCodeAt(0); });
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      cache[id] = new Response(stream).json();
    }
    return cache[id];
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function fixed(value) { return typeof value === "number" ? value.toFixed(3) : "unscored (" + value + ")"; }

  // -- folded plots ------------------------------------------------------------------------------------------------
  Array.prototype.forEach.call(document.querySelectorAll("details.lazy-plot"), function (box) {
    box.addEventListener("toggle", function () {
      var slot = box.querySelector(".lazy-slot");
      if (!box.open || slot.childElementCount) { return; }
      load("data-lazy").then(function (plots) {
        // matplotlib's SVG, escaped when it was drawn (see assay.report.plots)
        slot.innerHTML = plots[box.getAttribute("data-key")];
      });
    });
  });

  // -- the per-query table -----------------------------------------------------------------------------------------
  var table = document.getElementById("q-table");
  if (table) {
    var state = {data: null, order: null, col: -1, ascending: true, needle: ""};
    var headRow = table.tHead.rows[0];
    var body = table.tBodies[0];
    var filter = document.getElementById("q-filter");
    var count = document.getElementById("q-count");

    var key = function (row, col, numeric) {
      var v = row[col];
      if (!numeric) { return String(v); }
      return typeof v === "number" ? v : null;
    };

    var draw = function () {
      var columns = state.data.columns;
      var needle = state.needle;
      var shown = state.order.filter(function (row) {
        return needle === "" || row.join(" ").toLowerCase().indexOf(needle) !== -1;
      });
      var rows = document.createDocumentFragment();
      shown.slice(0, MAX_ROWS).forEach(function (row) {
        var tr = document.createElement("tr");
        row.forEach(function (v, i) {
          var td = el("td");
          if (columns[i][1]) {
            td.className = "num";
            if (typeof v === "number") { td.textContent = v.toFixed(3); td.setAttribute("data-v", String(v)); }
            else { td.textContent = "unscored"; td.title = v; td.className = "num unscored"; td.setAttribute("data-v", ""); }
          } else { td.textContent = v; td.setAttribute("data-v", v); }
          tr.appendChild(td);
        });
        rows.appendChild(tr);
      });
      body.replaceChildren(rows);
      var total = state.data.rows.length;
      var text = shown.length === total ? total + " rows" : shown.length + " of " + total + " rows";
      count.textContent = shown.length > MAX_ROWS ? text + " (the first " + MAX_ROWS + " shown; filter to narrow)" : text;
    };

    var sortBy = function (col) {
      var numeric = state.data.columns[col][1];
      state.ascending = state.col === col ? !state.ascending : true;
      state.col = col;
      var ascending = state.ascending;
      state.order = state.data.rows.slice().sort(function (a, b) {
        var x = key(a, col, numeric), y = key(b, col, numeric);
        if (x === null || y === null) { return (x === null) - (y === null); }
        var order = numeric ? x - y : x.localeCompare(y, undefined, {numeric: true});
        return ascending ? order : -order;
      });
      Array.prototype.forEach.call(headRow.cells, function (th, i) {
        th.setAttribute("aria-sort", i === col ? (ascending ? "ascending" : "descending") : "none");
      });
      draw();
    };

    var build = function () { return load("data-queries").then(function (data) {
      state.data = data;
      state.order = data.rows;
      data.columns.forEach(function (column, i) {
        var th = el("th", column[1] ? "num" : "", column[0]);
        if (column[1]) { th.setAttribute("data-numeric", "1"); }
        th.setAttribute("aria-sort", "none");
        th.addEventListener("click", function () { sortBy(i); });
        headRow.appendChild(th);
      });
      draw();
      table.setAttribute("data-ready", "1");
      return data;
    }); };
    // A small table is built at once; a large one when the reader asks for it or types a filter.
    var size = document.getElementById("data-queries").textContent.length;
    var built = null;
    var once = function () { built = built || build(); return built; };
    if (size < 2000000) { once(); }
    else {
      var button = el("button", "", "Show the table");
      button.addEventListener("click", function () { button.remove(); once(); });
      count.after(button);
    }
    filter.addEventListener("focus", once);
    filter.addEventListener("input", function () {
      state.needle = filter.value.trim().toLowerCase();
      if (state.data) { draw(); }
    });
  }

  // -- the per-question explorer ------------------------------------------------------------------------------------
  var pick = document.getElementById("x-pick");
  if (!pick) { return; }
  var search = document.getElementById("x-search");
  var view = document.getElementById("x-view");
  var HOW = {chunk: "golden chunk label", rule: "carried over from labelled spans", stored: "judged before",
             judged: "judged now", unlabelled: "unlabelled"};
  var AUDITABLE = {chunk: true, stored: true, judged: true};
  var explorer = null;

  function auditLink(qid, unit) {
    var a = el("a", "", "audit");
    a.href = "http://127.0.0.1:8765/#q=" + encodeURIComponent(qid) + "&c=" + encodeURIComponent(unit);
    a.title = document.getElementById("explorer").getAttribute("data-audit");
    a.target = "_blank";
    a.rel = "noopener";
    return a;
  }

  function metricLine(side, names) {
    return names.filter(function (m) { return m in side.m; }).map(function (m) {
      return m + " " + fixed(side.m[m]);
    }).join(" · ");
  }

  function passages(side, qid, texts) {
    return passageTable(side.p, qid, texts);
  }

  function stepLine(s) {
    if (s.k === "retrieval") {
      var recall = s.r === null ? "recall unscored" : "recall after it " + s.r.toFixed(3);
      return "search: " + (s.q === null ? "(no query)" : "\u201c" + s.q + "\u201d") + " \u2014 " + recall +
        ", " + s.add + " relevant characters new, " + s.lost + " not in the final context";
    }
    if (s.k === "tool") {
      return "tool call: " + s.name + "(" + s.args + ")" + (s.err ? " \u2014 error: " + s.err : s.out === null ? "" : " \u2192 " + s.out);
    }
    return "model call" + (s.model ? " " + s.model : "") + (s.tokens === null ? "" : ": " + s.tokens + " tokens");
  }

  function trajectory(side, qid, texts) {
    var box = el("div", "x-steps");
    box.appendChild(el("h4", "", "Steps"));
    var list = box.appendChild(el("ol", "x-step-list"));
    side.s.forEach(function (s) {
      var li = list.appendChild(el("li", "x-step"));
      li.setAttribute("data-kind", s.k);
      li.value = s.n;
      li.appendChild(el("p", "", stepLine(s)));
      if (s.k === "retrieval" && s.p.length) {
        var details = li.appendChild(el("details"));
        details.appendChild(el("summary", "", s.p.length + " passage(s)"));
        details.appendChild(passageTable(s.p, qid, texts));
      }
    });
    if (side.h.length) {
      var hops = box.appendChild(el("ul", "x-hops"));
      side.h.forEach(function (h, i) {
        hops.appendChild(el("li", "", "hop " + (i + 1) + " (" + h[0] + "): " + (h[1] === null ? "never found" : "found by step " + h[1])));
      });
    }
    if (side.t && side.t.length) {
      var calls = box.appendChild(el("ul", "x-references"));
      side.t.forEach(function (t) {
        calls.appendChild(el("li", "", "reference tool call " + t[0] + ": " + (t[1] ? "made" : "not made as given")));
      });
    }
    side.d.forEach(function (line) { box.appendChild(el("p", "unscored", line)); });
    return box;
  }

  function passageTable(rows, qid, texts) {
    var t = el("table", "x-passages");
    var head = el("tr");
    ["rank", "grade", "how it got it", "passage", ""].forEach(function (h) { head.appendChild(el("th", "", h)); });
    t.appendChild(el("thead")).appendChild(head);
    var tbody = t.appendChild(el("tbody"));
    rows.forEach(function (p) {
      var tr = el("tr", "x-passage");
      tr.setAttribute("data-grade", p[3] === null ? "" : String(p[3]));
      tr.setAttribute("data-how", p[4]);
      tr.appendChild(el("td", "num", p[0]));
      tr.appendChild(el("td", "grade g" + p[3], p[3] === null ? "—" : p[3]));
      tr.appendChild(el("td", "", HOW[p[4]] || p[4]));
      var text = texts[p[2]];
      var cell = el("td", "text");
      var unit = el("code", "", p[1]);
      cell.appendChild(unit);
      var details = el("details");
      details.appendChild(el("summary", "", text.length > 160 ? text.slice(0, 160) + "…" : text));
      if (text.length > 160) { details.appendChild(el("p", "", text)); }
      cell.appendChild(details);
      tr.appendChild(cell);
      var link = el("td");
      if (AUDITABLE[p[4]] && p[3] !== null) { link.appendChild(auditLink(qid, p[1])); }
      tr.appendChild(link);
      tbody.appendChild(tr);
    });
    return t;
  }

  function claims(side) {
    var list = el("ul", "x-claims");
    side.c.forEach(function (c) {
      var where = c[4].length ? " (passages " + c[4].join(", ") + ")" : "";
      var li = el("li", "", (c[0] === "answer" ? "answer claim: " : "reference claim: ") + c[1] + " — " + c[2] + where);
      if (c[3]) { li.title = c[3]; }
      list.appendChild(li);
    });
    return list;
  }

  function show(index) {
    return Promise.all([load("data-q" + index), load("data-texts")]).then(function (got) {
      render(got[0], got[1]);
      view.setAttribute("data-ready", "1");
    });
  }

  function render(q, texts) {
    view.replaceChildren();
    var box = view.appendChild(el("div", "x-question"));
    box.setAttribute("data-query", q.id);
    box.appendChild(el("h3", "", q.text));
    box.appendChild(el("p", "note", [q.id, q.type, q.difficulty].filter(Boolean).join(" · ")));
    box.appendChild(el("p", "", "Reference answer: " + (q.ref || "(none)")));
    if (q.nuggets.length) {
      var nuggets = box.appendChild(el("ul"));
      q.nuggets.forEach(function (n) { nuggets.appendChild(el("li", "", n[0] + ": " + n[1])); });
    }
    var grid = view.appendChild(el("div", "x-runs"));
    q.runs.forEach(function (side) {
      var card = grid.appendChild(el("div", "x-run"));
      card.setAttribute("data-run", side.run);
      card.appendChild(el("h3", "", side.run));
      card.appendChild(el("p", "note", metricLine(side, explorer.metrics)));
      if (side.e) { card.appendChild(el("p", "unscored", "The system failed: " + side.e)); }
      if (side.s && side.s.length) { card.appendChild(trajectory(side, q.id, texts)); }
      card.appendChild(passages(side, q.id, texts));
      card.appendChild(el("h4", "", "Answer"));
      card.appendChild(el("p", "x-answer", side.a || "(no answer)"));
      if (side.c.length) { card.appendChild(claims(side)); }
      var diagnosis = metricLine(side, explorer.diagnosis);
      if (diagnosis) { card.appendChild(el("p", "note", "Diagnosis: " + diagnosis)); }
      var mine = (q.k || []).filter(function (v) { return v[0] === side.run; });
      if (mine.length) { card.appendChild(criteria(mine)); }
    });
    if (q.pw && q.pw.length) { view.appendChild(pairwise(q.pw)); }
  }

  function criteria(verdicts) {
    var box = el("div", "x-criteria");
    box.appendChild(el("h4", "", "Criteria"));
    var list = box.appendChild(el("ul"));
    verdicts.forEach(function (v) {
      var head = v[2] ? v[1] + ": " + v[2] + " (" + v[3] + ")" : v[1] + ": unscored (" + v[4] + ")";
      var item = list.appendChild(el("li", "", head));
      item.setAttribute("data-criterion", v[1]);
      v[5].forEach(function (vote) {
        var said = vote[0] + " said " + (vote[1] || "nothing usable" + (vote[4] ? " (" + vote[4] + ")" : ""));
        item.appendChild(el("p", "note", said + (vote[2] ? ": " + vote[2] : "")));
        if (vote[3].length) {
          var walk = item.appendChild(el("ol", "x-walk"));
          vote[3].forEach(function (s) { walk.appendChild(el("li", "", s[1] + " " + s[2] + " (" + s[3] + ")")); });
        }
      });
    });
    return box;
  }

  function pairwise(pairs) {
    var box = el("div", "x-pairwise");
    box.appendChild(el("h3", "", "Pairwise, both orders"));
    pairs.forEach(function (pair) {
      var outcome = pair[2] ? (pair[2] === "tie" ? "tie" : pair[2] + " preferred") : "unscored (" + pair[3] + ")";
      var row = box.appendChild(el("div", "x-pair"));
      row.setAttribute("data-pair", pair[0] + " vs " + pair[1]);
      row.appendChild(el("h4", "", pair[0] + " vs " + pair[1] + ": " + outcome));
      var sides = row.appendChild(el("div", "x-runs"));
      pair[4].forEach(function (order) {
        var card = sides.appendChild(el("div", "x-run x-order"));
        card.appendChild(el("p", "note", order[0] + " shown as A"));
        var said = order[1] ? "preferred " + order[1] + (order[2] !== "tie" ? " (" + order[2] + ")" : "")
          : "unscored (" + order[4] + ")";
        card.appendChild(el("p", "", said));
        if (order[3]) { card.appendChild(el("p", "x-answer", order[3])); }
      });
    });
    return box;
  }

  function listQuestions() {
    var needle = search.value.trim().toLowerCase();
    pick.replaceChildren();
    var shown = 0;
    explorer.questions.forEach(function (q, i) {
      if (needle && (q[0] + " " + q[1]).toLowerCase().indexOf(needle) === -1) { return; }
      var option = el("option", "", q[0] + " · " + q[1]);
      option.value = String(i);
      pick.appendChild(option);
      shown++;
    });
    document.getElementById("x-count").textContent = shown + " of " + explorer.questions.length + " questions";
    view.removeAttribute("data-ready");
    if (shown) { pick.selectedIndex = 0; return show(Number(pick.value)); }
    view.replaceChildren();
    return null;
  }

  var started = false;
  function start() {
    if (started) { return; }
    started = true;
    load("data-explorer").then(function (index) {
      explorer = index;
      listQuestions();
    });
  }
  // Loaded on first use: when the section comes near the screen, or the reader types or picks.
  if ("IntersectionObserver" in window) {
    new IntersectionObserver(function (entries, observer) {
      if (entries.some(function (e) { return e.isIntersecting; })) { observer.disconnect(); start(); }
    }, {rootMargin: "400px"}).observe(document.getElementById("explorer"));
  }
  search.addEventListener("focus", start);
  pick.addEventListener("focus", start);
  search.addEventListener("input", function () { if (explorer) { listQuestions(); } });
  pick.addEventListener("change", function () {
    if (pick.value !== "") { view.removeAttribute("data-ready"); show(Number(pick.value)); }
  });
})();
