// Vite's `?raw` imports (a file's text), used by test/all-in-one/deploy-bindings.test.ts to read wrangler.toml.
declare module "*?raw" {
  const text: string;
  export default text;
}
