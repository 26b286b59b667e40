// kweb example site: a little life for the home page.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const servedAt = document.getElementById("served-at");
  if (servedAt) {
    servedAt.textContent = new Date().toUTCString();
  }

  const count = document.getElementById("feature-count");
  if (count) {
    fetch("/data/features.json")
      .then((response) => {
        if (!response.ok) {
          throw new Error(`HTTP ${response.status}`);
        }
        return response.json();
      })
      .then((data) => {
        count.textContent = `It knows ${data.features.length} tricks (from /data/features.json).`;
      })
      .catch((err) => {
        count.textContent = `(could not load features.json: ${err.message})`;
      });
  }
});
