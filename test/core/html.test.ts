// core/html: escaping by construction and the CSP form-action sources.
import { describe, expect, it } from "vitest";
import { cspSourceFor, escapeHtml, html, pageHeaders, raw } from "../../workers/core/html";

describe("core/html", () => {
  it("escapes every interpolation, keeps SafeHtml, joins arrays and drops null/false", () => {
    const evil = `<script>alert("x")</script>&'`;
    expect(html`<p title="${evil}">${evil}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>',
    );
    expect(html`${raw("<b>")}${[html`<i>${"<"}</i>`, "&"]}${null}${false}${undefined}${0}`.value).toBe(
      "<b><i>&lt;</i>&amp;0",
    );
    expect(escapeHtml(`"'<>&`)).toBe("&quot;&#39;&lt;&gt;&amp;");
  });

  it("each page's headers are its own: its nonce, its cookies, its extra headers, over the same strict set", () => {
    const a = pageHeaders({
      nonce: "n1",
      cookies: ["a=1"],
      headers: { "Retry-After": "5" },
      formAction: ["https://a.example"],
    });
    const b = pageHeaders({ nonce: "n2", script: true });
    expect(a.get("Content-Security-Policy")).toBe(
      "default-src 'none'; style-src 'nonce-n1'; form-action 'self' https://a.example; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(b.get("Content-Security-Policy")).toBe(
      "default-src 'none'; script-src 'nonce-n2'; style-src 'nonce-n2'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect([a.get("Set-Cookie"), a.get("Retry-After")]).toEqual(["a=1", "5"]);
    expect([b.get("Set-Cookie"), b.get("Retry-After")]).toEqual([null, null]);
    for (const h of [a, b]) {
      expect(h.get("Content-Type")).toBe("text/html; charset=utf-8");
      expect(h.get("X-Frame-Options")).toBe("DENY");
      expect(h.get("Cache-Control")).toBe("no-store");
      expect(h.get("Strict-Transport-Security")).toBe("max-age=31536000");
    }
    expect([...b.keys()]).toHaveLength(8); // the seven shared and the policy
  });

  it("form-action sources: the origin of http(s) redirects, the scheme of custom ones", () => {
    expect(cspSourceFor("https://demo.example/callback?x=1")).toBe("https://demo.example");
    expect(cspSourceFor("http://localhost:8787/auth/callback")).toBe("http://localhost:8787");
    expect(cspSourceFor("demoapp://callback")).toBe("demoapp:");
    expect(cspSourceFor("not a url")).toBeUndefined();
  });
});
