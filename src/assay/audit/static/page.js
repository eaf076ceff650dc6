// assay audit: what the page's two views (relevance grades, audit.js; criteria, criteria.js) share. Plain
// JavaScript; every piece of data is written with textContent, never as HTML.
"use strict";

window.assayPage = (() => {
  const token = document.querySelector('meta[name="assay-token"]').content;
  const annotator = document.body.dataset.annotator;
  const $ = (id) => document.getElementById(id);

  function setText(node, value) {
    node.textContent = value === null || value === undefined ? "" : String(value);
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) setText(node, text);
    return node;
  }

  function status(message, isError) {
    setText($("status"), message);
    $("status").classList.toggle("error", Boolean(isError));
  }

  // GET with ?annotator=, or POST the payload as JSON with the annotator and the page's token.
  async function request(path, payload) {
    const options = payload === undefined ? {} : {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Assay-Token": token },
      body: JSON.stringify(Object.assign({ annotator }, payload)),
    };
    const url = payload === undefined ? path + (path.includes("?") ? "&" : "?") + "annotator=" + encodeURIComponent(annotator) : path;
    const response = await fetch(url, options);
    const data = await response.json();
    if (!response.ok) throw new Error(data.error || response.statusText);
    return data;
  }

  // Keys act one after another: a label typed while the previous one is saving applies to the next item, not twice
  // to the same one.
  function queue() {
    let pending = Promise.resolve();
    return (action) => {
      pending = pending.then(action).catch((err) => status(err.message, true));
    };
  }

  return { annotator, $, setText, el, status, request, queue };
})();
