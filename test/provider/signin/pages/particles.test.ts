// Korean particles after app names and numbers (workers/provider/signin/particles.ts): chosen by the
// final consonant of how the word is read, as a person writes them; a name with no Korean reading
// gets the neutral "… 앱" construction. The expected forms are written out here, not computed.
import { describe, expect, it } from "vitest";
import { appWithParticle, withParticle } from "../../../../workers/provider/signin/particles";

describe("Korean particles", () => {
  it("after Hangul: 받침 or none, and 으로/로 with the ㄹ exception", () => {
    const cases: [string, Parameters<typeof withParticle>[1], string][] = [
      ["홍길동", "gwa", "홍길동과"],
      ["김철수", "gwa", "김철수와"],
      ["카카오", "eul", "카카오를"],
      ["쿠팡", "eul", "쿠팡을"],
      ["네이버", "i", "네이버가"],
      ["당근마켓", "i", "당근마켓이"],
      ["토스", "eun", "토스는"],
      ["배달의민족", "eun", "배달의민족은"],
      ["서울", "euro", "서울로"],
      ["부산", "euro", "부산으로"],
      ["제주", "euro", "제주로"],
      ["서울", "gwa", "서울과"],
    ];
    for (const [word, p, want] of cases) expect(withParticle(word, p), `${word} ${p}`).toBe(want);
  });

  it("after a number, as Korean reads it (영 일 이 삼 사 오 육 칠 팔 구, 십 백 천 만)", () => {
    const cases: [string, Parameters<typeof withParticle>[1], string][] = [
      ["010-****-5678", "euro", "010-****-5678로"], // 팔
      ["010-****-6789", "euro", "010-****-6789로"], // 구
      ["010-****-7890", "euro", "010-****-7890으로"], // 구십
      ["010-****-8901", "euro", "010-****-8901로"], // 일
      ["010-****-8901", "gwa", "010-****-8901과"], // 일: ㄹ is a 받침
      ["010-****-1233", "euro", "010-****-1233으로"], // 삼
      ["010-****-1236", "eul", "010-****-1236을"], // 육
      ["010-****-1234", "i", "010-****-1234가"], // 사
      ["010-****-1200", "euro", "010-****-1200으로"], // 천이백
      ["010-****-1000", "gwa", "010-****-1000과"], // 천
      ["010-****-0000", "euro", "010-****-0000으로"], // 영
      ["Shop 24", "gwa", "Shop 24와"], // 이십사
      ["마트 7", "euro", "마트 7로"], // 칠
    ];
    for (const [word, p, want] of cases) expect(withParticle(word, p), `${word} ${p}`).toBe(want);
  });

  it("an app name with no Korean reading takes the neutral '… 앱' form; one with a reading keeps its own", () => {
    expect(appWithParticle("Demo Shop", "gwa")).toBe("Demo Shop 앱과");
    expect(appWithParticle("Demo Shop", "euro")).toBe("Demo Shop 앱으로");
    expect(appWithParticle("Limited App", "eul")).toBe("Limited App 앱을");
    expect(appWithParticle("두 번째 앱", "euro")).toBe("두 번째 앱으로");
    expect(appWithParticle("데모 쇼핑몰", "gwa")).toBe("데모 쇼핑몰과");
    expect(appWithParticle("11번가", "gwa")).toBe("11번가와");
    expect(appWithParticle("Shop 24", "euro")).toBe("Shop 24로");
  });
});
