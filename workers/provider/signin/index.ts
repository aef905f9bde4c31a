// The sign-in's door (docs/signin.md): what the protocol (authorize/), the person's page
// (account/), the consoles and the workers' wiring use of the interaction: begin and continue a
// sign-in, its purpose and transaction types, the pages' frame and texts, the passkey offer and
// enrolment, and the configuration. Outside this folder, only this module is imported
// (test/node/architecture.test.ts).

export { maskPhone } from "./carrier";
export { type Operator, type SigninConfig, type SigninVars, operatorName, signinConfig } from "./config";
export { AUTO_COOKIE, autoLoginEligible, deviceIdOf } from "./device";
export { type FirstParty, type FirstPartyPage, firstParty } from "./first-party";
export { pageContext } from "./flow";
export { type Lang, itemName, t } from "./i18n";
export { type PageContext, bareContext, page, stopPage } from "./pages";
export { browserHashOf, enrol, enrolPage, enrolmentOf, isActive, refusalText, takeTicket } from "./passkey/enrol";
export { pt, waitText } from "./passkey/i18n";
export { CREATE_SCRIPT, enrolForm, offerFailed, passkeyOffer } from "./passkey/offer";
export { openTicket } from "./passkey/webauthn";
export { type SigninEnd, type SigninPurpose, proofDetail } from "./purpose";
export { readOutbox } from "../store/sms-outbox";
export { GATEWAYS } from "../store/sms/index";
export { beginSignIn, continueSignIn } from "./steps";
export { mayTest, testingStop } from "./testing";
export { type Arrival, textArrived } from "./text";
export { DEV_TEXT, textConfig } from "./text-config";
export type { Transaction } from "./transaction";
