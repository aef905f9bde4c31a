// A review test number during a sign-in (docs/operations.md "Test numbers"): its registration read
// again at the code step, and its cap of wrong codes; refused, it is answered as any number the
// carriers do not know.

import { reviewEntryById } from "../store/directory/index";
import { raiseNotice, suspendedText } from "../store/notices";
import { type SigninRecord, audit } from "../store/one-time/index";
import { failure, type Flow } from "./flow";
import { t } from "./i18n";
import { phoneKey } from "./limits";
import { identifyPage, type IdentifyValues } from "./pages";

/**
 * The number cannot be confirmed: step 1's page with the answer it gives any number the carriers do
 * not know (nothing says why), whatever step the sign-in is at; posting it starts step 1 again.
 */
export function unconfirmed(f: Flow, reason: string, values: IdentifyValues = {}): Response {
  failure(f, reason);
  return identifyPage(f.ctx, values, { text: t(f.ctx.lang, "errUnconfirmed") }, {});
}

/**
 * A review test number at its cap of wrong codes (TEST_NUMBER_MAX_FAILURES): answered as a number
 * the carriers do not know. The entry that reached the cap audits the suspension; every refusal
 * raises the operator's notice again (kept once), so a notice lost with a request comes back.
 */
export function suspended(
  f: Flow,
  sub: NonNullable<SigninRecord["subscriber"]>,
  crossed: boolean,
  values?: IdentifyValues,
) {
  const max = f.cfg.testNumberMaxFailures;
  if (crossed)
    f.rc.waitUntil(audit(f.env, "test_number.suspended", f.client.clientId || null, "refused", { failures: max }));
  f.rc.waitUntil(raiseNotice(f.env, "test_number.suspended", sub.phoneKey, suspendedText(sub.masked, max)));
  f.rc.log.event = "signin.test_number_suspended";
  return unconfirmed(f, "test_number_suspended", values);
}

/**
 * Whether a review test number's registration, read again, still lets this sign-in go on: not
 * removed or expired, the same code and person at the same number, the app still listed. True for
 * every other number (nothing read).
 */
export async function reviewAllows(f: Flow): Promise<boolean> {
  const sub = f.h.tx.subscriber!;
  if (!sub.review) return true;
  const e = await reviewEntryById(f.env, sub.id);
  return (
    e !== null &&
    e.review !== null &&
    e.review.clients.includes(f.client.clientId) &&
    Date.now() < e.review.expiresAt &&
    e.testOtpHash === sub.testOtpHash &&
    (await phoneKey(e.phone)) === sub.phoneKey
  );
}
