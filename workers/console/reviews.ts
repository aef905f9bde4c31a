// /console/reviews (docs/console.md "Reviews", docs/developers.md "Review"): the queue of developers'
// apps waiting for review, each with what it would show people (its name, the items it asks for,
// the purposes and retention of the consent page) beside what it has now, and its redirect URIs;
// an editor approves it (it goes live with what was reviewed) or rejects it with a reason the
// developer reads. The pages run the admin API's services (admin/access.ts `perform`).

import { html } from "../core/html";
import type { RequestContext } from "../core/router";
import { perform } from "../admin/access";
import { approveReview, listReviews, rejectReview, type ReviewView, type Terms } from "../admin/reviews";
import { callerOf, failed } from "./apps";
import type { ConsoleEnv, Signed } from "./gate";
import { c } from "./i18n";
import { consolePage, covers, hidden, outcomeBox, when, type Outcome } from "./layout";

/** GET /console/reviews (and the answer of a decision). */
export async function reviewsPage(req: Request, env: ConsoleEnv, rc: RequestContext, s: Signed, o: Outcome = {}) {
  const { v } = s;
  const L = v.lang;
  const { reviews } = await perform(listReviews, env, callerOf(rc, s), undefined);
  const editor = covers(v.role, "editor");
  const terms = (t: Terms | null) =>
    t
      ? html`<dl><dt>${c(L, "name")}</dt><dd>${t.name}</dd><dt>${c(L, "items")}</dt><dd>${t.items.join(", ") || "—"}</dd><dt>${c(L, "purpose")}</dt><dd>${t.purpose ?? c(L, "defaultText")}</dd><dt>${c(L, "retention")}</dt><dd>${t.retention ?? c(L, "defaultText")}</dd></dl>`
      : "";
  const item = (r: ReviewView) => html`<section aria-labelledby="rv-${r.id}">
<h2 id="rv-${r.id}">${r.proposed.name} <span class="mono">${r.client_id}</span></h2>
<p>${c(L, r.stage === "live" ? "reviewChange" : "reviewNew")} · ${c(L, "submitted")} ${when(r.submitted_at, L)} · <code>${r.submitted_by}</code></p>
<h3>${c(L, "reviewProposed")}</h3>${terms(r.proposed)}
${r.stage === "live" ? html`<h3>${c(L, "reviewCurrent")}</h3>${terms(r.current)}` : ""}
<h3>${c(L, "redirectUris")}</h3><ul>${r.redirect_uris.map((u) => html`<li class="mono">${u}</li>`)}</ul>
${
  editor
    ? html`<form class="inline" method="post" action="/console/reviews/${r.id}/approve">${hidden(v)}<button type="submit">${c(L, "approve")}</button></form>
<form class="card" method="post" action="/console/reviews/${r.id}/reject">${hidden(v)}<label>${c(L, "rejectReason")}<textarea name="reason" required maxlength="500"></textarea></label><p><button type="submit" class="danger">${c(L, "reject")}</button></p></form>`
    : ""
}
</section>`;
  const body = html`<h1>${c(L, "reviews")}</h1><p class="lead">${c(L, "reviewsLead")}</p>${outcomeBox(v, rc.requestId, o, "secretOnce")}
${reviews.length ? reviews.map(item) : html`<p>${c(L, "noReviews")}</p>`}`;
  return consolePage(v, c(L, "reviews"), body, { status: o.status });
}

/** POST /console/reviews/:id/approve|reject: the decision, then the queue. */
export function reviewAction(decision: "approve" | "reject") {
  return async (req: Request, env: ConsoleEnv, rc: RequestContext, s: Signed): Promise<Response> => {
    const L = s.v.lang;
    try {
      const id = rc.params.id ?? "";
      if (decision === "approve") await perform(approveReview, env, callerOf(rc, s), { id });
      else await perform(rejectReview, env, callerOf(rc, s), { id, reason: s.params.get("reason") ?? "" });
      return reviewsPage(req, env, rc, s, { notice: c(L, decision === "approve" ? "approved" : "rejected") });
    } catch (err) {
      return reviewsPage(req, env, rc, s, failed(err));
    }
  };
}
