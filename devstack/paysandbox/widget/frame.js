"use strict";
// The stand-in challenge inside its frame: one button; pressing it asks the sandbox for a token
// (POST /smartcaptcha/token, what the real service gives a person who solved its challenge) and
// hands it to the page that embeds the frame, on that page's origin only.
(() => {
  const query = new URLSearchParams(location.search);
  const button = document.getElementById("solve");
  const state = document.getElementById("state");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const answer = await fetch("/smartcaptcha/token", { method: "POST" });
      const { token } = await answer.json();
      parent.postMessage({ type: "sandbox-smartcaptcha", widget: Number(query.get("widget")), token },
                         query.get("parent"));
      button.setAttribute("aria-pressed", "true");
      state.textContent = state.dataset.done;
    } catch (_) {
      button.disabled = false;
      state.textContent = state.dataset.failed;
    }
  });
})();
