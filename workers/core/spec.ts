// The kit package's module, shared with the service (one copy: packages/kit/src/core/).
export * from "../../packages/kit/src/core/spec";
