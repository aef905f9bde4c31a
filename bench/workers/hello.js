// The ceiling: the least a Worker can do per request, served exactly like the project's workers.
export default {
  fetch() {
    return new Response("Hello World!");
  },
};
