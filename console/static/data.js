// zkraft console: exact bytes and visible names, for app.js.
//
// A node's data is bytes. The page edits it as text only when a text box
// holds exactly those bytes (valid UTF-8, no carriage return, which a
// textarea turns into a line feed); otherwise as hex or base64, which
// round-trip every byte. The page sends what it saves as base64.
//
// Names are shown with their control and bidi-formatting characters
// escaped (⟨U+202E⟩ in a style of its own), so a name cannot reverse or
// hide what follows it; the real path is still what the page uses and
// copies.
"use strict";

// Control characters (C0, DEL, C1), bidi marks, embeddings, overrides and
// isolates, line and paragraph separators, and the BOM.
const HIDDEN_CHARS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

// showName returns a span showing s with its hidden characters escaped.
function showName(s) {
  const span = document.createElement("span");
  span.className = "nm";
  let last = 0;
  for (const m of String(s).matchAll(HIDDEN_CHARS)) {
    if (m.index > last) span.append(s.slice(last, m.index));
    const code = m[0].codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
    const esc = document.createElement("span");
    esc.className = "ctl";
    esc.title = "an invisible or control character in the name";
    esc.textContent = `⟨U+${code}⟩`;
    span.append(esc);
    last = m.index + m[0].length;
  }
  if (last < s.length) span.append(s.slice(last));
  return span;
}

const utf8Exact = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const utf8Loose = new TextDecoder("utf-8", { ignoreBOM: true });

// exactText is bytes as text when a textarea holds exactly them, else
// null; why says what stops it.
function exactText(bytes) {
  let text;
  try { text = utf8Exact.decode(bytes); } catch (e) { return { text: null, why: "it is not valid UTF-8" }; }
  if (text.includes("\r")) return { text: null, why: "it holds carriage returns, which a text box turns into line feeds" };
  return { text, why: "" };
}

// looseText decodes bytes for viewing (a slice may end inside a character).
const looseText = (bytes) => utf8Loose.decode(bytes);

function toBase64(bytes) {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

function fromBase64(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

// hexLines is bytes as editable hex, 16 bytes a line.
function hexLines(bytes) {
  const lines = [];
  for (let i = 0; i < bytes.length; i += 16) {
    const row = [];
    for (let j = i; j < Math.min(i + 16, bytes.length); j++) row.push(HEX[bytes[j]]);
    lines.push(row.join(" "));
  }
  return lines.join("\n");
}

// parseHex reads hex digits, whitespace ignored; it throws on anything else.
function parseHex(s) {
  const digits = s.replace(/\s+/g, "");
  const bad = digits.search(/[^0-9a-fA-F]/);
  if (bad >= 0) throw new Error(`not hex: ${JSON.stringify(digits[bad])} at digit ${bad + 1}`);
  if (digits.length % 2) throw new Error(`not hex: an odd number of digits (${digits.length})`);
  const out = new Uint8Array(digits.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(digits.substr(2 * i, 2), 16);
  return out;
}

// base64Lines is bytes as base64 in lines of 76 characters.
function base64Lines(bytes) {
  return toBase64(bytes).replace(/.{76}/g, "$&\n").trimEnd();
}

// parseBase64 reads base64, whitespace ignored; it throws on anything else.
function parseBase64(s) {
  const text = s.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4) throw new Error("not base64 (A-Z a-z 0-9 + /, = padding, a multiple of 4 characters)");
  return fromBase64(text);
}

// hexdump renders at most max bytes as offset, hex and ASCII columns.
function hexdump(bytes, max) {
  const n = Math.min(bytes.length, max ?? bytes.length);
  const lines = [];
  for (let i = 0; i < n; i += 16) {
    let hex = "", ascii = "";
    for (let j = i; j < i + 16; j++) {
      if (j < n) {
        hex += HEX[bytes[j]] + " ";
        ascii += bytes[j] >= 32 && bytes[j] < 127 ? String.fromCharCode(bytes[j]) : ".";
      } else hex += "   ";
    }
    lines.push(i.toString(16).padStart(8, "0") + "  " + hex.slice(0, -1) + "  " + ascii);
  }
  return lines.join("\n");
}

// minifyJSON drops the whitespace outside the strings of JSON text.
function minifyJSON(text) {
  let out = "", inStr = false, esc = false;
  for (const ch of text) {
    if (inStr) {
      out += ch;
      if (esc) esc = false; else if (ch === "\\") esc = true; else if (ch === '"') inStr = false;
    } else if (ch === '"') { inStr = true; out += ch; } else if (!" \t\n\r".includes(ch)) out += ch;
  }
  return out;
}

// prettyJSON is JSON text indented, when indenting says exactly what the
// text says; else the text as it is (exact false): JavaScript would round
// a large number, rewrite an escape or drop a repeated key. It throws the
// parse error of text that is not JSON.
function prettyJSON(text) {
  const v = JSON.parse(text);
  if (JSON.stringify(v) !== minifyJSON(text)) return { text, exact: false };
  return { text: JSON.stringify(v, null, 2), exact: true };
}
const JSON_AS_STORED = "shown as stored: indenting it would change it (a large number, an escape or a repeated key)";

// formatBytes is a byte count for people.
function formatBytes(n) {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n % 1024 ? 1 : 0)} KiB (${n} bytes)`;
  return `${(n / 1048576).toFixed(2)} MiB (${n} bytes)`;
}
