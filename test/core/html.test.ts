// core/html: escaping by construction and the CSP form-action sources.
import { describe, expect, it } from "vitest";
import { cspSourceFor, escapeHtml, html, raw } from "../../workers/core/html";

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

  it("form-action sources: the origin of http(s) redirects, the scheme of custom ones", () => {
    expect(cspSourceFor("https://demo.example/callback?x=1")).toBe("https://demo.example");
    expect(cspSourceFor("http://localhost:8787/auth/callback")).toBe("http://localhost:8787");
    expect(cspSourceFor("demoapp://callback")).toBe("demoapp:");
    expect(cspSourceFor("not a url")).toBeUndefined();
  });
});
