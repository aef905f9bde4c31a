// readBodyText has two paths: one read when the request declares its length, the
// chunk loop when it does not (a streamed body). Both must keep the same limit and UTF-8 rules.

import { describe, expect, it } from "vitest";
import { readBodyText, readStreamCapped } from "../../workers/core/http";

const utf8 = (s: string) => new TextEncoder().encode(s);

function streamed(parts: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(p);
      c.close();
    },
  });
}

describe("core/http readBodyText (docs/architecture.md §4.7 body limit)", () => {
  it("reads a body with a declared length in one piece, UTF-8 included", async () => {
    const body = utf8("name=%ED%99%8D&note=홍길동");
    const req = new Request("http://x/", {
      method: "POST",
      headers: { "Content-Length": String(body.byteLength) },
      body,
    });
    expect(req.headers.get("Content-Length")).toBe(String(body.byteLength));
    expect(await readBodyText(req, 1024)).toBe("name=%ED%99%8D&note=홍길동");
  });

  it("reads a streamed body without a declared length chunk by chunk", async () => {
    const req = new Request("http://x/", { method: "POST", body: streamed([utf8("a=1&"), utf8("b=한")]) });
    expect(req.headers.get("Content-Length")).toBeNull();
    expect(await readBodyText(req, 1024)).toBe("a=1&b=한");
  });

  it("refuses more than the limit on both paths: by the declared length, and by the bytes actually read", async () => {
    const big = utf8("a=" + "x".repeat(2000));
    const post = (length: string) =>
      new Request("http://x/", { method: "POST", headers: { "Content-Length": length }, body: big });
    await expect(readBodyText(post(String(big.byteLength)), 1024)).rejects.toMatchObject({ status: 413 });
    // a request made in process can claim less than it carries: the bytes read still count
    await expect(readBodyText(post("10"), 1024)).rejects.toMatchObject({ status: 413 });
    await expect(readBodyText(new Request("http://x/", { method: "POST", body: big }), 1024)).rejects.toMatchObject({
      status: 413,
    });
    const stream = new Request("http://x/", {
      method: "POST",
      body: streamed([big.subarray(0, 1000), big.subarray(1000)]),
    });
    await expect(readBodyText(stream, 1024)).rejects.toMatchObject({ status: 413 });
  });

  it("a body that is not UTF-8 is invalid_request on both paths", async () => {
    const bad = new Uint8Array([0x61, 0x3d, 0xff, 0xfe]);
    await expect(readBodyText(new Request("http://x/", { method: "POST", body: bad }), 1024)).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      readBodyText(new Request("http://x/", { method: "POST", body: streamed([bad]) }), 1024),
    ).rejects.toMatchObject({ status: 400 });
  });

  it("U+FFFD in a body is refused on both paths (the one-read path sees it where bytes were not UTF-8); a leading byte-order mark is dropped", async () => {
    const declared = (b: Uint8Array) =>
      new Request("http://x/", { method: "POST", headers: { "Content-Length": String(b.byteLength) }, body: b });
    for (const text of ["a=\uFFFD", "\uFFFD"]) {
      await expect(readBodyText(declared(utf8(text)), 1024)).rejects.toMatchObject({ status: 400 });
      await expect(
        readBodyText(new Request("http://x/", { method: "POST", body: streamed([utf8(text)]) }), 1024),
      ).rejects.toMatchObject({ status: 400 });
    }
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8("a=1")]);
    expect(await readBodyText(declared(bom), 1024)).toBe("a=1");
    expect(await readBodyText(new Request("http://x/", { method: "POST", body: streamed([bom]) }), 1024)).toBe("a=1");
  });

  it("the limit counts bytes, not characters: Hangul over the limit in bytes is refused though its characters fit", async () => {
    const body = utf8("n=" + "홍".repeat(400)); // 402 characters, 1,202 bytes
    const post = (length: string) =>
      new Request("http://x/", { method: "POST", headers: { "Content-Length": length }, body });
    await expect(readBodyText(post("10"), 1024)).rejects.toMatchObject({ status: 413 });
    expect(await readBodyText(post(String(body.byteLength)), 2048)).toBe("n=" + "홍".repeat(400));
  });

  it("no body is the empty string", async () => {
    expect(await readBodyText(new Request("http://x/", { method: "POST" }), 1024)).toBe("");
    expect(await readBodyText(new Request("http://x/"), 1024)).toBe("");
  });

  it("past the limit nothing is kept; a moderately oversized upload is read to its end (the client sees the 413), a huge one is cancelled", async () => {
    const counting = (chunks: number, size: number) => {
      const seen = { pulled: 0, cancelled: false };
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          if (seen.pulled === chunks) return c.close();
          seen.pulled++;
          c.enqueue(new Uint8Array(size));
        },
        cancel() {
          seen.cancelled = true;
        },
      });
      return { stream, seen };
    };
    const small = counting(20, 8 * 1024); // 160 KiB against 64 KiB
    expect(await readStreamCapped(small.stream, 64 * 1024, 1024 * 1024)).toBeNull();
    expect(small.seen).toEqual({ pulled: 20, cancelled: false });
    const huge = counting(1000, 8 * 1024); // 8 MiB
    expect(await readStreamCapped(huge.stream, 64 * 1024, 1024 * 1024)).toBeNull();
    expect(huge.seen.cancelled).toBe(true);
    expect(huge.seen.pulled).toBeLessThan(200);
  });
});
