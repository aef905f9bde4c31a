// Korean particles after a name or a number (docs/signin.md "Languages"): 과/와, 을/를, 이/가, 은/는
// and 으로/로 chosen from the last syllable's final consonant (받침), as a person writes them, not
// "과(와)". A word ending in a digit is read as Korean reads the number (…8 is 팔, …10 is 십). A word
// ending in neither Hangul nor a digit (a Latin app name) has no reading to go by: the caller uses a
// neutral construction instead (`hasReading`).

/** The particle pairs: [after a final consonant, after none]. */
export const PARTICLES = {
  gwa: ["과", "와"],
  eul: ["을", "를"],
  i: ["이", "가"],
  eun: ["은", "는"],
  euro: ["으로", "로"],
} as const;

export type Particle = keyof typeof PARTICLES;

/** 받침 of the reading of a final digit: 영 일 이 삼 사 오 육 칠 팔 구 (ㄹ marked apart: 으로 takes it as none). */
const DIGIT_FINAL: readonly ("none" | "rieul" | "other")[] = [
  "other", // 영
  "rieul", // 일
  "none", // 이
  "other", // 삼
  "none", // 사
  "none", // 오
  "other", // 육
  "rieul", // 칠
  "rieul", // 팔
  "none", // 구
];

/** The final consonant of how `word` ends when read: none, ㄹ, another, or no reading (not Hangul, not a digit). */
function finalOf(word: string): "none" | "rieul" | "other" | null {
  const w = word.trimEnd();
  const last = w.charCodeAt(w.length - 1);
  if (last >= 0xac00 && last <= 0xd7a3) {
    const jong = (last - 0xac00) % 28;
    return jong === 0 ? "none" : jong === 8 ? "rieul" : "other";
  }
  const digits = /(\d+)$/.exec(w)?.[1];
  if (!digits) return null;
  const zeros = /0*$/.exec(digits)![0].length;
  if (zeros === digits.length) return "other"; // 영
  // a round number ends on its unit: 십 (ㅂ), 백 (ㄱ), 천 (ㄴ), 만 (ㄴ), …만, 억 (ㄱ)
  if (zeros > 0) return "other";
  return DIGIT_FINAL[Number(digits[digits.length - 1])]!;
}

/** Whether `word` ends in something with a Korean reading (Hangul or a digit). */
export function hasReading(word: string): boolean {
  return finalOf(word) !== null;
}

/** `word` with its particle (`particle("Demo 8", "euro")` → "Demo 8로"); the first form when it has no reading. */
export function withParticle(word: string, particle: Particle): string {
  const f = finalOf(word);
  const [after, bare] = PARTICLES[particle];
  const final = particle === "euro" ? f === "other" : f === "other" || f === "rieul";
  return `${word}${f === null || final ? after : bare}`;
}

/**
 * `name` followed by `particle` as Korean writes it: the particle chosen by its reading, or, for a
 * name with no Korean reading (a Latin app name), the neutral `name 앱` + particle.
 */
export function appWithParticle(name: string, particle: Particle): string {
  return hasReading(name) ? withParticle(name, particle) : withParticle(`${name} 앱`, particle);
}
