// The header every page shares: the site's name, the navigation, and on customer pages the
// identity box app.js fills. Drawn from here so the pages do not each repeat it. A page asks for
// it with <header class="top" data-layout="customer"> (or "operator": no identity box, since the
// operator signs in with the organizer key on the page itself).
// Loaded with `defer` before the page's own script: deferred scripts run in order once the page
// is parsed and before DOMContentLoaded, when app.js fills the identity box.
(function () {
  "use strict";

  const LINKS = [["index.html", "Events"], ["operator.html", "Operator"]];

  function link(href, text) {
    const anchor = document.createElement("a");
    anchor.href = href;
    anchor.textContent = text;
    return anchor;
  }

  const header = document.querySelector("header.top[data-layout]");
  if (!header || header.childElementCount) return;
  const here = window.location.pathname.split("/").pop() || "index.html";
  const nav = document.createElement("nav");
  for (const [href, text] of LINKS) {
    const anchor = link(href, text);
    if (href === here) anchor.setAttribute("aria-current", "page");
    nav.append(anchor);
  }
  header.append(link("index.html", "Holdfast"), nav);
  if (header.dataset.layout === "customer") {
    const who = document.createElement("div");
    who.className = "who";
    who.id = "who";
    header.append(who);
  }
})();
