// GET / in the dev worker: the kit's demo (README "Quick start"): "log in with phone number", then the
// decrypted profile from the session (dates in Korea Standard Time, written out), with logout,
// disconnect (confirmed first) and the way to turn automatic login off. No script.

import type { RpEnv } from "../../packages/kit/src/config";
import { html, type SafeHtml } from "../core/html";
import { kitPage } from "../../packages/kit/src/pages";
import { currentSession, flatUser, type KitUser } from "../../packages/kit/src/sessions";
import type { RequestContext, Route } from "../core/router";
import { formatKst } from "../provider/dates";
import { rpConfig } from "../../packages/kit/src/config";
import { type IdentityItem } from "../core/spec";

const LABELS: Record<IdentityItem, [string, string]> = {
  name: ["이름", "Name"],
  phoneNo: ["휴대폰번호", "Phone number"],
  birthdate: ["생년월일", "Date of birth"],
  birthday: ["생일", "Birthday"],
  gender: ["성별", "Gender"],
  agegroup: ["연령대", "Age group"],
  foreign: ["내외국인", "Nationality"],
  telcoCd: ["통신사", "Carrier"],
  ci: ["연계정보(CI)", "CI"],
};

const SHOWN: IdentityItem[] = [
  "name",
  "phoneNo",
  "birthdate",
  "birthday",
  "gender",
  "agegroup",
  "foreign",
  "telcoCd",
  "ci",
];

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

function display(item: IdentityItem, v: string): string {
  if (v === "") return "—";
  switch (item) {
    case "gender":
      return v === "M" ? "남성 (male)" : "여성 (female)";
    case "foreign":
      return v === "L" ? "내국인 (national)" : "외국인 (foreign)";
    case "telcoCd":
      return { S: "SKT", K: "KT", L: "LG U+" }[v] ?? v;
    case "agegroup":
      return `${v}대 (${v}s)`;
    case "phoneNo":
      return v.length === 11 ? `${v.slice(0, 3)}-${v.slice(3, 7)}-${v.slice(7)}` : v;
    case "birthdate": {
      // YYMMDD: the century is the one that puts the date in the past
      const yy = Number(v.slice(0, 2));
      const year = 2000 + yy > new Date().getUTCFullYear() ? 1900 + yy : 2000 + yy;
      const [m, d] = [Number(v.slice(2, 4)), Number(v.slice(4, 6))];
      return `${year}년 ${m}월 ${d}일 (${d} ${MONTHS[m - 1] ?? "?"} ${year})`;
    }
    case "birthday": {
      const [m, d] = [Number(v.slice(0, 2)), Number(v.slice(2, 4))];
      return `${m}월 ${d}일 (${d} ${MONTHS[m - 1] ?? "?"})`;
    }
    case "ci":
      return v.length > 16 ? `${v.slice(0, 12)}…` : v;
    default:
      return v;
  }
}

function profile(u: KitUser, accountUrl: string): SafeHtml {
  const rows = SHOWN.filter((i) => u[i] !== undefined).map(
    (i) =>
      html`<tr><th>${LABELS[i][0]} <span class="en">${LABELS[i][1]}</span></th><td data-item="${i}">${display(i, u[i]!)}</td></tr>`,
  );
  const auto = u.autoLoginYn === "Y" ? "사용 (on)" : "사용 안 함 (off)";
  return html`<h1>${u.name || "회원"}님, 환영합니다 <span class="en">/ Welcome</span></h1>
<p>휴대폰번호 로그인으로 받은 정보입니다. <span class="en">Your profile from the phone-number login.</span></p>
<table>${rows}
<tr><th>자동 로그인 <span class="en">Automatic login</span></th><td data-item="autoLoginYn">${auto}</td></tr>
<tr><th>로그인 시각 <span class="en">Logged in at</span></th><td data-item="loginAt">${loginTime(u.loginAt)}</td></tr>
<tr><th>plid</th><td data-item="plid"><code>${u.plid}</code></td></tr></table>
${
  u.autoLoginYn === "Y"
    ? html`<p>자동 로그인은 <a href="${accountUrl}">내 휴대폰번호 로그인</a>에서 끌 수 있습니다. <span class="en">Turn automatic login off on <a href="${accountUrl}" lang="en">My phone number login</a>.</span></p>`
    : ""
}
<div class="actions">
<form method="post" action="/auth/logout"><button type="submit" class="secondary">로그아웃 <span lang="en">/ Log out</span></button></form>
<a class="button danger" href="/?confirm=disconnect">연결 끊기 <span lang="en">/ Disconnect</span></a>
</div>`;
}

function loginTime(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : `${formatKst(ms, "ko")} (${formatKst(ms, "en")})`;
}

/** Disconnecting ends the app's link for good: asked first, with what it means. */
const CONFIRM_DISCONNECT = html`<h1>연결을 끊을까요? <span class="en">/ Disconnect?</span></h1>
<p>연결을 끊으면 데모 쇼핑몰은 휴대폰번호 로그인 정보를 더 이상 받지 않고, 다음 로그인 때 정보 제공 동의를 다시 묻습니다.
<span class="en">The Demo Shop stops receiving your phone-number login details; your next login asks for your consent again.</span></p>
<div class="actions">
<form method="post" action="/auth/disconnect"><button type="submit" class="danger">연결 끊기 <span lang="en">/ Disconnect</span></button></form>
<a class="button secondary" href="/">취소 <span lang="en">/ Cancel</span></a>
</div>`;

const FLASH: Record<string, SafeHtml> = {
  logout: html`<p class="flash" role="status">로그아웃했습니다. <span class="en">You are logged out.</span></p>`,
  disconnect: html`<p class="flash" role="status">연결을 끊었습니다. 다음 로그인 때 동의를 다시 묻습니다. <span class="en">Disconnected: your next login asks for your consent again.</span></p>`,
};

const WELCOME = html`<h1>데모 쇼핑몰 <span class="en">/ Demo Shop</span></h1>
<p>휴대폰번호로 간편하게 로그인하세요. <span class="en">Log in with your phone number.</span></p>
<p><a class="button" id="login" href="/auth/login?return_to=%2F">휴대폰번호로 로그인 <span lang="en">/ Log in with phone number</span></a></p>
<p class="en">Test subscriber: SKT · 홍길동 · 01012345678 · code 123456</p>`;

async function home(req: Request, env: RpEnv, rc: RequestContext): Promise<Response> {
  const s = await currentSession(req, env);
  const title = "휴대폰번호 로그인 데모 / Phone login demo";
  if (s && rc.url.searchParams.get("confirm") === "disconnect") return kitPage(title, CONFIRM_DISCONNECT);
  // a fixed set of lines, never the query's text
  const done = rc.url.searchParams.get("done") ?? "";
  const flash = Object.hasOwn(FLASH, done) ? FLASH[done]! : "";
  const accountUrl = `${rpConfig(env).providerBaseUrl}/account`;
  return kitPage(title, html`${flash}${s ? profile(flatUser(s.identity, s.record), accountUrl) : WELCOME}`);
}

export const routes: Route<RpEnv>[] = [{ method: "GET", path: "/", handler: home, page: true }];
