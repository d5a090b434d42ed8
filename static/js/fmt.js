// Number formatting for display only (no model arithmetic lives here).
import { lang } from "./i18n.js";

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
