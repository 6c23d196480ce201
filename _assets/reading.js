// Reading on a phone (issue 32, item 34). At 390 px a 6.4-inch chart is drawn 342 px wide and
// its labels 4-6 px tall; wide tables and display equations run past the screen's edge.
//
// - Every figure of the article (a <figure> or a cell's output image) is a link to its image;
//   a tap opens it at its full pixel size in an overlay that scrolls both ways (tap, Escape or
//   the Close button shuts it; a new tab still opens from a long press or a middle click).
// - Every table container, display equation and code block that is wider than the column scrolls sideways
//   (CSS overflow-x: auto) and gets the classes llmphys-scrolls, llmphys-more-right and
//   llmphys-more-left while content hides on that side: reading.css fades that edge and shows
//   a scrollbar, so the reader sees there is more.
(function () {
  "use strict";

  // ---- figures: tap to see full size ----------------------------------------------------
  function figureImages() {
    return Array.prototype.filter.call(
      document.querySelectorAll("article.bd-article img"),
      function (img) { return img.closest("figure, div.cell_output") && !img.closest(".llmphys-zoom"); });
  }

  var overlay = null, opener = null;

  function close() {
    if (!overlay) return;
    overlay.remove();
    overlay = null;
    document.documentElement.classList.remove("llmphys-zoom-open");
    if (opener) opener.focus();
  }

  function open(link, img) {
    close();
    opener = link;
    overlay = document.createElement("div");
    overlay.className = "llmphys-zoom";
    overlay.setAttribute("role", "dialog");
    overlay.setAttribute("aria-modal", "true");
    overlay.setAttribute("aria-label", "The figure at full size");
    var button = document.createElement("button");
    button.type = "button";
    button.className = "llmphys-zoom-close";
    button.textContent = "Close";
    var big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.alt;
    // its pixels one to one with CSS pixels: a 938-px chart is 938 px wide, labels at full size
    big.style.width = (img.naturalWidth || 1000) + "px";
    overlay.appendChild(button);
    overlay.appendChild(big);
    overlay.addEventListener("click", function (e) {
      if (e.target === overlay || e.target === button || e.target === big) close();
    });
    document.body.appendChild(overlay);
    document.documentElement.classList.add("llmphys-zoom-open");
    button.focus();
  }

  function wireFigures() {
    figureImages().forEach(function (img) {
      var link = img.closest("a");
      if (!link) {
        link = document.createElement("a");
        img.parentNode.insertBefore(link, img);
        link.appendChild(img);
      }
      link.href = img.getAttribute("src");
      link.classList.add("llmphys-zoom-link");
      link.title = "Tap to see the figure at full size";
      link.addEventListener("click", function (e) {
        if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
        e.preventDefault();
        open(link, img);
      });
    });
    document.addEventListener("keydown", function (e) { if (e.key === "Escape") close(); });
  }

  // ---- wide tables and equations: a visible cue that they scroll -----------------------
  var WIDE = "article.bd-article .pst-scrollable-table-container, " +
             "article.bd-article div.cell_output table, " +
             "article.bd-article mjx-container[display=\"true\"], " +
             "article.bd-article div.highlight > pre";  // code scrolls too: the same cue

  function scrollers() {
    var found = [];
    document.querySelectorAll(WIDE).forEach(function (el) {
      // a bare output table scrolls in its own wrapper; the theme's container already does
      if (el.tagName === "TABLE") {
        if (el.closest(".pst-scrollable-table-container, .llmphys-table-scroll")) return;
        var wrap = document.createElement("div");
        wrap.className = "llmphys-table-scroll";
        el.parentNode.insertBefore(wrap, el);
        wrap.appendChild(el);
        el = wrap;
      }
      found.push(el);
    });
    return found;
  }

  function mark(el) {
    var wide = el.scrollWidth > el.clientWidth + 1;
    el.classList.toggle("llmphys-scrolls", wide);
    el.classList.toggle("llmphys-more-right", wide && el.scrollLeft + el.clientWidth < el.scrollWidth - 1);
    el.classList.toggle("llmphys-more-left", wide && el.scrollLeft > 1);
    if (wide && !el.hasAttribute("tabindex")) {
      el.setAttribute("tabindex", "0");  // a keyboard can scroll it too
    }
  }

  var wired = [];

  function wireScrollers() {
    scrollers().forEach(function (el) {
      if (wired.indexOf(el) >= 0) return;
      wired.push(el);
      el.addEventListener("scroll", function () { mark(el); }, { passive: true });
    });
    wired.forEach(mark);
  }

  function start() {
    wireFigures();
    wireScrollers();
    window.addEventListener("resize", wireScrollers);
    // MathJax typesets after the page has loaded: equations have their width only then
    // (its startup.js, loaded async, has made startup.promise by the load event)
    window.addEventListener("load", function () {
      var mj = window.MathJax;
      if (mj && mj.startup && mj.startup.promise) {
        mj.startup.promise.then(wireScrollers);
      } else {
        wireScrollers();
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
