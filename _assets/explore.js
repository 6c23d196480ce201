// Static pages have no kernel. Each llmphys.book.explore block carries the library's output
// for every setting of its controls (computed when the chapter was executed); this script
// enables the controls and shows the stored output of the setting the reader picks.
(function () {
  function wire(root) {
    var data = JSON.parse(root.querySelector("script.llmphys-explore-data").textContent);
    var controls = Array.prototype.slice.call(root.querySelectorAll("[data-control]"));
    var out = root.querySelector(".llmphys-explore-output");
    function update() {
      var k = 0;
      controls.forEach(function (el) {
        var j = Number(el.getAttribute("data-control"));
        var i = Number(el.value);
        k = k * data.shape[j] + i;
        var label = root.querySelector('[data-label-for="' + j + '"]');
        if (label) { label.textContent = data.labels[j][i]; }
      });
      out.textContent = data.texts[data.index[k]];
    }
    controls.forEach(function (el) {
      el.disabled = false;
      el.addEventListener("input", update);
      el.addEventListener("change", update);
    });
    root.classList.add("llmphys-explore-live");
  }
  function init() {
    document.querySelectorAll(".llmphys-explore").forEach(wire);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
