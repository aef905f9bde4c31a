// Charts drawn on the server as SVG (docs/console.md "Overview"): a column chart of counts per step,
// or a line of a share. Each is an image with a text alternative (its title, range and total), and
// the numbers behind it follow in a table inside <details>, so nothing is only in the picture. No
// script, no CDN: the page's CSP allows no more than its own styles.

import { escapeHtml, html, raw, type SafeHtml } from "../core/html";
import type { Lang } from "./i18n";

const W = 640;
const H = 160;
const PAD = { left: 44, right: 8, top: 10, bottom: 22 };

/** Fills the steps of [from, to) that have no count with 0. */
export function fill(
  points: readonly [string, number][],
  from: number,
  to: number,
  stepMs: number,
): [number, number][] {
  const at = new Map(points.map(([t, n]) => [Date.parse(t), n]));
  const out: [number, number][] = [];
  for (let t = from - (from % stepMs); t < to; t += stepMs) out.push([t, at.get(t) ?? 0]);
  return out;
}

/** Korean time of an instant as the axis shows it: HH:MM for steps under a day, else MM-DD. */
function label(t: number, stepMs: number): string {
  const iso = new Date(t + 9 * 3600_000).toISOString();
  return stepMs < 86_400_000 ? iso.slice(11, 16) : iso.slice(5, 10);
}

const fmt = (n: number) => (Number.isInteger(n) ? n.toLocaleString("en-US") : n.toFixed(1));

/** A chart's points: `[step start, value]`; a share's step with nothing to share is -1 (no dot). */
export interface ChartSpec {
  id: string;
  title: string;
  lang: Lang;
  stepMs: number;
  /** A share in percent (a line from 0 to 100) rather than counts (columns). */
  percent?: boolean;
}

/** An SVG chart of `data` with its text alternative and its table. */
export function chart(spec: ChartSpec, data: readonly [number, number][]): SafeHtml {
  const max = spec.percent ? 100 : Math.max(1, ...data.map(([, n]) => n));
  const total = data.reduce((a, [, n]) => a + Math.max(0, n), 0);
  const iw = W - PAD.left - PAD.right;
  const ih = H - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (data.length <= 1 ? 0 : (i * iw) / data.length);
  const y = (n: number) => PAD.top + ih - (n / max) * ih;
  const bw = Math.max(1, iw / Math.max(1, data.length) - 1);
  // a share is a dot per step that had anything to share (a step with nothing is not 0%)
  const marks = spec.percent
    ? data
        .map(([, n], i) =>
          n >= 0 ? `<circle cx="${(x(i) + bw / 2).toFixed(1)}" cy="${y(n).toFixed(1)}" r="3" fill="#1b64da"/>` : "",
        )
        .join("")
    : data
        .map(([, n], i) =>
          n > 0
            ? `<rect x="${x(i).toFixed(1)}" y="${y(n).toFixed(1)}" width="${bw.toFixed(1)}" height="${(PAD.top + ih - y(n)).toFixed(1)}" fill="#1b64da"/>`
            : "",
        )
        .join("");
  const first = data[0]?.[0];
  const last = data[data.length - 1]?.[0];
  const summary =
    spec.lang === "ko"
      ? `${spec.title}: ${spec.percent ? "최고 " + fmt(Math.max(0, ...data.map(([, n]) => n))) + "%" : "합계 " + fmt(total)}`
      : `${spec.title}: ${spec.percent ? "peak " + fmt(Math.max(0, ...data.map(([, n]) => n))) + "%" : "total " + fmt(total)}`;
  const svg = `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-labelledby="${spec.id}-t" focusable="false" class="chart-svg">
<title id="${spec.id}-t">${escapeHtml(summary)}</title>
<line x1="${PAD.left}" y1="${PAD.top + ih}" x2="${W - PAD.right}" y2="${PAD.top + ih}" stroke="#8b95a1"/>
<text x="${PAD.left - 6}" y="${PAD.top + 8}" text-anchor="end" font-size="11" fill="#4e5968">${fmt(max)}${spec.percent ? "%" : ""}</text>
<text x="${PAD.left - 6}" y="${PAD.top + ih}" text-anchor="end" font-size="11" fill="#4e5968">0</text>
${first !== undefined ? `<text x="${PAD.left}" y="${H - 6}" font-size="11" fill="#4e5968">${label(first, spec.stepMs)}</text>` : ""}
${last !== undefined ? `<text x="${W - PAD.right}" y="${H - 6}" text-anchor="end" font-size="11" fill="#4e5968">${label(last, spec.stepMs)}</text>` : ""}
${marks}
</svg>`;
  const rows = data
    .filter(([, n]) => (spec.percent ? n >= 0 : n > 0))
    .map(
      ([t, n]) =>
        html`<tr><th scope="row">${label(t, spec.stepMs)}</th><td>${fmt(n)}${spec.percent ? "%" : ""}</td></tr>`,
    );
  return html`<figure class="metric" id="${spec.id}"><figcaption>${spec.title}</figcaption>${raw(svg)}
<details><summary>${spec.lang === "ko" ? "숫자로 보기" : "Show the numbers"}</summary>${
    rows.length
      ? html`<table><caption>${spec.title}</caption><thead><tr><th scope="col">${spec.lang === "ko" ? "시각 (KST)" : "Time (KST)"}</th><th scope="col">${spec.lang === "ko" ? "값" : "Value"}</th></tr></thead><tbody>${rows}</tbody></table>`
      : html`<p>${spec.lang === "ko" ? "이 기간에는 값이 없습니다." : "Nothing in this range."}</p>`
  }</details></figure>`;
}
