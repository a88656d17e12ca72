// Navigation: how a view or the session asks for the current page to be drawn again. The router (app.js)
// registers itself here, so that views import this module and never app.js (no import cycle).

let router = async () => {};

export function setRouter(fn) {
  router = fn;
}

export function route() {
  return router();
}
