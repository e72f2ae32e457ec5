(function () {
  "use strict";
  var table = document.getElementById("rules-table");
  var filter = document.getElementById("filter");
  var status = document.getElementById("status-filter");
  var shown = document.getElementById("shown");
  // The rules come in one table per status; a status with no row shown is hidden.
  function apply() {
    if (!table) return;
    var q = (filter && filter.value || "").toLowerCase();
    var st = status && status.value || "";
    var rows = table.querySelectorAll("tbody tr"), n = 0;
    for (var i = 0; i < rows.length; i++) {
      var ok = (!q || rows[i].textContent.toLowerCase().indexOf(q) >= 0) && (!st || rows[i].getAttribute("data-status") === st);
      rows[i].hidden = !ok;
      if (ok) n++;
    }
    Array.prototype.forEach.call(table.querySelectorAll(".status-group"), function (g) {
      g.hidden = !g.querySelector("tbody tr:not([hidden])");
    });
    if (shown) shown.textContent = n + " of " + rows.length + " shown";
  }
  if (filter) filter.addEventListener("input", apply);
  if (status) status.addEventListener("change", apply);
  apply();

  function key(cell, kind) {
    var k = cell.getAttribute("data-key");
    if (k !== null) return parseFloat(k);
    var t = cell.textContent.trim();
    return kind === "num" ? parseFloat(t) || 0 : t.toLowerCase();
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (t) {
    var ths = t.tHead.rows[0].cells;
    Array.prototype.forEach.call(ths, function (th, col) {
      th.addEventListener("click", function () {
        var kind = th.getAttribute("data-sort") || "text";
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(ths, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = t.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col], kind), y = key(b.cells[col], kind);
          var c = x < y ? -1 : x > y ? 1 : 0;
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  var dl = document.getElementById("download-replay");
  if (dl) dl.addEventListener("click", function () {
    var text = document.getElementById("replay").textContent;
    var a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([text], { type: "text/x-shellscript" }));
    a.download = "replay.sh";
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 0);
  });

  // Printed, every fold is open; afterwards the reader's choice comes back.
  var closed = [];
  window.addEventListener("beforeprint", function () {
    closed = Array.prototype.filter.call(document.querySelectorAll("details"), function (d) { return !d.open; });
    closed.forEach(function (d) { d.open = true; });
  });
  window.addEventListener("afterprint", function () {
    closed.forEach(function (d) { d.open = false; });
    closed = [];
  });
})();
