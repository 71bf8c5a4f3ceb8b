// Filters for the requirement matrix. State lives in the URL fragment
// (#area=watch&level=MUST&outcome=fail&q=text) so a filtered view can be linked.
(function () {
  "use strict";
  var keys = ["area", "level", "outcome", "q"];
  function el(id) { return document.getElementById(id); }
  function all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
  function control(k) { return el("f-" + k); }

  function fragmentParams() {
    return new URLSearchParams(location.hash.replace(/^#/, "") || location.search.replace(/^\?/, ""));
  }

  // expandFailures opens (or closes) every failure: matrix detail rows of
  // visible requirements and the failure list's <details>.
  function expandFailures(open) {
    all("#matrix [data-toggle]").forEach(function (b) {
      var d = el(b.getAttribute("data-toggle"));
      var row = b.closest("tr");
      if (!d) { return; }
      d.hidden = !(open && row && !row.hidden);
      b.setAttribute("aria-expanded", String(!d.hidden));
    });
    all("details.failure").forEach(function (d) { d.open = open; });
  }

  function readFragment() {
    var params = fragmentParams();
    keys.forEach(function (k) {
      var c = control(k);
      if (!c) { return; }
      var v = params.get(k) || "";
      if (c.tagName === "SELECT" && v && !Array.prototype.some.call(c.options, function (o) { return o.value === v; })) { v = ""; }
      c.value = v;
    });
  }

  function writeFragment() {
    var params = new URLSearchParams();
    keys.forEach(function (k) { var c = control(k); if (c && c.value) { params.set(k, c.value); } });
    var frag = params.toString();
    try { history.replaceState(null, "", frag ? "#" + frag : location.pathname + location.search); } catch (e) { /* file: URLs in some browsers */ }
  }

  function apply() {
    var area = control("area").value, level = control("level").value, outcome = control("outcome").value;
    var q = control("q").value.trim().toLowerCase();
    var shown = 0;
    all("#matrix tr.req").forEach(function (tr) {
      var ok = (!area || tr.dataset.area === area) &&
        (!level || tr.dataset.level === level) &&
        (!outcome || tr.dataset.outcomes.split(" ").indexOf(outcome) >= 0) &&
        (!q || tr.dataset.search.indexOf(q) >= 0);
      tr.hidden = !ok;
      if (ok) { shown++; }
      for (var n = tr.nextElementSibling; n && n.classList.contains("detail"); n = n.nextElementSibling) {
        if (!ok) { n.hidden = true; }
      }
    });
    all("#matrix tr.area-head").forEach(function (h) {
      h.hidden = !all("#matrix tr.req").some(function (r) { return r.dataset.area === h.dataset.area && !r.hidden; });
    });
    el("shown").textContent = String(shown);
    var active = keys.filter(function (k) { return control(k).value; }).map(function (k) { return k + "=" + control(k).value; });
    document.body.setAttribute("data-filter", active.join("&"));
  }

  keys.forEach(function (k) {
    control(k).addEventListener(k === "q" ? "input" : "change", function () { apply(); writeFragment(); });
  });
  el("f-expand").addEventListener("click", function () {
    var open = this.getAttribute("aria-pressed") !== "true";
    this.setAttribute("aria-pressed", String(open));
    this.textContent = open ? "Collapse failures" : "Expand failures";
    expandFailures(open);
  });
  el("f-clear").addEventListener("click", function () {
    keys.forEach(function (k) { control(k).value = ""; });
    apply(); writeFragment();
  });
  document.addEventListener("click", function (e) {
    var b = e.target.closest("[data-toggle]");
    if (!b) { return; }
    var d = el(b.getAttribute("data-toggle"));
    if (!d) { return; }
    d.hidden = !d.hidden;
    b.setAttribute("aria-expanded", String(!d.hidden));
  });
  // A link to a collapsed failure (from the coverage tables) opens it.
  function openTarget() {
    var t = location.hash.length > 1 && document.getElementById(location.hash.slice(1));
    if (t && t.tagName === "DETAILS") { t.open = true; }
  }
  window.addEventListener("hashchange", function () { readFragment(); apply(); openTarget(); });
  // Quotes of Chinese documents are shown in English with the original
  // beside it; where no installed font has CJK glyphs the original would be
  // empty boxes, so it is hidden (the source link leads to it). Two
  // different Han characters drawn the same means both are the missing-glyph box.
  function cjkRenders() {
    var c = document.createElement("canvas");
    c.width = 40; c.height = 40;
    var g = c.getContext && c.getContext("2d");
    if (!g) { return true; }
    function pixels(ch) {
      g.clearRect(0, 0, 40, 40);
      g.font = "32px sans-serif";
      g.fillText(ch, 2, 32);
      return Array.prototype.join.call(g.getImageData(0, 0, 40, 40).data, ",");
    }
    return pixels("\u8D44") !== pixels("\u7248");
  }
  var cjk = cjkRenders();
  if (!cjk) { document.documentElement.classList.add("no-cjk"); }
  document.body.setAttribute("data-cjk", cjk ? "rendered" : "missing");

  readFragment();
  apply();
  openTarget();
  // Where the failures start, for the browser test: on the first screen.
  var failures = el("failures");
  if (failures) {
    document.body.setAttribute("data-failures-top", String(Math.round(failures.getBoundingClientRect().top + window.scrollY)));
    document.body.setAttribute("data-viewport-height", String(window.innerHeight));
  }
  if (fragmentParams().get("expand") === "1") {
    el("f-expand").click();
  }
  document.body.setAttribute("data-ready", "true");
})();
