// The encrypted fields of /v1/user/me decrypt with the openssl command line (spec §2.2):
// AES-128-CBC, key = IV = hex of the secret's first 16 characters, Base64 input. Runs against the
// real `npm start` server and a sign-in driven through the pages' form contract.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sharedServer, type Server } from "./server";
import { signIn } from "./signin-driver";

const SECRET = "demoSecret0123456789abcdefABCDEF";
const KEY_HEX = Buffer.from(SECRET.slice(0, 16), "ascii").toString("hex");

const SUBSCRIBERS = [
  {
    telco: "S",
    name: "홍길동",
    phone: "01012345678",
    code: "123456",
    ci: "CIhong0001AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
    birthday: "0315",
    birthdate: "900315",
  },
  {
    telco: "K",
    name: "김영희",
    phone: "01023456789",
    code: "234567",
    ci: "CIkim0002BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA==",
    birthday: "1201",
    birthdate: "011201",
  },
  {
    telco: "L",
    name: "John Smith",
    phone: "01034567890",
    code: "345678",
    ci: "CIsmith0003CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCA==",
    birthday: "0704",
    birthdate: "850704",
  },
  {
    telco: "S",
    name: "이민수",
    phone: "01045678901",
    code: "456789",
    ci: "CIlee0004DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDA==",
    birthday: "0520",
    birthdate: "120520",
  },
];

function opensslDecrypt(b64: string): string {
  return execFileSync("openssl", ["enc", "-d", "-aes-128-cbc", "-K", KEY_HEX, "-iv", KEY_HEX, "-base64", "-A"], {
    input: b64,
  }).toString("utf8");
}

let server: Server;
beforeAll(async () => {
  server = sharedServer();
});
afterAll(async () => {
  await server?.stop();
});

describe("openssl enc -d -aes-128-cbc decrypts every encrypted item", () => {
  it.each(SUBSCRIBERS)("$name: ci, phoneNo, name, birthday, birthdate match the seed", async (s) => {
    const authorize = `${server.base}/oauth2/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: "demo-client",
      redirect_uri: "https://demo.example/callback",
      state: "openssl-test",
      prompt: "login",
    })}`;
    const { code, location } = await signIn(authorize, s);
    expect(location.origin + location.pathname).toBe("https://demo.example/callback");
    expect(location.searchParams.get("state")).toBe("openssl-test");
    expect(code).toBeTruthy();

    const tokenRes = await fetch(`${server.base}/oauth2/token`, {
      method: "POST",
      headers: {
        Authorization: "Basic " + Buffer.from(`demo-client:${SECRET}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ grant_type: "authorization_code", code: code! }),
    });
    expect(tokenRes.status).toBe(200);
    const { access_token } = (await tokenRes.json()) as { access_token: string };
    const me = await fetch(`${server.base}/v1/user/me`, { headers: { Authorization: `Bearer ${access_token}` } });
    expect(me.status).toBe(200);
    const { user } = (await me.json()) as { user: Record<string, string> };
    expect(opensslDecrypt(user.ci!)).toBe(s.ci);
    expect(opensslDecrypt(user.phoneNo!)).toBe(s.phone);
    expect(opensslDecrypt(user.name!)).toBe(s.name);
    expect(opensslDecrypt(user.birthday!)).toBe(s.birthday);
    expect(opensslDecrypt(user.birthdate!)).toBe(s.birthdate);
  });
});
