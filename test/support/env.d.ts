declare global {
  namespace Cloudflare {
    interface GlobalProps {
      mainModule: typeof import("../../workers/all-in-one/index");
    }
  }
}
export {};
