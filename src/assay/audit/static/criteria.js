// assay audit, criteria view: judged criteria's verdicts labelled by people. Plain JavaScript; every piece of data is
// written with textContent, never as HTML.
"use strict";

(() => {
  const { $, el, status, request } = window.assayPage;
  const enqueue = window.assayPage.queue();
  let queue = [];
  let pos = 0;
  let item = null;
  let reason = null;  // a reason typed with r, saved with the next label

  function showProgress(progress) {
    $("progress").textContent = progress.done + " / " + progress.total + " labelled";
  }

  function text(value) {
    if (value === null || value === undefined) return "";
    return typeof value === "string" ? value : JSON.stringify(value, null, 1);
  }

  function renderShown(shown) {
    const box = $("shown");
    box.replaceChildren();
    const names = { question: "Question", answer: "Answer", passages: "Passages", reference_answer: "Reference answer",
      nuggets: "Nuggets", history: "Earlier turns" };
    for (const [name, value] of Object.entries(shown)) {
      box.append(el("h3", "", names[name] || name));
      if (name === "passages" && Array.isArray(value)) {
        const list = el("ol", "history");
        for (const passage of value) list.append(el("li", "chunk", passage));
        box.append(list);
      } else if (name === "nuggets" && Array.isArray(value)) {
        const list = el("ul", "");
        for (const nugget of value) list.append(el("li", "", nugget.text + (nugget.importance ? " (" + nugget.importance + ")" : "")));
        box.append(list);
      } else if (name === "history" && Array.isArray(value)) {
        const list = el("ol", "history");
        for (const turn of value) {
          const li = el("li", "", turn.question);
          if (turn.answer) li.append(el("div", "answer", turn.answer));
          list.append(li);
        }
        box.append(list);
      } else {
        box.append(el("p", name === "question" ? "question" : "chunk", text(value)));
      }
    }
  }

  function renderAbout(data) {
    const box = $("about");
    box.replaceChildren();
    const about = data.about;
    $("criterion-ref").textContent = data.ref;
    if (about.description) box.append(el("p", "", about.description));
    if (about.instructions) box.append(el("p", "", about.instructions));
    if (about.steps.length) {
      const list = el("ol", "");
      for (const step of about.steps) list.append(el("li", "", step));
      box.append(list);
    }
    if (about.tree.length) {
      const list = el("ol", "");
      for (const step of about.tree) list.append(el("li", "", step.id + ": " + step.question + "  (yes → " + step.yes + ", no → " + step.no + ")"));
      box.append(list);
    }
  }

  function renderLabels(data) {
    const box = $("labels");
    box.replaceChildren();
    data.about.labels.forEach((label, index) => {
      const button = el("button", data.mine && data.mine.label === label.label ? "chosen" : "");
      button.type = "button";
      button.append(el("kbd", "", index + 1), " " + label.label + " (" + label.score + ")");
      if (label.description) button.title = label.description;
      button.addEventListener("click", () => enqueue(() => give({ label: label.label })));
      box.append(button);
    });
  }

  function renderJudge(data) {
    const box = $("judge");
    box.replaceChildren();
    if (data.judge_hidden) {
      box.append(el("p", "muted", "Blind mode: the judge's label shows once you have labelled this item."));
      return;
    }
    for (const verdict of data.verdicts) {
      const row = el("div", "row");
      row.append(el("span", "grade-badge" + (verdict.label === null ? " unscored" : ""), verdict.label === null ? "unscored: " + verdict.unscored : verdict.label));
      row.append(el("span", "prompt", verdict.run + " · " + verdict.judge));
      for (const vote of verdict.votes) {
        if (verdict.votes.length > 1) row.append(el("div", "prompt", vote.model + ": " + (vote.label || "unscored")));
        for (const step of vote.steps || []) row.append(el("div", "", step.id + " " + step.question + " → " + step.answer + (step.reason ? " (" + step.reason + ")" : "")));
        if (vote.reason) row.append(el("p", "", vote.reason));
      }
      box.append(row);
    }
    if (!data.verdicts.length) box.append(el("p", "muted", "No verdict stored."));
  }

  function render(data) {
    item = data;
    $("position").textContent = (data.i + 1) + " / " + queue.length + " · " + data.criterion;
    $("question-meta").textContent = data.query_id;
    renderShown(data.shown);
    renderAbout(data);
    renderJudge(data);
    renderLabels(data);
    $("mine").textContent = data.mine ? "You: " + data.mine.label + (data.mine.reason ? " (" + data.mine.reason + ")" : "") : "";
    $("others").textContent = data.others.map((o) => o.annotator + ": " + o.label).join(" · ");
  }

  async function load(index) {
    if (!queue.length) return;
    pos = Math.max(0, Math.min(index, queue.length - 1));
    render(await request("/api/criteria/item?i=" + pos));
  }

  async function give(choice) {
    if (!item) return;
    const body = Object.assign({ i: item.i }, choice);
    if (reason) body.reason = reason;
    const data = await request("/api/criteria/label", body);
    reason = null;
    showProgress(data.progress);
    queue[item.i].label = data.item.mine ? data.item.mine.label : null;
    status("saved: " + (data.item.mine ? data.item.mine.label : ""));
    if (item.i + 1 < queue.length) await load(item.i + 1); else render(data.item);
  }

  async function undo() {
    const data = await request("/api/criteria/undo", {});
    showProgress(data.progress);
    status(data.undone ? "undone" : "nothing to undo");
    if (data.i !== null) await load(data.i);
  }

  function openReason() {
    $("reason-box").hidden = false;
    $("reason").value = reason || "";
    $("reason").focus();
  }

  // The box hidden and its text area left, so the next keys label items again.
  function closeReason() {
    $("reason-box").hidden = true;
    $("reason").blur();
  }

  $("reason").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      reason = $("reason").value.trim() || null;
      closeReason();
      status(reason ? "reason kept for your next label" : "");
    } else if (event.key === "Escape") {
      closeReason();
    }
    event.stopPropagation();
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const labels = item ? item.about.labels : [];
    if (/^[1-9]$/.test(event.key) && Number(event.key) <= labels.length) {
      enqueue(() => give({ label: labels[Number(event.key) - 1].label }));
    } else if (event.key === "Enter") {
      enqueue(() => give({ accept_judge: true }));
    } else if (event.key === "ArrowRight") {
      enqueue(() => load(pos + 1));
    } else if (event.key === "ArrowLeft") {
      enqueue(() => load(pos - 1));
    } else if (event.key === "u") {
      enqueue(undo);
    } else if (event.key === "r") {
      event.preventDefault();
      openReason();
    } else if (event.key === "?") {
      $("help").hidden = !$("help").hidden;
    }
  });

  $("btn-prev").addEventListener("click", () => enqueue(() => load(pos - 1)));
  $("btn-next").addEventListener("click", () => enqueue(() => load(pos + 1)));
  $("btn-help").addEventListener("click", () => { $("help").hidden = !$("help").hidden; });

  enqueue(async () => {
    const data = await request("/api/criteria/queue");
    queue = data.items;
    showProgress(data.progress);
    if (!queue.length) {
      $("empty").hidden = false;
      return;
    }
    const first = queue.findIndex((row) => row.label === null);
    await load(first < 0 ? 0 : first);
  });
})();
