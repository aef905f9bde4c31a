// Dates as a person in Korea reads them: Korea Standard Time (UTC+9, no daylight saving), written out.
// (The pages of the service, the demo app and the dev outbox use them.)

export const KST_OFFSET_MS = 9 * 3600_000;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** `2026년 11월 22일 17:38` (ko) or `22 Nov 2026, 17:38 KST` (en), for epoch milliseconds. */
export function formatKst(ms: number, lang: "ko" | "en"): string {
  const d = new Date(ms + KST_OFFSET_MS);
  const hh = String(d.getUTCHours()).padStart(2, "0");
  const mm = String(d.getUTCMinutes()).padStart(2, "0");
  if (lang === "ko") return `${d.getUTCFullYear()}년 ${d.getUTCMonth() + 1}월 ${d.getUTCDate()}일 ${hh}:${mm}`;
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${hh}:${mm} KST`;
}

/** `17:38` (ko) or `17:38 KST` (en): a clock time today in Korea. */
export function formatKstTime(ms: number, lang: "ko" | "en"): string {
  const d = new Date(ms + KST_OFFSET_MS);
  const hm = `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}`;
  return lang === "ko" ? hm : `${hm} KST`;
}
