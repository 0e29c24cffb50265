"use strict";
// The local stack's stand-in of Yandex SmartCaptcha's widget script (<origin>/captcha.js), served by
// the payment sandbox. Same shape as the real one where the pages touch it: window.smartCaptcha
// with render(container, {sitekey, hl, callback}) -> widget id, reset(id) and getResponse(id);
// the challenge is drawn in a frame of the widget's own origin (as the real widget draws its own),
// whose "solved" token reaches the page by postMessage, the callback and a hidden smart-token input.
(() => {
  const origin = new URL(document.currentScript.src).origin;
  const widgets = new Map();
  let next = 0;

  window.addEventListener("message", (event) => {
    if (event.origin !== origin || !event.data || event.data.type !== "sandbox-smartcaptcha") return;
    const widget = widgets.get(event.data.widget);
    if (!widget || typeof event.data.token !== "string") return;
    widget.token = event.data.token;
    widget.input.value = widget.token;
    if (typeof widget.callback === "function") widget.callback(widget.token);
  });

  function frameUrl(id, options) {
    const query = new URLSearchParams({ sitekey: options.sitekey || "", hl: options.hl || "en",
                                        widget: String(id), parent: location.origin, n: String(Date.now()) });
    return `${origin}/smartcaptcha/frame?${query}`;
  }

  window.smartCaptcha = {
    render(container, options = {}) {
      const box = typeof container === "string" ? document.getElementById(container) : container;
      const id = next++;
      const frame = document.createElement("iframe");
      frame.src = frameUrl(id, options);
      frame.title = options.hl === "ru" ? "Проверка, что вы человек" : "Check that you are a person";
      frame.width = "300";
      frame.height = "64";
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = "smart-token";
      box.append(frame, input);
      widgets.set(id, { frame, input, options, callback: options.callback, token: "" });
      return id;
    },
    reset(id) {
      const widget = widgets.get(id);
      if (!widget) return;
      widget.token = "";
      widget.input.value = "";
      widget.frame.src = frameUrl(id, widget.options);
    },
    getResponse(id) {
      const widget = widgets.get(id);
      return widget ? widget.token : "";
    },
  };
})();
