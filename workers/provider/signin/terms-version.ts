// The version of the terms a consent page states, posted back with the answer (signin/flow.ts).

import type { ConsentTerms } from "./pages";

/**
 * A short fingerprint of what the consent page states (recipient, purpose, items, retention): an
 * agreement counts only for the terms the person was shown, so a change between the page and the
 * answer (an operator's edit, another isolate's fresher client cache) shows the page again.
 */
export function termsVersion(appName: string, t: Omit<ConsentTerms, "version" | "app">): string {
  const s = JSON.stringify([appName, t.purpose, t.items, t.retention]);
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h2 >>> 0).toString(36) + (h1 >>> 0).toString(36);
}
