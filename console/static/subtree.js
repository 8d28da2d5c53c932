// zkraft console: subtree operations — copy, move, rename, export, import
// and recursive deletes past what one request deletes. Each is confirmed
// with a survey of the subtree (api/survey: how many nodes, whether one
// multi can take it, which nodes are ephemeral) and runs as a background
// job of the login (api/jobs) whose progress the page shows until it ends.
// Uses app.js's helpers ($, el, api, q, state, select, expand, nodeLi,
// parentOf, setMessage).
"use strict";

// history keeps the last states of the job shown, as rendered (the
// browser tests read it).
const subtree = { plan: null, job: null, timer: null, history: [] };

// ---- the panel in the node view ----
(function buildSubtreeUI() {
  const panel = el("div", { class: "panel", id: "subtree-panel" },
    el("h3", {}, "Subtree"),
    el("div", { class: "inline" },
      el("button", { id: "st-export", title: "download this node and everything below it as JSON", onclick: () => exportSubtree(state.selected) }, "Export JSON"),
      el("label", { class: "hint", title: "without them, digest ACL entries are exported as user:(hash hidden) and the file cannot be imported" },
        el("input", { type: "checkbox", id: "st-digests" }), " with digest hashes"),
      el("span", { class: "writes st-writes" },
        el("button", { id: "st-copy", onclick: () => askTarget("copy") }, "Copy…"),
        el("button", { id: "st-move", onclick: () => askTarget("move") }, "Move…"),
        el("button", { id: "st-rename", onclick: () => askTarget("rename") }, "Rename…"),
        el("button", { id: "st-import", onclick: () => askImport() }, "Import JSON here…"))),
    el("div", { id: "st-job", class: "st-job", hidden: true },
      el("div", { class: "inline" },
        el("strong", { id: "st-job-title" }),
        el("progress", { id: "st-progress", max: 1, value: 0 }),
        el("span", { id: "st-job-count", class: "st-count" }),
        el("button", { id: "st-cancel", onclick: cancelJob }, "Cancel")),
      el("div", { id: "st-job-current", class: "hint st-current" }),
      el("div", { id: "st-job-error", class: "error" })));
  const del = $("#delete").closest(".panel");
  del.parentNode.insertBefore(panel, del);

  const dialog = el("dialog", { id: "subtree-dialog" },
    el("form", { method: "dialog", onsubmit: (ev) => ev.preventDefault() },
      el("h3", { id: "st-title" }),
      el("label", { id: "st-target-label", class: "st-target" }, el("span", { id: "st-target-caption" }, "To "),
        el("input", { id: "st-target", size: 40, spellcheck: false })),
      el("input", { id: "st-file", type: "file", accept: "application/json,.json", hidden: true }),
      el("p", { id: "st-summary" }),
      el("ul", { id: "st-ephemerals", class: "st-list" }),
      el("p", { id: "st-error", class: "error" }),
      el("button", { id: "st-no", value: "cancel", onclick: () => $("#subtree-dialog").close() }, "Cancel"),
      el("button", { id: "st-yes", class: "danger", onclick: confirmPlan }, "Go")));
  document.body.append(dialog);
})();

// showWrites hides the write buttons of a read-only console (app.js sets
// .writes at login; this panel may be built after it).
function showWrites() {
  document.querySelectorAll(".st-writes").forEach((e) => { e.hidden = !(state.me && state.me.writable); });
}

const kindWords = {
  copy: ["Copy", "Copying", "Copied"], move: ["Move", "Moving", "Moved"], rename: ["Rename", "Renaming", "Renamed"],
  delete: ["Delete", "Deleting", "Deleted"], import: ["Import", "Importing", "Imported"],
};

// ---- confirmation ----
async function askTarget(kind) {
  const from = state.selected;
  if (!from || from === "/") { setMessage("Choose a node below /.", true); return; }
  openDialog(kind, from);
  const t = $("#st-target");
  $("#st-target-caption").textContent = kind === "rename" ? "New name " : "To ";
  t.value = kind === "rename" ? nameOf(from) : from + (kind === "copy" ? "-copy" : "");
  await surveyInto(kind, from);
  t.focus();
}

// subtreeDelete is app.js's way in when a delete is more than one
// request takes: it runs as a job.
async function subtreeDelete(root) {
  openDialog("delete", root);
  $("#st-target-label").hidden = true;
  await surveyInto("delete", root);
}

function askImport() {
  const under = state.selected || "/";
  openDialog("import", under);
  $("#st-target-caption").textContent = "Create at ";
  $("#st-target").value = childPath(under, "imported");
  $("#st-file").hidden = false;
  $("#st-file").value = "";
  $("#st-summary").textContent = "Choose a file exported from a console (format zkraft-subtree/1). Its root is created at the path above, which must not exist; data and ACLs are as in the file.";
  $("#st-yes").disabled = false;
  $("#st-yes").textContent = "Import";
}

function openDialog(kind, from) {
  subtree.plan = { kind, from, survey: null };
  $("#st-title").textContent = `${kindWords[kind][0]} ${kind === "import" ? "into" : ""} ${from}`;
  $("#st-target-label").hidden = false;
  $("#st-file").hidden = true;
  $("#st-summary").textContent = "Looking at the subtree…";
  $("#st-ephemerals").replaceChildren();
  $("#st-error").textContent = "";
  $("#st-yes").disabled = true;
  $("#st-yes").textContent = kindWords[kind][0];
  const d = $("#subtree-dialog");
  if (!d.open) d.showModal();
}

async function surveyInto(kind, from) {
  const r = await api("GET", `survey?path=${q(from)}`);
  if (r.status !== 200) { $("#st-summary").textContent = ""; $("#st-error").textContent = `${r.body.code || r.status}: ${r.body.error}`; return; }
  const s = r.body;
  subtree.plan.survey = s;
  const how = s.atomic
    ? "in one multi: all of it or nothing"
    : "as a background job in batches: NOT atomic — if it fails or is cancelled part of it is done (the progress shows how far)";
  const what = { copy: "copies", move: "copies then deletes", rename: "copies then deletes", delete: "deletes" }[kind];
  $("#st-summary").textContent = `${s.count} node${s.count === 1 ? "" : "s"} (${s.bytes} bytes of data). This ${what} them ${how}. ` +
    (kind === "delete" ? "" : "Data and ACLs are copied node by node as you (your ACLs apply); every copy is a persistent node.");
  const eph = $("#st-ephemerals");
  eph.replaceChildren();
  if (s.ephemeralCount > 0) {
    const note = kind === "copy"
      ? `${s.ephemeralCount} ephemeral node(s) are left out (they belong to their session):`
      : kind === "delete" ? `${s.ephemeralCount} ephemeral node(s) go too:`
        : `Cannot ${kind}: ${s.ephemeralCount} ephemeral node(s) below belong to their session and cannot be moved. Copy instead:`;
    $("#st-error").textContent = kind === "move" || kind === "rename" ? note : "";
    eph.append(el("li", { class: "hint" }, kind === "move" || kind === "rename" ? "" : note));
    for (const p of s.ephemerals) eph.append(el("li", {}, p));
  }
  $("#st-yes").disabled = (kind === "move" || kind === "rename") && s.ephemeralCount > 0;
}

async function confirmPlan(ev) {
  ev.preventDefault();
  const p = subtree.plan;
  let body;
  if (p.kind === "import") {
    const f = $("#st-file").files[0];
    if (!f) { $("#st-error").textContent = "Choose a file."; return; }
    let tree;
    try { tree = JSON.parse(await f.text()); } catch (e) { $("#st-error").textContent = "Not JSON: " + e.message; return; }
    body = { kind: "import", to: $("#st-target").value.trim(), tree };
  } else {
    if (!p.survey) return;
    const expect = { count: p.survey.count, fingerprint: p.survey.fingerprint };
    let to = $("#st-target").value.trim();
    if (p.kind === "rename") {
      if (!to || to.includes("/")) { $("#st-error").textContent = "A new name, without /."; return; }
      to = childPath(parentOf(p.from), to);
    }
    body = { kind: p.kind === "rename" ? "move" : p.kind, from: p.from, expect };
    if (p.kind !== "delete") body.to = to;
  }
  const r = await api("POST", "jobs", body);
  if (r.status !== 202) { $("#st-error").textContent = `${r.body.code || r.status}: ${r.body.error}`; return; }
  $("#subtree-dialog").close();
  watchJob(r.body, p.kind);
}

// ---- progress ----
function watchJob(job, kind) {
  subtree.job = { id: job.id, kind };
  subtree.history = [];
  $("#st-job").hidden = false;
  $("#st-cancel").hidden = false;
  renderJob(job);
  clearTimeout(subtree.timer);
  const poll = async () => {
    const r = await api("GET", `jobs/${job.id}`);
    if (r.status !== 200) { $("#st-job-error").textContent = r.body.error; return; }
    renderJob(r.body);
    if (r.body.state === "running") subtree.timer = setTimeout(poll, 300);
    else await jobEnded(r.body);
  };
  subtree.timer = setTimeout(poll, 200);
}

function renderJob(j) {
  subtree.history.push({ state: j.state, phase: j.phase, done: j.done, total: j.total });
  if (subtree.history.length > 50) subtree.history.shift();
  const words = kindWords[subtree.job.kind] || kindWords[j.kind];
  const phase = j.phase === "checking" ? "checking the subtree" : j.phase;
  $("#st-job-title").textContent = j.state === "running"
    ? `${words[1]} ${j.from || ""}${j.to ? " → " + j.to : ""} (${phase})`
    : `${j.state === "done" ? words[2] : words[0] + " " + j.state}: ${j.from || ""}${j.to ? " → " + j.to : ""}`;
  const bar = $("#st-progress");
  bar.max = Math.max(j.total, 1);
  bar.value = j.phase === "checking" ? 0 : j.done;
  $("#st-job-count").textContent = `${j.done} / ${j.total}${j.atomic ? " (atomic)" : ""}`;
  $("#st-job-current").textContent = j.state === "running" && j.current ? j.current : "";
  $("#st-job-error").textContent = j.error && j.state !== "cancelled" ? `${j.code ? j.code + ": " : ""}${j.error}` : "";
  $("#st-cancel").hidden = j.state !== "running";
  $("#st-job").dataset.state = j.state;
}

async function cancelJob() {
  if (!subtree.job) return;
  await api("POST", `jobs/${subtree.job.id}/cancel`, {});
}

// jobEnded refreshes what the job changed and says how it went.
async function jobEnded(j) {
  const words = kindWords[subtree.job.kind];
  const skipped = j.skippedCount ? ` ${j.skippedCount} ephemeral node(s) left out: ${j.skipped.join(", ")}.` : "";
  const text = j.state === "done" ? `${words[2]} ${j.done} of ${j.total}.${skipped}` : `${words[0]} ${j.state}: ${j.error || ""}`;
  const bad = j.state !== "done";
  setMessage(text, bad);
  const dirs = new Set();
  if (j.from && j.kind !== "import") dirs.add(parentOf(j.from));
  if (j.to) dirs.add(parentOf(j.to));
  if (j.state === "done") {
    // Show where the subtree is now (the deleted one's parent), then say
    // how it went (select clears the message).
    const shown = j.to || parentOf(j.from);
    state.selected = shown;
    for (const d of dirs) { const li = nodeLi(d); if (li) await expand(li, true); }
    await select(shown);
  } else {
    for (const d of dirs) { const li = nodeLi(d); if (li) await expand(li, true); }
  }
  setMessage(text, bad);
}

// ---- export ----
async function exportSubtree(path) {
  const digests = $("#st-digests").checked ? "&digests=keep" : "";
  const resp = await fetch(`api/export?path=${q(path)}${digests}`, { credentials: "same-origin" });
  if (!resp.ok) {
    let e = {};
    try { e = await resp.json(); } catch (x) { /* empty */ }
    setMessage(`Export: ${e.error || resp.status}`, true);
    return;
  }
  const blob = await resp.blob();
  const name = (resp.headers.get("Content-Disposition") || "").match(/filename="?([^";]+)"?/);
  const a = el("a", { href: URL.createObjectURL(blob), download: name ? name[1] : "zk-export.json" });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
  setMessage(`Exported ${path} (${blob.size} bytes).`);
}

// The write buttons follow the login's mode whenever a node is shown.
new MutationObserver(showWrites).observe($("#who-mode"), { childList: true, characterData: true, subtree: true });
