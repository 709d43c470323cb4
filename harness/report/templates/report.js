/* tokconf report: progressive enhancement only. The page is complete without this
   script; it adds filters, opens a cell's divergences on click, and copy buttons.
   It never builds HTML from data: it reads data-* attributes and sets textContent. */
(function () {
  "use strict";
  var doc = document;
  var filters = doc.getElementById("filters");
  if (!filters) { return; }
  var selects = Array.prototype.slice.call(filters.querySelectorAll("select[data-filter]"));
  var shown = doc.getElementById("shown");
  function all(selector, root) { return Array.prototype.slice.call((root || doc).querySelectorAll(selector)); }

  function wanted() {
    var f = {};
    selects.forEach(function (s) { if (s.value !== "") { f[s.getAttribute("data-filter")] = s.value; } });
    return f;
  }
  function fits(el, f, keys) {
    return keys.every(function (k) { return !(k in f) || el.getAttribute("data-" + k) === f[k]; });
  }

  function apply() {
    var f = wanted();
    all("#matrix tbody tr").forEach(function (row) { row.hidden = !fits(row, f, ["adapter", "encoding"]); });
    all("#matrix [data-check]").forEach(function (c) { c.hidden = !fits(c, f, ["check"]); });
    all("#matrix td[data-status]").forEach(function (c) { c.classList.toggle("dim", !fits(c, f, ["status"])); });
    var total = 0, visible = 0;
    all("details.div").forEach(function (d) {
      total += 1;
      var ok = fits(d, f, ["adapter", "encoding", "check", "status"]);
      d.hidden = !ok;
      if (ok) { visible += 1; }
    });
    all("section.group").forEach(function (g) {
      g.hidden = all("details.div", g).every(function (d) { return d.hidden; });
    });
    all("#summary button[data-status]").forEach(function (b) {
      b.setAttribute("aria-pressed", f.status === b.getAttribute("data-status") ? "true" : "false");
    });
    shown.textContent = "showing " + visible + " of " + total + " divergence(s)";
  }

  function setFilter(name, value) {
    selects.forEach(function (s) { if (s.getAttribute("data-filter") === name) { s.value = value; } });
    apply();
  }

  selects.forEach(function (s) { s.addEventListener("change", apply); });
  doc.getElementById("reset").addEventListener("click", function () {
    selects.forEach(function (s) { s.value = ""; });
    apply();
  });
  doc.getElementById("expand").addEventListener("click", function () {
    all("details.div").forEach(function (d) { if (!d.hidden) { d.open = true; } });
  });
  doc.getElementById("collapse").addEventListener("click", function () {
    all("details.div").forEach(function (d) { d.open = false; });
  });
  all("#summary button[data-status]").forEach(function (b) {
    b.addEventListener("click", function () {
      var status = b.getAttribute("data-status");
      setFilter("status", wanted().status === status ? "" : status);
    });
  });

  // A matrix cell opens every divergence of its cell and scrolls to the group.
  all("#matrix a[data-group]").forEach(function (a) {
    a.addEventListener("click", function (event) {
      var group = doc.getElementById(a.getAttribute("data-group"));
      if (!group) { return; }
      event.preventDefault();
      all("section.group.target").forEach(function (g) { g.classList.remove("target"); });
      group.hidden = false;
      group.classList.add("target");
      all("details.div", group).forEach(function (d) { d.hidden = false; d.open = true; });
      group.scrollIntoView({ block: "start" });
      if (history.replaceState) { history.replaceState(null, "", "#" + group.id); }
    });
  });

  // Opening a link to a divergence (#d0001) from elsewhere opens it.
  function openHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id ? doc.getElementById(id) : null;
    while (el) {
      if (el.tagName === "DETAILS") { el.open = true; }
      el = el.parentElement;
    }
  }
  window.addEventListener("hashchange", openHash);

  all(".repro").forEach(function (box) {
    var button = box.querySelector("button.copy");
    var code = box.querySelector("code");
    if (!button || !code) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      var done = function () { button.textContent = "copied"; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(code.textContent).then(done, function () { select(code); });
      } else {
        select(code);
      }
    });
  });
  function select(node) {
    var range = doc.createRange();
    range.selectNodeContents(node);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  filters.hidden = false;
  openHash();
  apply();
}());
