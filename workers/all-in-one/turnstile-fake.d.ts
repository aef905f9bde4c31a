// The Turnstile fake's module (turnstile-fake.js): a fetch handler.
declare const fake: { fetch(req: Request): Promise<Response> };
export default fake;
