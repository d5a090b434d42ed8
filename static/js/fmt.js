// Number formatting for display only (no model arithmetic lives here).
import { lang, tr } from "./i18n.js";

const LOCALE = { en: "en-US", zh: "zh-CN" };
export function bytes(n) {
  if (n === null || n === undefined || !Number.isFinite(n)) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return `${n.toFixed(i ? 2 : 0)} ${units[i]}`;
}

export function pct(x, digits = 1) {
  return Number.isFinite(x) ? `${(x * 100).toFixed(digits)}%` : "—";
}

// Large values in the page language's compact form, "63.7K" / "6.37万", never "6.37e+4".
export function num(x, digits = 3) {
  if (!Number.isFinite(x)) return "—";
  if (Math.abs(x) < 1e4) return String(Number(x.toPrecision(digits)));
  const opts = { notation: "compact", maximumSignificantDigits: digits };
  return new Intl.NumberFormat(LOCALE[lang] ?? "en-US", opts).format(x);
}

// A wall-clock time (Unix seconds) in the page's language: toLocaleTimeString() alone takes
// the browser's, so the zh run page said "2:39:31 AM".
export function clock(t, withDate = false) {
  const d = new Date(t * 1000);
  const locale = LOCALE[lang] ?? "en-US";
  return withDate ? d.toLocaleString(locale) : d.toLocaleTimeString(locale);
}

export function seconds(x) {
  if (!Number.isFinite(x)) return "—";
  if (x >= 1) return `${num(x)} s`;
  if (x >= 1e-3) return `${num(x * 1e3)} ms`;
  return `${num(x * 1e6)} µs`;
}

// "0, 4, 8 … 252 (64 ranks)": long groups stay one line.
export function rankList(ranks, label = "ranks", max = 12) {
  if (ranks.length <= max) return ranks.join(", ");
  const head = ranks.slice(0, max - 2).join(", ");
  return `${head} … ${ranks[ranks.length - 1]} (${ranks.length} ${label})`;
}

export function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}

// A core token: a string as it is, or {v, u} formatted by its unit (formula_tokens.py).
export function token(t) {
  if (typeof t === "string") return t;
  const { v, u } = t;
  if (u === "B") return bytes(v);
  if (u === "s") return seconds(v);
  if (u === "%") return pct(v);
  if (u === "pts") return `${v < 0 ? "−" : "+"}${(Math.abs(v) * 100).toFixed(1)} ${tr("formulas.pts")}`;
  if (u === "u") return `${num(v)} ${tr("formulas.teaching_units")}`;
  if (u === "flop") return `${num(v / 1e15)} PFLOP`;
  if (u === "flop/s") return `${num(v / 1e12)} TFLOP/s`;
  if (u === "tok/s") return `${num(v, 4)} ${tr("perf.tokens")}`;
  return num(v, 4);
}

// A catalogue text with {0}, {1} … filled by core tokens.
export function fillTokens(key, args) {
  return tr(key).replace(/\{(\d)\}/g, (_, i) => (args[i] === undefined ? "" : token(args[i])));
}
