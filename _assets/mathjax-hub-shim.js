// The ipywidgets HTML manager typesets widget labels with the MathJax 2 API
// (MathJax.Hub.Queue). This book serves MathJax 3, which has no Hub, so every widget
// on a static page raised "Cannot read properties of undefined (reading 'Queue')".
// Whatever object window.MathJax becomes (the configuration first, then MathJax 3
// itself), give it a Hub whose Queue hands the element to MathJax 3's typesetPromise.
(function () {
  function withHub(mj) {
    if (mj && typeof mj === "object" && !mj.Hub) {
      Object.defineProperty(mj, "Hub", {
        enumerable: false,  // invisible to MathJax 3's configuration parser
        value: {
          Queue: function (job) {
            var el = Array.isArray(job) ? job[2] : undefined;
            var mj3 = window.MathJax;
            if (el && mj3 && typeof mj3.typesetPromise === "function") {
              mj3.typesetPromise([el]).catch(function () {});
            }
          },
        },
      });
    }
    return mj;
  }
  var current = withHub(window.MathJax);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: function () { return current; },
    set: function (value) { current = withHub(value); },
  });
})();
