// zkraft console: a dependency-free page over the console's JSON API.
// Every request goes to api/..., relative to the page, with the session
// cookie; writes carry the CSRF token the login returned.
"use strict";

const $ = (sel) => document.querySelector(sel);
const el = (tag, props = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") e.className = v; else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e[k] = v;
  }
  for (const kid of kids) e.append(kid);
  return e;
};

const state = { me: null, selected: null, node: null, dirty: false, live: null, liveRoot: "/", aclDraft: [] };

// api calls the console's API; it returns {status, body}. A 401 on
// anything but login shows the login form.
async function api(method, path, body) {
  const opts = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  if (method !== "GET" && state.me) opts.headers["X-CSRF-Token"] = state.me.csrf;
  const resp = await fetch("api/" + path, opts);
  let out = {};
  try { out = await resp.json(); } catch (e) { /* empty body */ }
  if (resp.status === 401 && path !== "login") showLogin(out.error);
  return { status: resp.status, body: out };
}
const q = (p) => encodeURIComponent(p);

// ---- login ----
function showLogin(msg) {
  state.me = null;
  stopLive();
  stopHeartbeat();
  for (const id of ["#tree-view", "#ensemble-view", "#tabs", "#who"]) $(id).hidden = true;
  $("#login-view").hidden = false;
  $("#login-error").textContent = msg && msg !== "not logged in" ? msg : "";
  $("#login-user").focus();
}

async function loggedIn(me) {
  state.me = me;
  $("#login-view").hidden = true;
  $("#tabs").hidden = false;
  $("#who").hidden = false;
  $("#who-user").replaceChildren(showName(me.user || "anonymous"), " · session " + me.session);
  const mode = $("#who-mode");
  mode.textContent = me.writable ? "writable" : "read-only";
  mode.className = "badge " + (me.writable ? "rw" : "ro");
  document.querySelectorAll(".writes").forEach((e) => { e.hidden = !me.writable; });
  showView("tree-view");
  startHeartbeat(me.heartbeatMs || 30000);
  await loadRoot();
  startLive("/");
}

// ---- presence ----
// The console ends a login whose browser has been silent for its heartbeat
// timeout (whoami's heartbeatMs is a third of it): no request, no open
// live stream, no heartbeat. So a closed tab's login ends soon after, and
// an open page, hidden or not, says it is there. Browsers hold back a
// hidden tab's timers (Chrome: to once a minute after five minutes), which
// the timeout allows for; the live stream, while open, holds the login
// anyway.
let heartbeatTimer = null;
function startHeartbeat(ms) {
  stopHeartbeat();
  heartbeatTimer = setInterval(heartbeat, ms);
}
function stopHeartbeat() {
  if (heartbeatTimer !== null) clearInterval(heartbeatTimer);
  heartbeatTimer = null;
}
async function heartbeat() {
  if (!state.me) return;
  try { await api("POST", "heartbeat", {}); } catch (e) { /* offline: the next one tries again */ }
}
// A tab shown again says so at once (a 401 then shows the login form).
document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") heartbeat(); });
// A page restored from the back-forward cache had its stream closed.
window.addEventListener("pageshow", (ev) => {
  if (!ev.persisted || !state.me) return;
  heartbeat();
  startLive(state.liveRoot);
});

$("#login-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  $("#login-error").textContent = "";
  const r = await api("POST", "login", { user: $("#login-user").value, password: $("#login-password").value });
  $("#login-password").value = "";
  if (r.status !== 200) { $("#login-error").textContent = r.body.error || "login failed"; return; }
  loggedIn(r.body);
});

$("#logout").addEventListener("click", async () => { await api("POST", "logout", {}); showLogin(); });

// ---- views ----
function showView(id) {
  document.querySelectorAll(".view").forEach((v) => { v.hidden = v.id !== id; });
  document.querySelectorAll(".tab").forEach((t) => t.classList.toggle("active", t.dataset.view === id));
  if (id === "ensemble-view") refreshEnsemble();
}
document.querySelectorAll(".tab").forEach((t) => t.addEventListener("click", () => showView(t.dataset.view)));

// ---- tree ----
const PAGE = 100;
const childPath = (dir, name) => (dir === "/" ? "/" + name : dir + "/" + name);
const parentOf = (p) => (p.lastIndexOf("/") <= 0 ? "/" : p.slice(0, p.lastIndexOf("/")));
const nameOf = (p) => (p === "/" ? "/" : p.slice(p.lastIndexOf("/") + 1));
const nodeLi = (p) => document.querySelector(`#tree li.node[data-path="${CSS.escape(p)}"]`);

function makeNode(path, info) {
  const li = el("li", { class: "node", dataset: { path } });
  const twisty = el("span", { class: "twisty", onclick: () => toggle(li) });
  const name = el("a", { class: "name", onclick: () => select(path) }, showName(nameOf(path)));
  const row = el("div", { class: "row" }, twisty, name);
  li.append(row, el("ul", { hidden: true }));
  setInfo(li, info);
  return li;
}

function setInfo(li, info) {
  const row = li.querySelector(".row");
  row.querySelectorAll(".count, .eph").forEach((e) => e.remove());
  li.dataset.kids = info.numChildren;
  if (info.numChildren > 0) row.append(el("span", { class: "count" }, String(info.numChildren)));
  if (info.ephemeral) row.append(el("span", { class: "eph" }, "ephemeral"));
  const open = !li.querySelector("ul").hidden;
  li.querySelector(".twisty").textContent = info.numChildren === 0 ? "·" : open ? "▾" : "▸";
}

async function loadRoot() {
  const tree = $("#tree");
  tree.replaceChildren();
  const r = await api("GET", "node?path=/&max=0");
  const root = makeNode("/", { numChildren: r.body.stat ? r.body.stat.numChildren : -1 });
  tree.append(root);
  await expand(root);
}

// expand loads a directory's first page (or reloads the pages shown).
async function expand(li, keep) {
  const ul = li.querySelector("ul");
  const shown = keep ? Math.max(ul.querySelectorAll(":scope > li.node").length, PAGE) : PAGE;
  const r = await api("GET", `children?path=${q(li.dataset.path)}&offset=0&limit=${Math.min(shown, 1000)}`);
  if (r.status !== 200) { ul.replaceChildren(el("li", { class: "error" }, r.body.error)); ul.hidden = false; return; }
  const open = new Set([...ul.querySelectorAll(":scope > li.node")].filter((c) => !c.querySelector("ul").hidden).map((c) => c.dataset.path));
  ul.replaceChildren();
  appendPage(li, r.body);
  ul.hidden = false;
  setInfo(li, { numChildren: r.body.total });
  for (const p of open) { const c = nodeLi(p); if (c) await expand(c, true); }
  markSelected();
}

function appendPage(li, page) {
  const ul = li.querySelector("ul");
  ul.querySelector(":scope > li.more-row")?.remove();
  for (const c of page.children) ul.append(makeNode(childPath(page.path, c.name), c));
  const loaded = page.offset + page.children.length;
  if (loaded < page.total) {
    const more = el("li", { class: "more-row" }, el("a", { class: "more", onclick: async () => {
      const r = await api("GET", `children?path=${q(page.path)}&offset=${loaded}&limit=${PAGE}`);
      if (r.status === 200) appendPage(li, r.body);
    } }, `${page.total - loaded} more…`));
    ul.append(more);
  }
}

async function toggle(li) {
  const ul = li.querySelector("ul");
  if (li.dataset.kids === "0") return;
  if (ul.hidden) await expand(li); else { ul.hidden = true; setInfo(li, { numChildren: Number(li.dataset.kids) }); }
}

function markSelected() {
  document.querySelectorAll("#tree .name.selected").forEach((e) => e.classList.remove("selected"));
  const li = state.selected && nodeLi(state.selected);
  if (li) li.querySelector(".name").classList.add("selected");
}

// ---- node detail ----
async function select(path) {
  state.selected = path;
  state.want = VIEW_STEP;
  markSelected();
  await loadNode(true);
}

// A node's data is loaded up to state.want bytes (VIEW_STEP at first,
// more on demand, all for editing): the server answers that prefix and
// the whole size, so a large node costs a bounded transfer and view.
const VIEW_STEP = 64 * 1024;
const HEX_MAX = 256 * 1024; // a hex dump shows at most this much
state.want = VIEW_STEP;

async function loadNode(resetEditor) {
  const path = state.selected;
  const bound = Number.isFinite(state.want) ? `&max=${state.want}` : "";
  const r = await api("GET", `node?path=${q(path)}${bound}`);
  if (path !== state.selected) return; // another node was selected meanwhile
  $("#no-selection").hidden = true;
  $("#node").hidden = false;
  $("#node-path").replaceChildren(showName(path));
  $("#conflict").hidden = true;
  if (r.status !== 200) {
    state.node = null;
    state.dirty = false;
    $("#node-data").textContent = "";
    $("#data-bound").hidden = true;
    $("#stat").replaceChildren();
    $("#acl tbody").replaceChildren();
    renderEditor();
    setMessage(`${r.body.code || r.status}: ${r.body.error}`, true);
    return;
  }
  if (resetEditor) setMessage("");
  state.node = r.body;
  state.node.bytes = r.body.data ? fromBase64(r.body.data) : new Uint8Array();
  state.node.full = !r.body.partial && !r.body.dataError && !!r.body.stat;
  renderData();
  $("#data-error").textContent = r.body.dataError ? r.body.dataError + ": you may not read this node's data." : "";
  // The editor saves at the version it was loaded from: a change that
  // arrives (live) while it is being edited must show as a conflict, not
  // be overwritten. It holds exactly the bytes loaded, and only when they
  // are the node's whole data.
  const unchanged = !resetEditor && state.draft && state.node.full && r.body.stat && r.body.stat.version === state.editVersion;
  if (unchanged) {
    // The same version again (the live echo of a save, a reconnect): the
    // editor is left as it is.
  } else if (resetEditor || !state.dirty) {
    state.dirty = false;
    state.editVersion = r.body.stat && state.node.full ? r.body.stat.version : null;
    state.draft = state.node.full ? state.node.bytes : null;
    if (resetEditor) pickEditMode();
    renderEditor();
  } else if (r.body.stat && r.body.stat.version !== state.editVersion) {
    setMessage(`Changed on the server (now version ${r.body.stat.version}) while you edit: saving will conflict.`, true);
  }
  renderStat(r.body.stat);
  state.aclDraft = (r.body.acl || []).map((a) => ({ ...a }));
  renderACL();
  $("#acl-error").textContent = r.body.aclError || "";
  $("#acl-version").textContent = r.body.stat ? r.body.stat.aversion : "?";
}

function setMessage(text, bad) {
  const m = $("#message");
  m.replaceChildren(showName(text)); // it may name a path
  m.className = text ? (bad ? "bad" : "ok") : "";
}

const decodeText = (bytes) => exactText(bytes).text;

// renderData shows the loaded data (at most state.want bytes of it, a hex
// dump at most HEX_MAX) and says how much of the node that is.
function renderData() {
  const view = document.querySelector('input[name="view"]:checked').value;
  const n = state.node;
  const bytes = n ? n.bytes : new Uint8Array();
  const size = n ? n.size ?? bytes.length : 0;
  const partial = n && n.partial;
  const text = n && n.utf8 ? looseText(bytes) : null;
  let out, shown = bytes.length;
  if (view === "hex" || text === null) {
    shown = Math.min(bytes.length, HEX_MAX);
    out = hexdump(bytes, shown);
  } else if (view === "json" && partial) out = "(load all of it to see it as JSON)\n" + text;
  else if (view === "json") {
    try {
      const p = prettyJSON(text);
      out = p.exact ? p.text : `(${JSON_AS_STORED})\n` + p.text;
    } catch (e) { out = "(not JSON: " + e.message + ")\n" + text; }
  } else out = text;
  $("#node-data").textContent = bytes.length ? out : n && n.dataError ? "" : "(no data)";
  const bound = $("#data-bound");
  bound.hidden = !n || shown >= size;
  if (!bound.hidden) {
    $("#data-bound-text").textContent = `Showing the first ${formatBytes(shown)} of ${formatBytes(size)}.` +
      (shown < bytes.length ? " A hex dump shows at most 256 KiB." : "");
    $("#data-more").hidden = !partial;
    $("#data-all").hidden = !partial;
    $("#data-all").textContent = `Load all ${formatBytes(size)}`;
  }
}
document.querySelectorAll('input[name="view"]').forEach((r) => r.addEventListener("change", () => {
  renderData();
  // The editor follows the view (JSON view, JSON editor) while nothing is typed in it.
  const mode = r.value === "hex" ? "hex" : r.value;
  if (!state.dirty && r.checked && editMode() !== mode && $(`#edit-${mode}`)) setEditMode(mode);
}));

// "Show more" asks for the next slice only; if the node changed since
// the first, it loads the larger prefix afresh.
$("#data-more").addEventListener("click", async () => {
  const n = state.node, path = state.selected;
  state.want = (Number.isFinite(state.want) ? state.want : 0) + VIEW_STEP;
  if (!n || !n.stat || !n.partial) { await loadNode(false); return; }
  const r = await api("GET", `node?path=${q(path)}&offset=${n.bytes.length}&max=${state.want - n.bytes.length}`);
  if (path !== state.selected || state.node !== n) return;
  if (r.status !== 200 || !r.body.stat || r.body.stat.mzxid !== n.stat.mzxid || r.body.offset !== n.bytes.length) {
    await loadNode(false);
    return;
  }
  const more = r.body.data ? fromBase64(r.body.data) : new Uint8Array();
  const all = new Uint8Array(n.bytes.length + more.length);
  all.set(n.bytes);
  all.set(more, n.bytes.length);
  n.bytes = all;
  n.partial = all.length < n.size;
  n.full = !n.partial;
  renderData();
  if (n.full) await loadNode(false); // whole now: the editor takes it from a fresh load
});
$("#data-all").addEventListener("click", async () => { state.want = Infinity; await loadNode(false); });

// ---- data editor ----
// It holds state.draft, the bytes being edited, in the chosen form: text
// (only when a text box holds them exactly), JSON (text, pretty-printed;
// saved as typed once it parses), hex or base64 (every byte). It is
// offered only with the node's whole data and version loaded, so a save
// never writes over data the page did not show.
const editMode = () => document.querySelector('input[name="edit"]:checked').value;

// pickEditMode starts a node's editor in the view's form, or hex when the
// data is not text.
function pickEditMode() {
  const view = document.querySelector('input[name="view"]:checked').value;
  let mode = view;
  if ((mode === "text" || mode === "json") && state.draft && exactText(state.draft).text === null) mode = "hex";
  $(`#edit-${mode}`).checked = true;
}

// editorBytes reads the editor in its form; it throws when that is not
// possible (bad hex or base64, JSON that does not parse).
function editorBytes() {
  const ta = $("#data-editor");
  if (ta.disabled) throw new Error($("#edit-note").textContent);
  const v = ta.value;
  switch (editMode()) {
    case "hex": return parseHex(v);
    case "base64": return parseBase64(v);
    case "json":
      try { JSON.parse(v); } catch (e) { throw new Error("not JSON: " + e.message); }
      return new TextEncoder().encode(v);
    default: return new TextEncoder().encode(v);
  }
}

// setEditMode switches the editor's form, carrying what was typed over.
function setEditMode(mode) {
  if (!$("#data-editor").disabled && state.draft) {
    const prev = document.querySelector('input[name="edit"]:checked').dataset.was || editMode();
    try { if (state.dirty) state.draft = editorBytesAs(prev); } catch (e) {
      $(`#edit-${prev}`).checked = true;
      setMessage(`Cannot switch: the ${prev} you typed is ${e.message}.`, true);
      return;
    }
  }
  $(`#edit-${mode}`).checked = true;
  renderEditor();
}

// editorBytesAs reads the editor as it was in form mode.
function editorBytesAs(mode) {
  const cur = editMode();
  $(`#edit-${mode}`).checked = true;
  try { return editorBytes(); } finally { $(`#edit-${cur}`).checked = true; }
}

// renderEditor shows the draft in the editor's form, or says why there is
// no editor or why this form cannot hold the data.
function renderEditor() {
  const n = state.node;
  const editor = $("#editor"), none = $("#no-editor"), ta = $("#data-editor"), note = $("#edit-note");
  const can = n && n.full && state.editVersion !== null && state.editVersion !== undefined && state.draft;
  editor.hidden = !can;
  none.hidden = !n || !!can;
  if (!can) {
    ta.value = "";
    none.textContent = !n ? "" : n.dataError ? "No editor: you may not read this node's data, so it cannot be edited here."
      : n.partial ? `Load all ${formatBytes(n.size)} to edit this node.` : "";
    none.hidden = !none.textContent;
    return;
  }
  const mode = editMode();
  document.querySelectorAll('input[name="edit"]').forEach((r) => { r.dataset.was = mode; });
  const { text, why } = exactText(state.draft);
  let value = "", usable = true, msg = "";
  if (mode === "hex") value = hexLines(state.draft);
  else if (mode === "base64") value = base64Lines(state.draft);
  else if (text === null) {
    usable = false;
    msg = `Text editing is off for this data: ${why}, so a text box would change its bytes. Edit it as hex or base64.`;
  } else if (mode === "json") {
    try {
      const p = prettyJSON(text);
      value = p.text;
      msg = (p.exact ? "Indented as the JSON view shows it" : JSON_AS_STORED[0].toUpperCase() + JSON_AS_STORED.slice(1)) +
        ". Saved as typed, once it parses as JSON.";
    } catch (e) {
      value = text; msg = `Not JSON now (${e.message}): saving in JSON form needs valid JSON.`;
    }
  } else value = text;
  ta.value = value;
  if (usable && ta.value !== value) {
    // A text box changed it (it normalizes some characters): editing it
    // there would write what was not shown.
    usable = false;
    ta.value = "";
    msg = "Text editing is off for this data: a text box cannot hold it exactly. Edit it as hex or base64.";
  }
  ta.disabled = !usable;
  note.textContent = msg;
  note.className = usable ? "hint" : "hint bad";
  $("#save").disabled = !usable;
  $("#save-version").textContent = state.editVersion;
}
document.querySelectorAll('input[name="edit"]').forEach((r) => r.addEventListener("change", () => { if (r.checked) setEditMode(r.value); }));

function localTime(ms) {
  if (!ms) return "0";
  const d = new Date(ms);
  return d.toLocaleString() + " " + (Intl.DateTimeFormat().resolvedOptions().timeZone || "");
}

function renderStat(st) {
  const t = $("#stat");
  t.replaceChildren();
  if (!st) return;
  const rows = [["czxid", st.czxid], ["ctime", localTime(st.ctime)], ["mzxid", st.mzxid], ["mtime", localTime(st.mtime)],
    ["pzxid", st.pzxid], ["version", st.version], ["cversion", st.cversion], ["aversion", st.aversion],
    ["ephemeralOwner", st.ephemeralOwner], ["dataLength", st.dataLength], ["numChildren", st.numChildren]];
  for (const [k, v] of rows) t.append(el("tr", { dataset: { field: k } }, el("td", {}, k), el("td", {}, String(v))));
}

function renderACL() {
  const body = $("#acl tbody");
  body.replaceChildren();
  state.aclDraft.forEach((a, i) => {
    const rm = el("td", { class: "writes", hidden: !(state.me && state.me.writable) },
      el("button", { onclick: () => { state.aclDraft.splice(i, 1); renderACL(); } }, "remove"));
    body.append(el("tr", {}, el("td", {}, a.scheme), el("td", {}, showName(a.id)), el("td", {}, a.perms), rm));
  });
}

$("#data-editor").addEventListener("input", () => { state.dirty = true; });

$("#save").addEventListener("click", async () => {
  if (!state.node || !state.node.full || state.editVersion === null || state.editVersion === undefined) return;
  let bytes;
  try { bytes = editorBytes(); } catch (e) { setMessage(`Not saved: ${e.message}`, true); return; }
  const r = await api("POST", "set", { path: state.selected, dataBase64: toBase64(bytes), version: state.editVersion });
  if (r.status === 409 && r.body.code === "BadVersion") {
    const cur = r.body.current;
    $("#conflict").hidden = false;
    $("#conflict-version").textContent = cur && cur.stat ? cur.stat.version : "?";
    const bytes = cur && cur.data ? fromBase64(cur.data) : new Uint8Array();
    const text = decodeText(bytes);
    $("#conflict-data").textContent = text !== null ? text.slice(0, VIEW_STEP) : hexdump(bytes, VIEW_STEP);
    setMessage("Conflict: your change was not saved.", true);
    return;
  }
  if (r.status !== 200) { setMessage(`${r.body.code || r.status}: ${r.body.error}`, true); return; }
  state.dirty = false;
  await loadNode(true);
  setMessage(`Saved: version ${r.body.stat.version}.`);
});

$("#conflict-load").addEventListener("click", () => { state.dirty = false; loadNode(true); });

$("#copy-path").addEventListener("click", async () => {
  const path = state.selected;
  try { await navigator.clipboard.writeText(path); } catch (e) {
    const ta = el("textarea", { value: path }); document.body.append(ta); ta.select(); document.execCommand("copy"); ta.remove();
  }
  $("#copied").textContent = "copied";
  setTimeout(() => { $("#copied").textContent = ""; }, 1500);
});

$("#watch-here").addEventListener("click", () => startLive(state.selected));

// ---- ACL editing ----
$("#acl-add").addEventListener("submit", (ev) => {
  ev.preventDefault();
  state.aclDraft.push({ scheme: $("#acl-scheme").value, id: $("#acl-id").value, perms: $("#acl-perms").value });
  $("#acl-id").value = "";
  renderACL();
});

$("#acl-save").addEventListener("click", async () => {
  if (!state.node || !state.node.stat) return;
  const r = await api("POST", "setacl", { path: state.selected, acl: state.aclDraft, version: state.node.stat.aversion });
  if (r.status !== 200) { setMessage(`${r.body.code || r.status}: ${r.body.error}`, true); return; }
  await loadNode(false);
  setMessage("ACL set.");
});

// ---- create ----
$("#create-mode").addEventListener("change", () => { $("#create-ttl").hidden = !$("#create-mode").value.includes("ttl"); });

$("#create-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const parent = state.selected || "/";
  const body = { path: childPath(parent, $("#create-name").value), data: $("#create-data").value, mode: $("#create-mode").value };
  if (body.mode.includes("ttl")) body.ttl = Number($("#create-ttl").value);
  const r = await api("POST", "create", body);
  if (r.status !== 200) { setMessage(`${r.body.code || r.status}: ${r.body.error}`, true); return; }
  $("#create-name").value = "";
  $("#create-data").value = "";
  setMessage(`Created ${r.body.path}.`);
  const li = nodeLi(parent);
  if (li) await expand(li, true);
});

// ---- delete ----
$("#delete").addEventListener("click", async () => {
  const r = await api("GET", `subtree?path=${q(state.selected)}`);
  if (r.status !== 200) { setMessage(`${r.body.code || r.status}: ${r.body.error}`, true); return; }
  if (r.body.truncated) { subtreeDelete(state.selected); return; } // subtree.js: a background job
  showDeleteDialog(state.selected, r.body.paths, r.body.truncated);
});

function showDeleteDialog(root, paths, truncated) {
  state.deletePlan = { root, paths };
  $("#delete-root").replaceChildren(showName(root));
  $("#delete-count").textContent = String(paths.length) + (truncated ? "+" : "");
  $("#delete-list").replaceChildren(...paths.map((p) => el("li", {}, showName(p))));
  $("#delete-error").textContent = truncated ? "More than the console deletes at once: delete a part first." : "";
  $("#delete-yes").disabled = truncated;
  const d = $("#delete-dialog");
  if (!d.open) d.showModal();
}

$("#delete-yes").addEventListener("click", async (ev) => {
  ev.preventDefault();
  const { root, paths } = state.deletePlan;
  const r = await api("POST", "delete", { path: root, recursive: true, expect: paths });
  if (r.status === 409 && r.body.code === "Changed") {
    showDeleteDialog(root, r.body.paths, r.body.truncated);
    $("#delete-error").textContent = "The subtree changed: this is what would go now.";
    return;
  }
  $("#delete-dialog").close();
  if (r.status !== 200) { setMessage(`${r.body.code || r.status}: ${r.body.error}`, true); return; }
  const parent = nodeLi(parentOf(root));
  state.selected = parentOf(root);
  if (parent) await expand(parent, true);
  await loadNode(true);
  setMessage(`Deleted ${r.body.deleted.length} nodes.`);
});

// ---- search ----
// Results show in a bounded, scrolling list above the tree; the clear
// button or Escape ends the search.
function clearSearch() {
  $("#search").value = "";
  $("#search-results").replaceChildren();
  $("#search-results").hidden = true;
  $("#search-clear").hidden = true;
}
$("#search-clear").addEventListener("click", clearSearch);
$("#search").addEventListener("keydown", (ev) => { if (ev.key === "Escape") { ev.preventDefault(); clearSearch(); } });
$("#search-results").addEventListener("keydown", (ev) => { if (ev.key === "Escape") clearSearch(); });

$("#search-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const prefix = $("#search").value.trim();
  const list = $("#search-results");
  if (!prefix) { clearSearch(); return; }
  $("#search-clear").hidden = false;
  const r = await api("GET", `search?prefix=${q(prefix.startsWith("/") ? prefix : "/" + prefix)}`);
  list.replaceChildren();
  if (r.status !== 200) list.append(el("li", { class: "error" }, r.body.error));
  else {
    if (!r.body.paths.length) list.append(el("li", { class: "hint" }, "no match"));
    for (const p of r.body.paths) list.append(el("li", {}, el("a", { onclick: () => select(p) }, showName(p))));
    if (r.body.truncated) list.append(el("li", { class: "hint" }, "more not shown"));
  }
  list.hidden = false;
});

// ---- live updates ----
function startLive(root) {
  stopLive();
  state.liveRoot = root;
  $("#live-root").replaceChildren("under ", showName(root));
  const es = new EventSource("api/events?path=" + q(root));
  state.live = es;
  const badge = $("#live-state");
  let readyBefore = false;
  es.addEventListener("ready", () => {
    badge.textContent = "live"; badge.className = "badge on";
    // A stream that ended (the server ends one that fell behind) may have
    // missed changes: on reconnecting, reload what the page shows.
    if (readyBefore) reloadShown();
    readyBefore = true;
  });
  es.addEventListener("error", () => { badge.textContent = "live: reconnecting"; badge.className = "badge"; });
  es.addEventListener("change", (m) => onChange(JSON.parse(m.data)));
}

// reloadShown reloads the open directories and the selected node.
async function reloadShown() {
  const root = nodeLi("/");
  if (root) await expand(root, true);
  if (state.selected) await loadNode(false);
}

function stopLive() {
  if (state.live) state.live.close();
  state.live = null;
  const badge = $("#live-state");
  badge.textContent = "live: off";
  badge.className = "badge";
}

// Changes are applied in batches: a burst of writes (a recursive delete, a
// bulk load) reloads each directory and the selected node once.
const pending = { dirs: new Set(), node: false, flash: new Set(), timer: null };

function onChange(ev) {
  const feed = $("#feed");
  feed.prepend(el("li", { class: ev.type }, `${new Date().toLocaleTimeString()}  ${ev.type}  `, showName(ev.path), `  ${ev.zxid}`));
  while (feed.children.length > 100) feed.lastChild.remove();
  if (ev.type === "NodeCreated" || ev.type === "NodeDeleted") pending.dirs.add(parentOf(ev.path));
  if (ev.type === "NodeDeleted" && ev.path === state.selected) setMessage("This node was deleted.", true);
  else if (ev.path === state.selected || parentOf(ev.path) === state.selected) pending.node = true;
  if (ev.type !== "NodeDeleted") pending.flash.add(ev.path);
  if (!pending.timer) pending.timer = setTimeout(applyChanges, 100);
}

async function applyChanges() {
  const dirs = [...pending.dirs], node = pending.node, flash = [...pending.flash];
  pending.dirs.clear(); pending.flash.clear(); pending.node = false; pending.timer = null;
  for (const dir of dirs) {
    const li = nodeLi(dir);
    if (!li) continue;
    if (!li.querySelector("ul").hidden) await expand(li, true);
    else {
      const r = await api("GET", `node?path=${q(dir)}&max=0`);
      if (r.body.stat) setInfo(li, { numChildren: r.body.stat.numChildren });
    }
  }
  if (node && state.selected) await loadNode(false);
  for (const p of flash) {
    const li = nodeLi(p);
    if (li) { li.classList.add("flash"); setTimeout(() => li.classList.remove("flash"), 1300); }
  }
}

// ---- ensemble ----
async function refreshEnsemble() {
  if ($("#ensemble-view").hidden || !state.me) return;
  try {
    const r = await api("GET", "ensemble");
    if (r.status === 200) renderEnsemble(r.body);
    const s = await api("GET", "sessions");
    if (s.status === 200) renderSessions(s.body);
  } finally {
    setTimeout(refreshEnsemble, 2000); // a failed fetch must not end the refreshing
  }
}

function renderEnsemble(e) {
  $("#ens-leader").textContent = e.leader >= 0 ? String(e.leader) : "none";
  $("#ens-term").textContent = String(e.term);
  // A member that did not answer is down; one that could not be asked
  // (no client address known) is unknown: neither has numbers to show.
  $("#members tbody").replaceChildren(...e.members.map((m) => {
    const asked = m.role && m.role !== "unknown";
    const num = (v) => (asked ? String(v) : "");
    return el("tr", { class: m.self ? "self" : "", dataset: { id: m.id } },
      el("td", {}, String(m.id)), el("td", {}, showName(m.address)),
      el("td", { class: "role " + (m.role === "leader" ? "leader" : m.role === "unknown" ? "unknown" : m.role ? "" : "down"), title: m.error || "" }, m.role || "down"),
      el("td", {}, m.zxid || ""), el("td", {}, m.lag === undefined ? "" : String(m.lag)), el("td", {}, num(m.connections)),
      el("td", {}, num(m.sessions)), el("td", {}, num(m.znodes)),
      el("td", {}, asked ? `${m.latencyMin}/${Number(m.latencyAvg).toFixed(1)}/${m.latencyMax}` : ""),
      el("td", { class: m.role === "unknown" ? "hint" : "error" }, m.error || ""));
  }));
  $("#changes").replaceChildren(...e.changes.map((c) => el("li", {},
    `${new Date(c.at).toLocaleString()}: leader ${c.leader >= 0 ? c.leader : "none"}, term ${c.term}`)));
  $("#oplat tbody").replaceChildren(...(e.ops || []).map((o) => el("tr", {}, el("td", {}, o.op), el("td", {}, String(o.count)),
    el("td", {}, `${o.min.toFixed(2)}/${o.avg.toFixed(2)}/${o.max.toFixed(2)}`))));
}

function renderSessions(s) {
  $("#sessions-note").textContent = `${s.total} open` + (s.truncated ? ", not all shown" : "");
  $("#sessions tbody").replaceChildren(...s.sessions.map((x) => {
    const eph = x.ephemerals.flatMap((p, i) => (i ? [", ", showName(p)] : [showName(p)]));
    eph.push((x.hidden ? ` (+${x.hidden} you may not read)` : "") + (x.unlisted ? ` (+${x.unlisted} not listed)` : ""));
    return el("tr", { class: x.yours ? "yours" : "" }, el("td", {}, x.id + (x.yours ? " (you)" : x.liveView ? " (your live view)" : "")),
      el("td", {}, String(x.timeoutMs)), el("td", { class: "paths" }, ...eph));
  }));
}

// ---- start ----
(async () => {
  const r = await api("GET", "whoami");
  if (r.status === 200) loggedIn(r.body);
})();
