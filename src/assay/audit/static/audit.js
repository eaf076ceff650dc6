// assay audit page: plain JavaScript, no framework. Every piece of data is written with textContent, never as HTML.
"use strict";

(() => {
  const { annotator, $, setText, el, status, request } = window.assayPage;
  const enqueue = window.assayPage.queue();
  const blind = document.body.dataset.blind === "true";
  let queue = [];
  let pos = 0;
  let item = null;
  let quotes = [];  // the quotes shown: {text, start, end}, offsets into item.text; saved with the grade

  function showProgress(progress) {
    const grades = Object.entries(progress.per_grade).map(([g, n]) => g + ": " + n).join(" · ");
    setText($("progress"), progress.done + " / " + progress.total + " done  (" + grades + ")");
  }

  function gradeBadge(grade) {
    const badge = el("span", "grade-badge" + (grade === null ? " unscored" : ""), grade === null ? "unscored" : grade);
    return badge;
  }

  function renderJudge(data) {
    const box = $("judge");
    box.replaceChildren();
    if (data.judge_hidden) {
      box.append(el("p", "muted", "Blind mode: the judge's grade shows once you have graded this item."));
      return;
    }
    if (data.judges.length === 0) box.append(el("p", "muted", "No judge label."));
    for (const judge of data.judges) {
      const row = el("div", "row");
      const head = el("div");
      head.append(gradeBadge(judge.grade), el("span", "prompt", [judge.annotator, judge.prompt].filter(Boolean).join(" · ")));
      row.append(head, el("p", "", judge.reason || ""));
      box.append(row);
    }
  }

  // A span label: the passage's span marked inside its document's text, with the text around it (a search result).
  function renderSpan(span) {
    const box = $("chunk");
    box.replaceChildren();
    $("span-note").hidden = !span.note;
    setText($("span-note"), span.note);
    $("run-text").hidden = !span.run_text;
    setText($("run-text"), span.run_text ? "The run's own text (matched approximately): " + span.run_text : "");
    if (!span.located) {
      $("span-head").hidden = true;
      box.append(marked(el("span"), span.text));
      return;
    }
    const where = "characters " + span.start + "–" + span.end + (span.match ? " (" + span.match + " match)" : "");
    setText($("span-head"), [span.doc_title, span.doc_id, where].filter(Boolean).join(" · "));
    $("span-head").hidden = false;
    const mark = marked(el("mark", "span"), span.text);
    box.append(el("span", "context", (span.cut_before ? "… " : "") + span.before), mark,
      el("span", "context", span.after + (span.cut_after ? " …" : "")));
    box.scrollTop = Math.max(0, mark.offsetTop - box.offsetTop - 40);
  }

  // The text under review with each shown quote wrapped in <mark class="quote">; the server gives the places
  // (character offsets into item.text), overlapping ones are merged. Text nodes only: the text is untrusted data.
  function marked(node, text) {
    const places = quotes.filter((q) => q.start !== null).map((q) => [q.start, q.end]).sort((a, b) => a[0] - b[0]);
    const merged = [];
    for (const [start, end] of places) {
      const last = merged[merged.length - 1];
      if (last && start <= last[1]) last[1] = Math.max(last[1], end);
      else merged.push([start, end]);
    }
    let at = 0;
    for (const [start, end] of merged) {
      node.append(document.createTextNode(text.slice(at, start)), el("mark", "quote", text.slice(start, end)));
      at = end;
    }
    node.append(document.createTextNode(text.slice(at)));
    return node;
  }

  // The quotes shown: the annotator's own once they saved a label, before that the judge's (those that stand in the
  // text shown; none in blind mode). They are saved with the grade; once graded 1-3, every edit saves at once.
  function startQuotes(data) {
    const judge = data.judges.length > 0 ? data.judges[0] : null;
    const source = data.mine ? data.mine.quotes : (judge && !data.judge_hidden ? judge.quotes : []);
    quotes = source.filter((q) => q.start !== null);
  }

  function renderText() {
    if (item.kind === "span") renderSpan(item.span);
    else {
      for (const id of ["span-head", "span-note", "run-text"]) $(id).hidden = true;
      $("chunk").replaceChildren();
      if (item.text !== null) marked($("chunk"), item.text);
    }
  }

  function renderQuotes() {
    $("quotes-box").hidden = item.text === null;
    const whose = item.mine && item.mine.grade === 0 ? "none: a grade 0 quotes nothing (grade 1-3 to quote)" :
      item.mine ? "yours: every change is saved at once" :
      quotes.length > 0 ? "the judge's: saved with your grade 1-3 as shown here (a grade 0 saves none)" :
      "none yet: select words in the text and press q, or type them below";
    setText($("quotes-whose"), whose);
    const list = $("quotes");
    list.replaceChildren();
    quotes.forEach((quote, index) => {
      const remove = el("button", "remove", "×");
      remove.type = "button";
      remove.title = "remove this quote";
      remove.addEventListener("click", () => enqueue(() => removeQuote(index)));
      const row = el("li");
      row.append(el("span", "", quote.text), remove);
      list.append(row);
    });
  }

  async function saveQuotes(message) {
    const body = { i: item.i, grade: item.mine.grade, quotes: quotes.map((q) => q.text) };
    if (item.mine.reason) body.reason = item.mine.reason;
    try {
      const data = await request("/api/label", body);
      showProgress(data.progress);
      renderItem(data.item);
      status(message);
      return true;
    } catch (err) { renderItem(item); status(err.message, true); return false; }
  }

  // A quote checked by the server (its place in the text, or a 400 that says it is not in the passage), then shown,
  // and saved at once when the item is graded 1-3. True when the quote was taken.
  async function addQuote(text) {
    if (!item || !text.trim()) { status("Select words in the text (or type them), then quote them.", true); return false; }
    if (item.mine && item.mine.grade === 0) { status("Grade 0 quotes nothing: grade the text 1-3 first.", true); return false; }
    try {
      quotes.push(await request("/api/quote?i=" + item.i + "&text=" + encodeURIComponent(text)));
    } catch (err) { status(err.message, true); return false; }
    if (item.mine) return saveQuotes("Saved the quote.");
    renderText();
    renderQuotes();
    status("Quote kept: it is saved with your grade (1-3).");
    return true;
  }

  async function removeQuote(index) {
    quotes.splice(index, 1);
    if (item.mine) { await saveQuotes("Removed the quote."); return; }
    renderText();
    renderQuotes();
  }

  function quoteSelection() {
    const selection = window.getSelection();
    const inside = selection && selection.rangeCount > 0 && $("chunk").contains(selection.getRangeAt(0).commonAncestorContainer);
    return addQuote(inside ? selection.toString() : "");
  }

  // A conversation turn: the earlier turns (utterance, rewrite, reference answer; context turns marked), this turn
  // as typed, its rewrite.
  function renderTurn(turn, stale) {
    $("turn").hidden = !turn;
    $("stale").hidden = !stale;
    if (!turn) return;
    setText($("turn-meta"), turn.conversation_id + " · turn " + turn.turn + " of " + turn.turns +
      (turn.depends_on_history ? " · depends on the history (" + turn.dependency + ")" : " · standalone"));
    const list = $("history");
    list.replaceChildren();
    for (const earlier of turn.history) {
      const row = el("li", earlier.judged === false ? "context" : "");
      row.append(el("div", "", earlier.utterance), el("div", "muted", "rewrite: " + (earlier.rewrite || "")),
        el("div", "answer", "reference answer: " + (earlier.reference_answer || "(none)")));
      if (earlier.judged === false) row.append(el("div", "muted", "context turn: not judged, not scored"));
      list.append(row);
    }
    setText($("utterance"), turn.utterance);
    setText($("rewrite"), turn.rewrite);
    setText($("rewrite-source"), turn.rewrite_source === "human" ? "(corrected by " + turn.rewrite_annotator + ")" : "");
  }

  function renderItem(data) {
    item = data;
    setText($("position"), "Item " + (data.i + 1) + " of " + queue.length);
    setText($("question"), data.question);
    setText($("question-meta"), [data.question_type, data.difficulty].filter(Boolean).join(" · "));
    setText($("reference"), data.reference_answer || "(none)");
    var calls = $("tool-calls");
    calls.replaceChildren();
    (data.tool_calls || []).forEach(function (call) { calls.appendChild(el("li", "", call)); });
    $("tool-calls-box").hidden = !(data.tool_calls || []).length;
    setText($("chunk-id"), data.chunk_id);
    setText($("heading-path"), (data.heading_path || []).join(" › "));
    setText($("item-kind"), data.kind === "span" ? "Span" : "Chunk");
    startQuotes(data);
    renderText();
    renderQuotes();
    renderTurn(data.turn, data.stale);
    renderJudge(data);
    const mine = data.mine;
    for (const button of document.querySelectorAll("#grades button")) {
      button.classList.toggle("chosen", mine !== null && String(mine.grade) === button.dataset.grade);
    }
    setText($("mine"), mine ? "Your grade: " + mine.grade + (mine.reason ? " — " + mine.reason : "") : "Not graded yet.");
    const others = data.others.map((o) => o.annotator + ": " + o.grade).join(" · ");
    setText($("others"), others ? "Others: " + others : "");
  }

  async function show(index) {
    if (queue.length === 0) { status("Nothing to audit: the golden set has no judge labels."); return; }
    pos = Math.max(0, Math.min(queue.length - 1, index));
    try {
      renderItem(await request("/api/item?i=" + pos));
    } catch (err) { status(err.message, true); }
  }

  // A link to one label: #q=QUERY_ID&c=CHUNK_OR_PASSAGE_ID (the report's per-question explorer writes them).
  function linked() {
    const wanted = new URLSearchParams(location.hash.slice(1));
    if (!wanted.has("q") || !wanted.has("c")) return null;
    const index = queue.findIndex((row) => row.query_id === wanted.get("q") && row.chunk_id === wanted.get("c"));
    if (index === -1) status("The label " + wanted.get("q") + " · " + wanted.get("c") + " is not in this queue (only judge labels are).", true);
    return index === -1 ? null : index;
  }

  async function loadQueue() {
    const data = await request("/api/queue");
    queue = data.items;
    showProgress(data.progress);
    const firstOpen = queue.findIndex((row) => row.grade === null);
    const wanted = linked();
    await show(wanted !== null ? wanted : firstOpen === -1 ? 0 : firstOpen);
  }

  async function label(payload, reason) {
    if (!item) return;
    const body = Object.assign({ i: item.i }, payload);
    const judge = item.judges.length > 0 ? item.judges[0] : null;
    const grade = payload.accept_judge ? (judge ? judge.grade : null) : payload.grade;
    body.quotes = grade === 0 ? [] : quotes.map((q) => q.text);  // the quotes shown; grade 0 quotes nothing
    const text = reason !== undefined ? reason : (item.mine && item.mine.reason) || null;
    if (text) body.reason = text;
    try {
      const data = await request("/api/label", body);
      queue[item.i].grade = data.item.mine ? data.item.mine.grade : null;
      showProgress(data.progress);
      status("Saved grade " + data.item.mine.grade + " for item " + (item.i + 1) + ".");
      if (blind || reason !== undefined) renderItem(data.item);
      else await show(item.i + 1 < queue.length ? item.i + 1 : item.i);
    } catch (err) { status(err.message, true); }
  }

  async function undo() {
    try {
      const data = await request("/api/undo", {});
      showProgress(data.progress);
      if (!data.undone) { status("Nothing to undo."); return; }
      const fresh = await request("/api/queue");
      queue = fresh.items;
      status("Undone.");
      await show(data.i === null ? pos : data.i);
    } catch (err) { status(err.message, true); }
  }

  function openReason() {
    if (!item) return;
    if (!item.mine) { status("Grade the item first (0-3), then add a reason with r.", true); return; }
    $("reason-box").hidden = false;
    $("reason").value = item.mine.reason || "";
    $("reason").focus();
  }

  function closeReason() {
    $("reason-box").hidden = true;
    $("reason").blur();
  }

  function openRewrite() {
    if (!item) return;
    if (!item.turn) { status("This question is not a conversation turn: it has no rewrite to correct.", true); return; }
    $("rewrite-box").hidden = false;
    $("rewrite-text").value = item.turn.rewrite || "";
    $("rewrite-reason").value = "";
    $("rewrite-text").focus();
  }

  function closeRewrite() {
    $("rewrite-box").hidden = true;
    document.activeElement.blur();
  }

  async function saveRewrite(text, reason) {
    const body = { i: item.i, text };
    if (reason) body.reason = reason;
    try {
      const data = await request("/api/rewrite", body);
      queue[item.i].stale = data.item.stale;
      renderItem(data.item);
      status("Saved the rewrite of " + data.item.query_id + "; its labels are now stale until graded again.");
    } catch (err) { status(err.message, true); }
  }

  async function showAdjudication(visible) {
    $("adjudication").hidden = !visible;
    $("review").hidden = visible;
    if (!visible) return;
    const data = await request("/api/adjudication");
    const body = document.querySelector("#adjudication-table tbody");
    body.replaceChildren();
    $("adjudication-empty").hidden = data.items.length > 0;
    for (const row of data.items) {
      const tr = el("tr");
      const grades = Object.entries(row.grades).map(([who, g]) => who + ": " + g).join(" · ");
      tr.append(el("td", "", row.question), el("td", "", row.chunk_id),
        el("td", "", row.judge_grade === null ? "unscored" : row.judge_grade), el("td", "", grades));
      body.append(tr);
    }
  }

  function onKey(event) {
    if (event.target === $("quote-text")) {
      if (event.key === "Enter") {
        event.preventDefault();
        const text = $("quote-text").value;
        enqueue(async () => { if (await addQuote(text)) $("quote-text").value = ""; });
      }
      else if (event.key === "Escape") { event.preventDefault(); $("quote-text").blur(); }
      return;
    }
    if (event.target === $("rewrite-text") || event.target === $("rewrite-reason")) {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        const text = $("rewrite-text").value;
        const reason = $("rewrite-reason").value;
        closeRewrite();
        enqueue(() => saveRewrite(text, reason));
      }
      else if (event.key === "Escape") { event.preventDefault(); closeRewrite(); }
      return;
    }
    if (event.target === $("reason")) {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        const text = $("reason").value;
        closeReason();
        enqueue(() => label({ grade: item.mine.grade }, text));
      }
      else if (event.key === "Escape") { event.preventDefault(); closeReason(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key;
    if (["0", "1", "2", "3"].includes(key)) enqueue(() => label({ grade: Number(key) }));
    else if (key === "Enter") {
      enqueue(() => (item && item.judge_hidden ? status("Blind mode: grade it yourself first.", true) : label({ accept_judge: true })));
    } else if (key === "ArrowRight" || key === "ArrowDown") enqueue(() => show(pos + 1));
    else if (key === "ArrowLeft" || key === "ArrowUp") enqueue(() => show(pos - 1));
    else if (key === "r") enqueue(openReason);
    else if (key === "w") enqueue(openRewrite);
    else if (key === "q") enqueue(quoteSelection);
    else if (key === "u") enqueue(undo);
    else if (key === "?") $("help").hidden = !$("help").hidden;
    else if (key === "a") showAdjudication($("adjudication").hidden);
    else if (key === "Escape") $("help").hidden = true;
    else return;
    event.preventDefault();
  }

  document.addEventListener("keydown", onKey);
  for (const button of document.querySelectorAll("#grades button")) {
    button.addEventListener("click", () => enqueue(() => label({ grade: Number(button.dataset.grade) })));
  }
  $("btn-quote").addEventListener("mousedown", (event) => event.preventDefault());  // keep the selection
  $("btn-quote").addEventListener("click", () => enqueue(quoteSelection));
  $("btn-prev").addEventListener("click", () => enqueue(() => show(pos - 1)));
  $("btn-next").addEventListener("click", () => enqueue(() => show(pos + 1)));
  $("btn-help").addEventListener("click", () => { $("help").hidden = !$("help").hidden; });
  $("btn-adjudicate").addEventListener("click", () => showAdjudication(true));
  $("btn-review").addEventListener("click", () => showAdjudication(false));
  window.addEventListener("hashchange", () => enqueue(async () => { const wanted = linked(); if (wanted !== null) await show(wanted); }));
  enqueue(loadQueue);
})();
