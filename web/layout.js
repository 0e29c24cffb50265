// The header every page shares: the site's name, the navigation, and on customer pages the
// identity box app.js fills. Drawn from here so the pages do not each repeat it. A page asks for
// it with <header class="top" data-layout="customer"> (or "operator": no identity box, since the
// operator signs in with the organizer key on the page itself).
// Loaded with `defer` before the page's own script: deferred scripts run in order once the page
// is parsed and before DOMContentLoaded, when app.js fills the identity box.
(function () {
  "use strict";

  const LINKS = [["index.html", { en: "Catalog", ru: "Каталог" }], ["operator.html", { en: "Operator", ru: "Оператор" }]];

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
  const lang = Holdfast.lang();
  for (const [href, text] of LINKS) {
    const anchor = link(href, text[lang] || text.en);
    if (href === here) anchor.setAttribute("aria-current", "page");
    nav.append(anchor);
  }
  header.append(link("index.html", "Holdfast"), nav);
  // The language switch: every page, remembered in this browser (app.js, setLang)
  const choose = document.createElement("select");
  choose.id = "language";
  choose.setAttribute("aria-label", lang === "ru" ? "Язык" : "Language");
  for (const [code, name] of Object.entries(Holdfast.LANGUAGES)) {
    const option = document.createElement("option");
    option.value = code;
    option.lang = code;
    option.textContent = name;
    option.selected = code === lang;
    choose.append(option);
  }
  choose.addEventListener("change", () => Holdfast.setLang(choose.value));
  header.append(choose);
  if (header.dataset.layout === "customer") {
    const who = document.createElement("div");
    who.className = "who";
    who.id = "who";
    header.append(who);
  }
})();
