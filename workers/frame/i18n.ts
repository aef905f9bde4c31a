// The frame's words, Korean and English: what every page of both consoles shows around its body.

import type { Lang } from "../provider/signin/index";

export type { Lang } from "../provider/signin/index";

const ko = {
  skip: "본문으로 건너뛰기",
  mainNav: "콘솔 메뉴",
  signOut: "로그아웃",
  switchLang: "English",
  errorTitle: "요청을 처리하지 못했습니다",
  requestId: "요청 ID: {id}",
};

export type FrameKey = keyof typeof ko;

const en: Record<FrameKey, string> = {
  skip: "Skip to content",
  mainNav: "Console menu",
  signOut: "Sign out",
  switchLang: "한국어",
  errorTitle: "The request could not be done",
  requestId: "Request id: {id}",
};

const TABLES: Record<Lang, Record<FrameKey, string>> = { ko, en };

/** A frame text, with `{name}` placeholders filled. */
export function f(lang: Lang, key: FrameKey, vars: Record<string, string> = {}): string {
  return TABLES[lang][key].replace(/\{(\w+)\}/g, (m, k: string) => vars[k] ?? m);
}
